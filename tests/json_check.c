/* json_check.c - a strict JSON validator for the CLI tests (RFC 8259: the
 * grammar, escapes, numbers, and UTF-8 without overlongs or surrogates), so
 * the tests need no python. json_check FILE checks one document;
 * json_check --lines FILE checks that every line is one document and
 * prints how many lines there were. Exit 0 valid, 1 not (says where). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser { const unsigned char *s, *end; const char *why; } parser;

static void ws(parser *p) { while (p->s < p->end && strchr(" \t\r\n", *p->s) && *p->s) p->s++; }
static int fail(parser *p, const char *why) { if (!p->why) p->why = why; return 0; }
static int value(parser *p, int depth);

static int utf8(parser *p)
{
    unsigned c = *p->s;
    int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    if (c < 0xc2 || c > 0xf4 || p->end - p->s < n) return fail(p, "invalid UTF-8");
    for (int i = 1; i < n; i++)
        if ((p->s[i] & 0xc0) != 0x80) return fail(p, "invalid UTF-8");
    if ((c == 0xe0 && p->s[1] < 0xa0) || (c == 0xed && p->s[1] >= 0xa0) || (c == 0xf0 && p->s[1] < 0x90) ||
        (c == 0xf4 && p->s[1] >= 0x90))
        return fail(p, "invalid UTF-8");
    p->s += n;
    return 1;
}

static int string(parser *p)
{
    p->s++; /* the quote */
    while (p->s < p->end && *p->s != '"') {
        if (*p->s < 0x20) return fail(p, "control character in a string");
        if (*p->s == '\\') {
            p->s++;
            if (p->s >= p->end) return fail(p, "cut escape");
            if (*p->s == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (p->s + i >= p->end || !strchr("0123456789abcdefABCDEF", p->s[i]) || !p->s[i])
                        return fail(p, "bad \\u escape");
                p->s += 5;
            } else if (*p->s && strchr("\"\\/bfnrt", *p->s)) p->s++;
            else return fail(p, "bad escape");
        } else if (*p->s >= 0x80) {
            if (!utf8(p)) return 0;
        } else p->s++;
    }
    if (p->s >= p->end) return fail(p, "unterminated string");
    p->s++;
    return 1;
}

static int digits(parser *p)
{
    const unsigned char *start = p->s;
    while (p->s < p->end && *p->s >= '0' && *p->s <= '9') p->s++;
    return p->s > start;
}

static int number(parser *p)
{
    if (*p->s == '-') p->s++;
    if (p->s < p->end && *p->s == '0') p->s++;
    else if (!digits(p)) return fail(p, "bad number");
    if (p->s < p->end && *p->s == '.') { p->s++; if (!digits(p)) return fail(p, "bad fraction"); }
    if (p->s < p->end && (*p->s == 'e' || *p->s == 'E')) {
        p->s++;
        if (p->s < p->end && (*p->s == '+' || *p->s == '-')) p->s++;
        if (!digits(p)) return fail(p, "bad exponent");
    }
    return 1;
}

static int word(parser *p, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, w, n)) return fail(p, "unexpected character");
    p->s += n;
    return 1;
}

static int container(parser *p, int depth, char close)
{
    p->s++;
    ws(p);
    if (p->s < p->end && *p->s == close) { p->s++; return 1; }
    for (;;) {
        ws(p);
        if (close == '}') {
            if (p->s >= p->end || *p->s != '"' || !string(p)) return fail(p, "expected a key");
            ws(p);
            if (p->s >= p->end || *p->s++ != ':') return fail(p, "expected ':'");
        }
        if (!value(p, depth + 1)) return 0;
        ws(p);
        if (p->s < p->end && *p->s == ',') { p->s++; continue; }
        if (p->s < p->end && *p->s == close) { p->s++; return 1; }
        return fail(p, "expected ',' or the end");
    }
}

static int value(parser *p, int depth)
{
    ws(p);
    if (depth > 64) return fail(p, "nested too deeply");
    if (p->s >= p->end) return fail(p, "unexpected end");
    switch (*p->s) {
    case '{': return container(p, depth, '}');
    case '[': return container(p, depth, ']');
    case '"': return string(p);
    case 't': return word(p, "true");
    case 'f': return word(p, "false");
    case 'n': return word(p, "null");
    default: return (*p->s == '-' || (*p->s >= '0' && *p->s <= '9')) ? number(p) : fail(p, "unexpected character");
    }
}

static int document(const unsigned char *s, size_t n, const char *name, long line)
{
    parser p = { s, s + n, NULL };
    if (value(&p, 0)) { ws(&p); if (p.s != p.end) fail(&p, "text after the value"); }
    if (!p.why) return 1;
    fprintf(stderr, "%s:%s%ld: %s at byte %ld\n", name, line ? "line " : "", line ? line : 0, p.why, (long)(p.s - s));
    return 0;
}

int main(int argc, char **argv)
{
    int lines = argc == 3 && !strcmp(argv[1], "--lines");
    if (argc != 2 + lines) { fprintf(stderr, "usage: json_check [--lines] FILE\n"); return 2; }
    FILE *f = fopen(argv[1 + lines], "rb");
    if (!f) { perror(argv[1 + lines]); return 1; }
    static unsigned char buf[1 << 24];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    if (!lines) return document(buf, n, argv[1], 0) ? 0 : 1;
    long count = 0;
    int ok = 1;
    for (size_t at = 0; at < n;) {
        unsigned char *nl = memchr(buf + at, '\n', n - at);
        size_t stop = nl ? (size_t)(nl - buf) : n;
        ok &= document(buf + at, stop - at, argv[2], ++count);
        at = stop + 1;
    }
    printf("%ld\n", count);
    return ok ? 0 : 1;
}

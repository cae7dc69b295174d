/* outname.c - `run --name TEMPLATE`: where each output goes below OUTDIR.
 *
 * The template is checked once before any work ({dir}, {stem}, {ext}, {n}
 * and {n:W} only; not absolute and no ".." component, so every output
 * stays inside OUTDIR; the names it gives have an extension),
 * then expanded per input. Also: which formats this build can write, so a
 * run refuses --format bmp without stb before decoding anything. */
#include "tilestream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ts_format_can_write(ts_format f)
{
    switch (f) {
    case TS_FMT_PNG: case TS_FMT_JPEG: return 1;
    case TS_FMT_BMP: case TS_FMT_TGA: case TS_FMT_HDR:
#ifdef TS_HAVE_STB
        return 1;
#else
        return 0;
#endif
    default: return 0;
    }
}

/* {n:W} pads to at most this many digits: more than any count of files
 * needs (an int has 10), and what the number's buffer holds. */
enum { MAX_WIDTH = 20 };

/* The field at s (just past '{'): its kind and, for {n:W}, the width.
 * Returns the length up to and including '}', or 0 when it is not one. */
static size_t parse_field(const char *s, char *kind, int *width)
{
    static const char *const names[] = { "dir", "stem", "ext", "n" };
    const char *close = strchr(s, '}');
    if (!close) return 0;
    size_t len = (size_t)(close - s);
    *width = 0;
    for (int i = 0; i < 4; i++) {
        size_t nl = strlen(names[i]);
        if (len == nl && !strncmp(s, names[i], nl)) { *kind = names[i][0]; return len + 1; }
    }
    if (len >= 3 && len <= 4 && s[0] == 'n' && s[1] == ':' && s[2] >= '1' && s[2] <= '9') {
        if (len == 4 && (s[3] < '0' || s[3] > '9')) return 0;
        *kind = 'n';
        *width = atoi(s + 2);
        return *width <= MAX_WIDTH ? len + 1 : 0;
    }
    return 0;
}

ts_status ts_outname_check(const char *tmpl, ts_err *err)
{
    if (!tmpl || !*tmpl) return ts_err_set(err, TS_E_ARG, "--name: the template is empty");
    for (const char *p = tmpl; *p; p++) {
        if (*p != '{') continue;
        char kind;
        int width;
        size_t len = parse_field(p + 1, &kind, &width);
        if (!len)
            return ts_err_set(err, TS_E_ARG,
                              "--name %s: '%.*s' is not a field ({dir}, {stem}, {ext}, {n}, {n:W} with W from 1 to %d)",
                              tmpl, (int)(strchr(p, '}') ? strchr(p, '}') - p + 1 : (long)strlen(p)), p, MAX_WIDTH);
        p += len;
    }
    if (tmpl[0] == '/')
        return ts_err_set(err, TS_E_ARG, "--name %s: the name is absolute; it must stay below the output folder (-o)", tmpl);
    char probe[4096];
    ts_err e;
    if (ts_outname_make(tmpl, "d/s.png", TS_FMT_PNG, 1, probe, sizeof probe, &e) != TS_OK)
        return ts_err_set(err, e.status, "%s", e.msg);
    if (!*probe) return ts_err_set(err, TS_E_ARG, "--name %s: gives an empty name", tmpl);
    const char *slash = strrchr(probe, '/'), *base = slash ? slash + 1 : probe, *dot = strrchr(base, '.');
    if (!dot || dot == base || !dot[1])
        return ts_err_set(err, TS_E_ARG, "--name %s: the names have no extension (end it with .{ext}, or .png, .jpg ...)",
                          tmpl);
    return TS_OK;
}

/* Append text to out, failing when it does not fit. */
static int put(char *out, size_t n_out, size_t *at, const char *text, size_t len)
{
    if (*at + len >= n_out) return 0;
    memcpy(out + *at, text, len);
    *at += len;
    out[*at] = '\0';
    return 1;
}

/* Drop empty components (a leading '/', "a//b" from an empty {dir}) and
 * "." ones; refuse "..". */
static int tidy_components(char *path)
{
    char *w = path;
    const char *r = path;
    while (*r) {
        size_t len = strcspn(r, "/");
        if (len == 2 && r[0] == '.' && r[1] == '.') return 0;
        if (len > 0 && !(len == 1 && r[0] == '.')) {
            if (w != path) *w++ = '/';
            memmove(w, r, len);
            w += len;
        }
        r += len;
        if (*r == '/') r++;
    }
    *w = '\0';
    return 1;
}

ts_status ts_outname_make(const char *tmpl, const char *rel, ts_format f, int n, char *out, size_t n_out,
                          ts_err *err)
{
    const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
    const char *dot = strrchr(base, '.');
    size_t dir_len = slash ? (size_t)(slash - rel) : 0;
    size_t stem_len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    const char *ext = ts_format_extension(f);
    if (ext && *ext == '.') ext++;
    size_t at = 0;
    int ok = n_out > 0;
    if (ok) out[0] = '\0';
    for (const char *p = tmpl; *p && ok; p++) {
        char kind;
        int width;
        size_t len = *p == '{' ? parse_field(p + 1, &kind, &width) : 0;
        if (!len) { ok = put(out, n_out, &at, p, 1); continue; }
        if (kind == 'd') ok = put(out, n_out, &at, rel, dir_len);
        else if (kind == 's') ok = put(out, n_out, &at, base, stem_len);
        else if (kind == 'e') ok = put(out, n_out, &at, ext ? ext : "", ext ? strlen(ext) : 0);
        else {
            char num[MAX_WIDTH + 16];
            int w = snprintf(num, sizeof num, "%0*d", width, n);
            ok = w > 0 && w < (int)sizeof num && put(out, n_out, &at, num, (size_t)w);
        }
        p += len;
    }
    if (!ok) return ts_err_set(err, TS_E_ARG, "%s: --name %s: the name is too long", rel, tmpl);
    if (!tidy_components(out))
        return ts_err_set(err, TS_E_ARG, "--name %s: a '..' would leave the output folder", tmpl);
    return TS_OK;
}

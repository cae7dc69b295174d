/* bench_text.c - the benchmarks' output lines and growable JSON text
 * (bench_text.h). */
#include "bench_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bench_say(const ts_bench_opts *opts, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    if (!opts || !opts->line) return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    opts->line(opts->ctx, line);
}

int bench_wants(const ts_bench_opts *opts, const char *op)
{
    return !opts->only || !opts->only[0] || strstr(op, opts->only) != NULL;
}

void bench_text_add(bench_text *t, const char *fmt, ...)
{
    va_list ap;
    if (t->failed) return;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) { t->failed = 1; return; }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 4096;
        while (cap < t->len + (size_t)n + 1) cap *= 2;
        char *s = realloc(t->s, cap);
        if (!s) { t->failed = 1; return; }
        t->s = s;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

void bench_text_add_string(bench_text *t, const char *s)
{
    bench_text_add(t, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') bench_text_add(t, "\\%c", ch);
        else if (ch < 0x20) bench_text_add(t, "\\u%04x", ch);
        else bench_text_add(t, "%c", ch);
    }
    bench_text_add(t, "\"");
}

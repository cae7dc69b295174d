/* bench_text.h - (internal to bench/) the benchmarks' text: their output
 * lines, which lines a run wants, and a growable string for their JSON
 * reports. */
#ifndef TS_BENCH_TEXT_H
#define TS_BENCH_TEXT_H

#include "bench.h"

#include <stddef.h>

/* One output line, printf-style (up to 511 characters), to opts->line;
 * nothing when there are no opts or no line function. */
void bench_say(const ts_bench_opts *opts, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* 1 when the line of op is to run: opts->only is unset, empty, or part of op. */
int bench_wants(const ts_bench_opts *opts, const char *op);

typedef struct bench_text {
    char *s;
    size_t len, cap;
    int failed;  /* an allocation failed: the text is incomplete */
} bench_text;

/* Append printf-style; after a failed allocation nothing more is added. */
void bench_text_add(bench_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Append s as a JSON string literal (names and error messages). */
void bench_text_add_string(bench_text *t, const char *s);

#endif

/* bench_text.h - (internal to bench/) a growable string for the benchmarks'
 * JSON reports. */
#ifndef TS_BENCH_TEXT_H
#define TS_BENCH_TEXT_H

#include <stddef.h>

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

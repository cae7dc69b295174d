/* bench.h - `tilestream bench`: the benchmarks library (bench/, not part of
 * libtilestream and not installed), called by the CLI's bench command.
 * Output lines go to opts->line; a JSON object with the same figures is
 * returned in *json (malloc'd) when json is not NULL. */
#ifndef TS_BENCH_H
#define TS_BENCH_H

#include "tilestream.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ts_bench_opts {
    int w, h;             /* image size; 0 = 8K (7680 x 4320) for kernels */
    int reps;             /* timed repetitions per line; 0 = default */
    const char *only;     /* run only lines whose op name contains this; NULL = all */
    ts_line_fn line;
    void *ctx;
} ts_bench_opts;
ts_status ts_bench_kernels(const ts_bench_opts *opts, char **json, ts_err *err);  /* bench/bench_kernels_cuda.c */
ts_status ts_bench_overlap(const ts_bench_opts *opts, char **json, ts_err *err);  /* bench/bench_overlap_cuda.c */
/* The fast CPU ops on one and on `threads` threads (0 = every core) against
 * memcpy; the image is RGB8, 6000 x 4000 unless opts say. */
ts_status ts_bench_cpu(const ts_bench_opts *opts, int threads, char **json, ts_err *err);  /* bench/bench_cpu.c */

#ifdef __cplusplus
}
#endif
#endif

/* bench_npp.h - (internal) what `tilestream bench kernels` shares with its
 * NPP comparison (bench_npp.c, built only when NPP is found): the device
 * buffers every line works on, and the call that times one line. */
#ifndef TS_BENCH_NPP_H
#define TS_BENCH_NPP_H

#include <stddef.h>

enum { TS_BENCH_BUFFERS = 3 };  /* inputs rotated so that L2 does not serve them */

/* An RGBA8 w x h input in several copies, and room for every output. */
typedef struct ts_bench_io {
    int w, h;
    unsigned char *in[TS_BENCH_BUFFERS];
    size_t in_pitch;
    unsigned char *out;   /* 2w x 2h pixels (resize up) */
    size_t out_pitch;
    unsigned char *tmp;   /* w x h pixels: between the passes of a two-pass filter */
    size_t tmp_pitch;
    void *stream;         /* cudaStream_t */
} ts_bench_io;

/* Enqueue one run on io->stream reading io->in[buf]. Returns 0, or a
 * non-zero code with a one-line reason in msg. */
typedef int (*ts_bench_launch)(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len);

typedef struct ts_bench ts_bench;

/* Time one line (unless opts->only filters out op) and report it: bytes
 * is what one run reads plus writes, counted once; out_px the output
 * pixels of one run. */
void ts_bench_line(ts_bench *b, const char *op, const char *variant, double bytes, double out_px,
                   ts_bench_launch launch, void *ctx);
/* 0 when opts->only filters op out: skip the set-up too. */
int ts_bench_wants(const ts_bench *b, const char *op);
/* A line that could not run, with its reason. */
void ts_bench_fail(ts_bench *b, const char *op, const char *variant, const char *why);

/* NPP's lines for op ("transpose", "matrix", "gauss5", "gauss15",
 * "conv5x5", "resize-up", "resize-down"), after the kernels' own
 * (bench_npp.c; without NPP, nothing). */
void ts_bench_npp(ts_bench *b, const ts_bench_io *io, const char *op);

#endif

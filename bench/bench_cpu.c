/* bench_cpu.c - `tilestream bench cpu`: the fast CPU ops (kernels/<family>/cpu_*.c)
 * on one large RGB8 image, on one thread and on all of them, next to
 * memcpy of the same buffer on as many threads: the CPU's copy bound.
 *
 * Method as in `bench kernels`: random data, a warm-up run, then the median
 * of `reps` runs (wall clock). On one thread the median CPU time of the
 * calling thread is reported too ("cpu ms", and "% cpu": GB/s by CPU time
 * against memcpy's by CPU time): on a shared machine the wall clock also
 * counts the time other processes held the core, the CPU time does not.
 * Work is cut into tiles of output as the CPU executor cuts an image
 * (ts_cpu_auto_tile), run on a pool of the given threads.
 * Bytes are what an op must move at least: each input pixel read once and
 * each output pixel written once; "% copy" compares GB/s with memcpy's on
 * the same number of threads. MP/s counts output pixels. */
#include "bench_text.h"
#include "bench.h"
#include "pool.h"
#include "tilestream.h"
#include "trace_internal.h"
#include "tsk_cpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { CB_DEFAULT_REPS = 5, CB_C = 3 };

typedef struct cpu_bench {
    const ts_bench_opts *opts;
    int w, h, reps, threads;
    ts_pool *pool;            /* `threads` threads */
    unsigned char *in, *out;  /* in: w x h RGB8; out: room for the largest output */
    size_t out_bytes;
    double copy_gbps[2];      /* memcpy on 1 thread, on all */
    double copy_cpu_gbps;     /* memcpy on 1 thread, by CPU time */
    double *times, *cpu_times;
    double cpu_ms;            /* of the last time_work on the calling thread, else 0 */
    bench_text json;
    int lines;
} cpu_bench;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One timed piece of work: n tasks on the pool (or the calling thread). */
typedef struct cb_work {
    ts_task_fn task;
    void *ctx;
    int n;
    ts_pool *pool;
} cb_work;

static double thread_cpu_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Warm up once, then the median of reps runs, in ms; without a pool the
 * work runs on this thread, and b->cpu_ms is its median CPU time. */
static double time_work(cpu_bench *b, const cb_work *wk)
{
    ts_pool_run(wk->pool, wk->n, wk->task, wk->ctx);
    for (int r = 0; r < b->reps; r++) {
        double t0 = ts_now(), c0 = thread_cpu_s();
        ts_pool_run(wk->pool, wk->n, wk->task, wk->ctx);
        b->cpu_times[r] = (thread_cpu_s() - c0) * 1e3;
        b->times[r] = (ts_now() - t0) * 1e3;
    }
    b->cpu_ms = wk->pool ? 0.0 : median(b->cpu_times, b->reps);
    return median(b->times, b->reps);
}

static void json_line(cpu_bench *b, const char *op, const char *variant, int threads, double ms, double gbps,
                      double mpps, double pct)
{
    bench_text_add(&b->json, "%s\n    {\"op\": \"%s\", \"version\": \"%s\", \"threads\": %d, \"ms\": %.4f, \"gbps\": %.3f, "
           "\"mpps\": %.2f, \"pct_copy\": %.2f", b->lines++ ? "," : "", op, variant, threads, ms, gbps, mpps, pct);
    if (b->cpu_ms > 0) {
        double cpu_gbps = gbps * ms / b->cpu_ms;
        bench_text_add(&b->json, ", \"cpu_ms\": %.4f, \"cpu_mpps\": %.2f, \"cpu_pct_copy\": %.2f", b->cpu_ms,
                       mpps * ms / b->cpu_ms, b->copy_cpu_gbps > 0 ? 100.0 * cpu_gbps / b->copy_cpu_gbps : 100.0);
    }
    bench_text_add(&b->json, "}");
}

/* b->cpu_ms is that of the same runs (0: not measured, several threads). */
static void report(cpu_bench *b, const char *op, const char *variant, int threads, double ms, double bytes,
                   double out_px)
{
    double gbps = bytes / (ms * 1e6), mpps = out_px / (ms * 1e3);
    double copy = b->copy_gbps[threads > 1];
    double pct = copy > 0 ? 100.0 * gbps / copy : 100.0;
    if (b->cpu_ms > 0) {
        double cpu_gbps = bytes / (b->cpu_ms * 1e6);
        bench_say(b->opts, "%-12s %-66s %9.3f %9.2f %10.1f %7.1f %9.3f %10.1f %7.1f", op, variant, ms, gbps, mpps, pct,
                  b->cpu_ms, out_px / (b->cpu_ms * 1e3),
                  b->copy_cpu_gbps > 0 ? 100.0 * cpu_gbps / b->copy_cpu_gbps : 100.0);
    } else {
        bench_say(b->opts, "%-12s %-66s %9.3f %9.2f %10.1f %7.1f", op, variant, ms, gbps, mpps, pct);
    }
    json_line(b, op, variant, threads, ms, gbps, mpps, pct);
}

/* ---------------------------------------------------------------- memcpy */

typedef struct copy_ctx { const unsigned char *src; unsigned char *dst; size_t bytes; int n; } copy_ctx;

static void copy_task(void *ctx, int i)
{
    copy_ctx *c = ctx;
    size_t lo = c->bytes * (size_t)i / (size_t)c->n, hi = c->bytes * (size_t)(i + 1) / (size_t)c->n;
    memcpy(c->dst + lo, c->src + lo, hi - lo);
}

static void bench_copy(cpu_bench *b)
{
    size_t bytes = (size_t)b->w * b->h * CB_C;
    for (int k = 0; k < 2; k++) {
        int threads = k ? b->threads : 1;
        if (k && b->threads == 1) { b->copy_gbps[1] = b->copy_gbps[0]; break; }
        copy_ctx c = { b->in, b->out, bytes, threads };
        cb_work wk = { copy_task, &c, threads, k ? b->pool : NULL };
        double ms = time_work(b, &wk);
        char variant[96];
        snprintf(variant, sizeof variant, "memcpy, %d thread%s", threads, threads > 1 ? "s" : "");
        b->copy_gbps[k] = 2.0 * (double)bytes / (ms * 1e6);
        if (!k) b->copy_cpu_gbps = b->cpu_ms > 0 ? 2.0 * (double)bytes / (b->cpu_ms * 1e6) : 0.0;
        report(b, "copy", variant, threads, ms, 2.0 * (double)bytes, (double)b->w * b->h);
    }
}

/* -------------------------------------------------------------- the ops */

/* One op over the whole image, in tiles of output. */
typedef struct op_ctx {
    const tsk_op *op;
    ts_view src, dst;
    int tile_w, tile_h, tiles_x;
    int failed;
    ts_err err;
} op_ctx;

static void op_task(void *ctx, int i)
{
    op_ctx *o = ctx;
    ts_view d = o->dst;
    d.x0 = (i % o->tiles_x) * o->tile_w;
    d.y0 = (i / o->tiles_x) * o->tile_h;
    d.w = d.x0 + o->tile_w <= o->dst.w ? o->tile_w : o->dst.w - d.x0;
    d.h = d.y0 + o->tile_h <= o->dst.h ? o->tile_h : o->dst.h - d.y0;
    d.data = o->dst.data + (size_t)d.y0 * d.pitch + (size_t)d.x0 * CB_C;
    ts_err e;
    if (tsk_cpu_apply(o->op, &o->src, &d, &e) != TS_OK && !o->failed) { o->failed = 1; o->err = e; }
}

static ts_view rgb_view(unsigned char *data, int w, int h)
{
    ts_view v;
    memset(&v, 0, sizeof v);
    v.data = data;
    v.pitch = (size_t)w * CB_C;
    v.w = v.full_w = w;
    v.h = v.full_h = h;
    v.c = CB_C;
    v.type = TS_U8;
    return v;
}

static void bench_op(cpu_bench *b, const char *name, const tsk_op *op)
{
    int ow, oh;
    double one_ms = 0;
    if (!bench_wants(b->opts, name)) return;
    tsk_out_size(op, b->w, b->h, &ow, &oh);
    if ((size_t)ow * oh * CB_C > b->out_bytes) return;
    for (int k = 0; k < 2; k++) {
        int threads = k ? b->threads : 1;
        if (k && b->threads == 1) break;
        op_ctx o;
        memset(&o, 0, sizeof o);
        o.op = op;
        o.src = rgb_view(b->in, b->w, b->h);
        o.dst = rgb_view(b->out, ow, oh);
        ts_cpu_auto_tile(ow, oh, threads, tsk_rows_to_rows(op), &o.tile_w, &o.tile_h);
        o.tiles_x = (ow + o.tile_w - 1) / o.tile_w;
        cb_work wk = { op_task, &o, o.tiles_x * ((oh + o.tile_h - 1) / o.tile_h), k ? b->pool : NULL };
        double ms = time_work(b, &wk);
        char variant[96];
        if (o.failed) {
            bench_say(b->opts, "%-12s %-66s error: %s", name, "fast", o.err.msg);
            return;
        }
        if (!k) one_ms = ms;
        /* "fused" and "fixed point": the smoothings within 1 of the reference, not bit for bit (tsk_cpu.h) */
        const char *kind = tsk_cpu_sep_fixed(op, CB_C, TS_U8)   ? "fixed point"
                           : tsk_cpu_sep_fused(op, CB_C, TS_U8) ? "fused"
                                                                : "fast";
        if (k) snprintf(variant, sizeof variant, "%s, %d threads (%.1fx one thread)", kind, threads, one_ms / ms);
        else snprintf(variant, sizeof variant, "%s, 1 thread%s", kind, tsk_cpu_has_fast(op, &o.src) ? "" : " (reference)");
        report(b, name, variant, threads, ms, (double)b->w * b->h * CB_C + (double)ow * oh * CB_C, (double)ow * oh);
    }
}

static void gauss_taps(float *k, int n, double sigma) { tsk_gauss_taps(sigma, n / 2, k); }

static void bench_lines(cpu_bench *b)
{
    static const float sepia[12] = { 0.393f, 0.769f, 0.189f, 0.0f, 0.349f, 0.686f, 0.168f, 0.0f,
                                     0.272f, 0.534f, 0.131f, 0.0f };
    tsk_op *op = calloc(1, sizeof *op);
    if (!op) return;
    op->kind = TSK_ORIENT;
    op->u.orient.code = 5;
    bench_op(b, "transpose", op);
    op->u.orient.code = 6;
    bench_op(b, "rot90", op);
    op->u.orient.code = 2;
    bench_op(b, "flip", op);
    memset(op, 0, sizeof *op);
    op->kind = TSK_MATRIX;
    memcpy(op->u.matrix.m, sepia, sizeof sepia);
    bench_op(b, "matrix", op);
    if (tsk_cpu_avx512()) {   /* the AVX2 version beside it, in the same run */
        tsk_cpu_allow_avx512(0);
        bench_op(b, "matrix-avx2", op);
        tsk_cpu_allow_avx512(1);
    }
    static const struct { const char *name; int taps; double sigma; } g[] = {
        { "gauss5", 5, 1.0 }, { "gauss7", 7, 1.0 }, { "gauss13", 13, 2.0 }
    };
    for (int i = 0; i < 3; i++) {
        memset(op, 0, sizeof *op);
        op->kind = TSK_CONV_SEP;
        op->u.sep.nx = op->u.sep.ny = g[i].taps;
        gauss_taps(op->u.sep.kx, g[i].taps, g[i].sigma);
        gauss_taps(op->u.sep.ky, g[i].taps, g[i].sigma);
        op->u.sep.conv_w = 1.0f;
        op->u.sep.border = TS_BORDER_REFLECT101;
        bench_op(b, g[i].name, op);
    }
    memset(op, 0, sizeof *op);
    float k5[5];
    gauss_taps(k5, 5, 1.0);
    op->kind = TSK_CONV_2D;
    op->u.conv2d.kw = op->u.conv2d.kh = 5;
    for (int j = 0; j < 5; j++)
        for (int i = 0; i < 5; i++) op->u.conv2d.k[j * 5 + i] = k5[j] * k5[i];
    op->u.conv2d.border = TS_BORDER_REFLECT101;
    bench_op(b, "conv5x5", op);
    static const float sx[9] = { -1, 0, 1, -2, 0, 2, -1, 0, 1 }, sy[9] = { -1, -2, -1, 0, 0, 0, 1, 2, 1 };
    memset(op, 0, sizeof *op);
    op->kind = TSK_CONV_2D;
    op->u.conv2d.kw = op->u.conv2d.kh = 3;
    memcpy(op->u.conv2d.k, sx, sizeof sx);
    memcpy(op->u.conv2d.k2, sy, sizeof sy);
    op->u.conv2d.mode = TSK_CONV_MAG;
    op->u.conv2d.border = TS_BORDER_REPLICATE;
    bench_op(b, "sobel", op);
    memset(op, 0, sizeof *op);
    op->kind = TSK_SAMPLE; /* bilinear to half size (the output fits the buffer) */
    op->u.sample.inv[0] = op->u.sample.inv[4] = 2.0f;
    op->u.sample.out_w = b->w / 2;
    op->u.sample.out_h = b->h / 2;
    op->u.sample.interp = TSK_BILINEAR;
    op->u.sample.border = TS_BORDER_REPLICATE;
    bench_op(b, "resize-down", op);
    /* the thumbnail job: area to an eighth of each side, as resize=w=... shrinks */
    op->u.sample.inv[0] = op->u.sample.inv[4] = 8.0f;
    op->u.sample.out_w = b->w / 8;
    op->u.sample.out_h = b->h / 8;
    op->u.sample.interp = TSK_AREA;
    bench_op(b, "resize-area", op);
    free(op);
}

/* The chain of the folder benchmark, through the CPU executor (tiles,
 * intermediate buffers and the output image's allocation included; those
 * come from the pool's cache, reused from the untimed first run on, as
 * they are from image to image in a batch). */
typedef struct chain_ctx { const ts_chain *chain; const ts_image *in; ts_pool *pool; int failed; } chain_ctx;

static void chain_task(void *ctx, int i)
{
    chain_ctx *c = ctx;
    ts_image out;
    ts_err e;
    (void)i;
    if (ts_cpu_run_pool(c->chain, c->in, 0, 0, c->pool, &out, &e) != TS_OK) c->failed = 1;
    else ts_image_free(&out);
}

static void bench_chain(cpu_bench *b, const char *text)
{
    ts_chain *chain = NULL;
    ts_err e;
    double one_ms = 0;
    if (!bench_wants(b->opts, "chain") || ts_chain_parse(text, &chain, &e) != TS_OK) return;
    ts_image in;
    memset(&in, 0, sizeof in);
    in.w = b->w; in.h = b->h; in.c = CB_C; in.type = TS_U8; in.stride = (size_t)b->w * CB_C; in.data = b->in;
    in.orientation = 1;
    /* one thread: a pool of its own, so that both lines reuse their buffers alike */
    ts_pool *alone = ts_pool_create(1);
    for (int k = 0; k < 2; k++) {
        int threads = k ? b->threads : 1;
        if (k && b->threads == 1) break;
        chain_ctx c = { chain, &in, k ? b->pool : alone, 0 };
        cb_work wk = { chain_task, &c, 1, NULL }; /* one call; its tiles go to c.pool */
        double ms = time_work(b, &wk);
        char variant[96];
        if (k) b->cpu_ms = 0.0; /* the work ran on the pool's threads */
        if (c.failed) break;
        if (!k) one_ms = ms;
        if (k) snprintf(variant, sizeof variant, "%s, %d threads (%.1fx)", text, threads, one_ms / ms);
        else snprintf(variant, sizeof variant, "%s, 1 thread", text);
        report(b, "chain", variant, threads, ms, 2.0 * (double)b->w * b->h * CB_C, (double)b->w * b->h);
    }
    ts_pool_free(alone);
    ts_chain_free(chain);
}

static void fill_random(unsigned char *p, size_t n)
{
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i += 8) {
        x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
        unsigned long long r = x * 2685821657736338717ull;
        memcpy(p + i, &r, n - i < 8 ? n - i : 8);
    }
}

ts_status ts_bench_cpu(const ts_bench_opts *opts, int threads, char **json, ts_err *err)
{
    cpu_bench b;
    memset(&b, 0, sizeof b);
    b.opts = opts;
    b.w = opts->w > 0 ? opts->w : 6000;
    b.h = opts->h > 0 ? opts->h : 4000;
    b.reps = opts->reps ? opts->reps : CB_DEFAULT_REPS;
    if (json) *json = NULL;
    if (ts_option_check(TS_OPT_REPS, b.reps, err) != TS_OK) return TS_E_ARG;
    if (b.w < 2 || b.h < 2 || b.w > 65536 || b.h > 65536 || (double)b.w * b.h > 4e8)
        return ts_err_set(err, TS_E_ARG, "bench cpu: image size %dx%d (2..65536 each way, 400 MP at most)", b.w, b.h);
    b.pool = ts_pool_create(threads);
    b.threads = ts_pool_threads(b.pool);
    size_t in_bytes = (size_t)b.w * b.h * CB_C;
    b.out_bytes = in_bytes;
    b.in = malloc(in_bytes);
    b.out = malloc(b.out_bytes);
    b.times = calloc((size_t)b.reps, sizeof *b.times);
    b.cpu_times = calloc((size_t)b.reps, sizeof *b.cpu_times);
    ts_status st = TS_OK;
    if (!b.pool || !b.in || !b.out || !b.times || !b.cpu_times) st = ts_err_set(err, TS_E_NOMEM, "bench cpu: %zu bytes of buffers", 2 * in_bytes);
    if (st == TS_OK) {
        fill_random(b.in, in_bytes);
        memset(b.out, 0x5A, b.out_bytes);
        bench_say(b.opts, "CPU ops on %dx%d RGB8, 1 and %d threads, median of %d runs; bytes = read + written once; "
                  "%% copy = GB/s against memcpy on as many threads", b.w, b.h, b.threads, b.reps);
        bench_say(b.opts, "%-12s %-66s %9s %9s %10s %7s %9s %10s %7s", "op", "version", "ms", "GB/s", "MP/s", "% copy",
                  "cpu ms", "cpu MP/s", "% cpu");
        bench_text_add(&b.json, "{\n  \"w\": %d, \"h\": %d, \"channels\": %d, \"threads\": %d, \"reps\": %d,\n  \"lines\": [",
               b.w, b.h, CB_C, b.threads, b.reps);
        bench_copy(&b);
        bench_lines(&b);
        bench_chain(&b, "gauss=sigma=2,matrix=sepia,transpose");
        bench_text_add(&b.json, "\n  ],\n  \"copy_gbps\": %.3f, \"copy_gbps_all\": %.3f\n}\n", b.copy_gbps[0], b.copy_gbps[1]);
        if (b.json.failed) st = ts_err_set(err, TS_E_NOMEM, "bench cpu: the JSON report");
    }
    if (st == TS_OK && json) { *json = b.json.s; b.json.s = NULL; }
    free(b.json.s);
    free(b.in);
    free(b.out);
    free(b.times);
    free(b.cpu_times);
    ts_pool_free(b.pool);
    return st;
}

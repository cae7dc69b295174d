/* bench_kernels_cuda.c - `tilestream bench kernels`: every version of every
 * kernel family on one large RGBA8 image, against a device-to-device copy
 * of the same image (and against NPP when built with it).
 *
 * Method: random data (never zeros), several input copies rotated so that
 * L2 does not serve a run from the last one, warm-up runs first, then the
 * median of `reps` runs each timed with a pair of CUDA events. Bytes are
 * what an op must move at least: each input pixel read once, each output
 * pixel written once (resize 2x up writes 4x what it reads). GB/s is those
 * bytes over the median time; "% copy" compares with the copy's GB/s. */
#include "bench_npp.h"
#include "bench.h"
#include "bench_text.h"
#include "plan.h"
#include "tilestream.h"
#include "tsk.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BENCH_WARMUP = 3, BENCH_DEFAULT_REPS = 100, BENCH_MAX_REPS = 10000 };

struct ts_bench {
    const ts_bench_opts *opts;
    ts_bench_io io;
    int reps;
    cudaEvent_t *events;  /* 2 per rep */
    float *times;
    double copy_gbps;     /* the reference line's bandwidth */
    int lines;            /* entries in the JSON "lines" array */
    bench_text json;
};

int ts_bench_wants(const ts_bench *b, const char *op)
{
    return bench_wants(b->opts, op);
}

static void json_line_start(ts_bench *b, const char *op, const char *variant)
{
    bench_text_add(&b->json, "%s\n    {\"op\": ", b->lines++ ? "," : "");
    bench_text_add_string(&b->json, op);
    bench_text_add(&b->json, ", \"version\": ");
    bench_text_add_string(&b->json, variant);
}

void ts_bench_fail(ts_bench *b, const char *op, const char *variant, const char *why)
{
    bench_say(b->opts, "%-12s %-66s error: %s", op, variant, why);
    json_line_start(b, op, variant);
    bench_text_add(&b->json, ", \"error\": ");
    bench_text_add_string(&b->json, why);
    bench_text_add(&b->json, "}");
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Warm up, then time b->reps runs; the median in ms, or -1 with msg. */
static double bench_time(ts_bench *b, ts_bench_launch launch, void *ctx, char *msg, size_t msg_len)
{
    cudaStream_t s = (cudaStream_t)b->io.stream;
    cudaError_t e;
    for (int i = 0; i < BENCH_WARMUP; i++)
        if (launch(&b->io, i % TS_BENCH_BUFFERS, ctx, msg, msg_len)) return -1;
    if ((e = cudaStreamSynchronize(s)) != cudaSuccess) {
        snprintf(msg, msg_len, "warm-up: %s", cudaGetErrorString(e));
        return -1;
    }
    for (int r = 0; r < b->reps; r++) {
        cudaEventRecord(b->events[2 * r], s);
        if (launch(&b->io, (r + BENCH_WARMUP) % TS_BENCH_BUFFERS, ctx, msg, msg_len)) return -1;
        cudaEventRecord(b->events[2 * r + 1], s);
    }
    if ((e = cudaStreamSynchronize(s)) != cudaSuccess) {
        snprintf(msg, msg_len, "timed runs: %s", cudaGetErrorString(e));
        return -1;
    }
    for (int r = 0; r < b->reps; r++)
        if ((e = cudaEventElapsedTime(&b->times[r], b->events[2 * r], b->events[2 * r + 1])) != cudaSuccess) {
            snprintf(msg, msg_len, "event timing: %s", cudaGetErrorString(e));
            return -1;
        }
    qsort(b->times, (size_t)b->reps, sizeof b->times[0], cmp_float);
    return b->reps % 2 ? b->times[b->reps / 2] : 0.5 * (b->times[b->reps / 2 - 1] + b->times[b->reps / 2]);
}

void ts_bench_line(ts_bench *b, const char *op, const char *variant, double bytes, double out_px,
                   ts_bench_launch launch, void *ctx)
{
    char msg[300] = "";
    double ms, gbps, mpps, pct;
    if (!ts_bench_wants(b, op)) return;
    ms = bench_time(b, launch, ctx, msg, sizeof msg);
    if (ms <= 0) {
        cudaGetLastError(); /* a failed launch must not fail the next line */
        ts_bench_fail(b, op, variant, msg[0] ? msg : "no time measured");
        return;
    }
    gbps = bytes / (ms * 1e6);
    mpps = out_px / (ms * 1e3);
    pct = b->copy_gbps > 0 ? 100.0 * gbps / b->copy_gbps : 0;
    bench_say(b->opts, "%-12s %-66s %9.4f %9.1f %10.1f %7.1f", op, variant, ms, gbps, mpps, pct);
    json_line_start(b, op, variant);
    bench_text_add(&b->json, ", \"ms\": %.5f, \"gbps\": %.2f, \"mpps\": %.1f, \"pct_copy\": %.2f}", ms, gbps, mpps, pct);
}

/* ------------------------------------------------------------- the lines */

static int launch_copy(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len)
{
    cudaError_t e = cudaMemcpyAsync(io->out, io->in[buf], io->in_pitch * (size_t)io->h, cudaMemcpyDeviceToDevice,
                                    (cudaStream_t)io->stream);
    (void)ctx;
    if (e == cudaSuccess) return 0;
    snprintf(msg, msg_len, "cudaMemcpyAsync: %s", cudaGetErrorString(e));
    return 1;
}

/* One kernel op through tsk_gpu_apply: the whole input to the whole output. */
typedef struct op_run {
    tsk_op op;
    tsk_launch l;
    ts_view src, dst;
} op_run;

static int launch_op(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len)
{
    op_run *r = (op_run *)ctx;
    ts_err err = { TS_OK, "" };
    r->src.data = io->in[buf];
    r->l.stream = io->stream;
    if (tsk_gpu_apply(&r->op, &r->src, &r->dst, &r->l, &err) == TS_OK) return 0;
    snprintf(msg, msg_len, "%s", err.msg);
    return 1;
}

static ts_view bench_view(unsigned char *data, size_t pitch, int w, int h)
{
    ts_view v;
    memset(&v, 0, sizeof v);
    v.data = data;
    v.pitch = pitch;
    v.w = v.full_w = w;
    v.h = v.full_h = h;
    v.c = 4;
    v.type = TS_U8;
    return v;
}

/* Every version of op's family (and both paths for SAMPLE) on one line each. */
static void bench_family(ts_bench *b, const char *name, const tsk_op *op, int out_w, int out_h)
{
    const double in_bytes = 4.0 * b->io.w * b->io.h, out_bytes = 4.0 * out_w * out_h;
    const int paths = tsk_kind_info_of(op->kind)->has_texture_path ? 2 : 1;
    const int versions = tsk_version_count(op->kind);
    op_run *r;
    if (!ts_bench_wants(b, name)) return;
    if (versions < 1) {
        ts_bench_fail(b, name, "-", "no GPU kernel for this op");
        return;
    }
    r = calloc(1, sizeof *r);  /* tsk_op is a few KB: not on the stack */
    if (!r) {
        ts_bench_fail(b, name, "-", "out of memory");
        return;
    }
    r->op = *op;
    r->src = bench_view(b->io.in[0], b->io.in_pitch, b->io.w, b->io.h);
    r->dst = bench_view(b->io.out, b->io.out_pitch, out_w, out_h);
    for (int v = 1; v <= versions; v++)
        for (int p = 0; p < paths; p++) {
            char variant[96];
            snprintf(variant, sizeof variant, "%s%s%s", tsk_version_name(op->kind, v),
                     v == tsk_default_version(op->kind) ? " *" : "",
                     paths == 1 ? "" : p == 0 ? " global" : " texture");
            r->l.version = v;
            r->l.path = p == 0 ? TS_PATH_GLOBAL : TS_PATH_TEXTURE;
            r->l.slot = 0;
            ts_bench_line(b, name, variant, in_bytes + out_bytes, (double)out_w * out_h, launch_op, r);
        }
    free(r);
    ts_bench_npp(b, &b->io, name);
}

/* Normalised Gaussian taps, radius (n-1)/2. */
static void gauss_taps(float *k, int n, double sigma) { tsk_gauss_taps(sigma, n / 2, k); }

static void bench_separable(ts_bench *b, const char *name, int taps, double sigma)
{
    tsk_op *op = calloc(1, sizeof *op);
    if (!op) return;
    op->kind = TSK_CONV_SEP;
    op->u.sep.nx = op->u.sep.ny = taps;
    gauss_taps(op->u.sep.kx, taps, sigma);
    gauss_taps(op->u.sep.ky, taps, sigma);
    op->u.sep.center_w = 0.0f;
    op->u.sep.conv_w = 1.0f;
    op->u.sep.border = TS_BORDER_REPLICATE;
    bench_family(b, name, op, b->io.w, b->io.h);
    free(op);
}

/* A Gaussian of n x n taps (n <= 5) as one 2-D kernel. */
static void bench_conv2d(ts_bench *b, const char *name, int n, double sigma)
{
    float g[5];
    tsk_op *op = calloc(1, sizeof *op);
    if (!op) return;
    gauss_taps(g, n, sigma);
    op->kind = TSK_CONV_2D;
    op->u.conv2d.kw = op->u.conv2d.kh = n;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) op->u.conv2d.k[j * n + i] = g[j] * g[i];
    op->u.conv2d.mode = TSK_CONV_LINEAR;
    op->u.conv2d.border = TS_BORDER_REPLICATE;
    bench_family(b, name, op, b->io.w, b->io.h);
    free(op);
}

/* A resize by scale (both axes), bilinear or nearest, replicate border. */
static void resize_op(tsk_op *op, const ts_bench *b, double scale, tsk_interp interp)
{
    op->kind = TSK_SAMPLE;
    op->u.sample.inv[0] = (float)(1.0 / scale);
    op->u.sample.inv[4] = (float)(1.0 / scale);
    op->u.sample.out_w = (int)(b->io.w * scale);
    op->u.sample.out_h = (int)(b->io.h * scale);
    op->u.sample.interp = interp;
    op->u.sample.border = TS_BORDER_REPLICATE;
}

static void bench_resize(ts_bench *b, const char *name, double scale)
{
    tsk_op *op = calloc(1, sizeof *op);
    if (!op) return;
    resize_op(op, b, scale, TSK_BILINEAR);
    bench_family(b, name, op, op->u.sample.out_w, op->u.sample.out_h);
    free(op);
}

/* The same resize with nearest sampling, the default version on the global
 * path: one load and one store a pixel, nothing sampled, so it moves the
 * bilinear lines' bytes with the least work a kernel can do for them. The
 * bilinear lines' time against this one says how much of theirs is the
 * sampling and how much the traffic. */
static void bench_resize_nearest(ts_bench *b, const char *name, double scale)
{
    op_run *r;
    char variant[96];
    if (!ts_bench_wants(b, name)) return;
    r = calloc(1, sizeof *r);
    if (!r) {
        ts_bench_fail(b, name, "nearest", "out of memory");
        return;
    }
    resize_op(&r->op, b, scale, TSK_NEAREST);
    r->src = bench_view(b->io.in[0], b->io.in_pitch, b->io.w, b->io.h);
    r->dst = bench_view(b->io.out, b->io.out_pitch, r->op.u.sample.out_w, r->op.u.sample.out_h);
    r->l.version = tsk_default_version(TSK_SAMPLE);
    r->l.path = TS_PATH_GLOBAL;
    r->l.slot = 0;
    snprintf(variant, sizeof variant, "nearest, %s global: the same bytes, nothing sampled",
             tsk_version_name(TSK_SAMPLE, r->l.version));
    ts_bench_line(b, name, variant, 4.0 * b->io.w * b->io.h + 4.0 * r->op.u.sample.out_w * r->op.u.sample.out_h,
                  (double)r->op.u.sample.out_w * r->op.u.sample.out_h, launch_op, r);
    free(r);
}

/* A sepia-like colour matrix: every coefficient in use. */
static void bench_matrix(ts_bench *b)
{
    static const float m[12] = { 0.393f, 0.769f, 0.189f, 0.0f, 0.349f, 0.686f, 0.168f, 0.0f,
                                 0.272f, 0.534f, 0.131f, 0.02f };
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_MATRIX;
    memcpy(op.u.matrix.m, m, sizeof m);
    bench_family(b, "matrix", &op, b->io.w, b->io.h);
}

static void bench_transpose(ts_bench *b)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_ORIENT;
    op.u.orient.code = 5;
    bench_family(b, "transpose", &op, b->io.h, b->io.w);
}

/* The chain of the folder benchmark in device memory: the ops the plan
 * lowers it to for an RGB image (which the GPU engine widens to RGBX, the
 * layout here), one by one and as the engine fuses them (ts_plan_fuse),
 * each a whole-image launch of its default version, through two
 * intermediate images (one by one: gauss in -> out, matrix out -> tmp,
 * transpose tmp -> out; fused, where the tensor-core version runs the
 * gauss: one op, in -> out, that writes its result transposed through the
 * matrix). Bytes are one read and one write of the image: the line's
 * "% copy" is how far the chain is from a single pass. */
enum { CHAIN_MAX_OPS = 8 };
typedef struct chain_run {
    int n;
    int sep_version;                 /* the separable op's version (0: the default) */
    tsk_op ops[CHAIN_MAX_OPS];
    ts_view mid[CHAIN_MAX_OPS + 1];  /* mid[0]: the input (data set per run), mid[n]: the output */
} chain_run;

static int launch_chain(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len)
{
    chain_run *c = (chain_run *)ctx;
    tsk_launch l = { io->stream, 0, TS_PATH_GLOBAL, 0 };
    c->mid[0].data = io->in[buf];
    for (int k = 0; k < c->n; k++) {
        ts_err err = { TS_OK, "" };
        l.version = c->ops[k].kind == TSK_CONV_SEP ? c->sep_version : 0;
        if (tsk_gpu_apply(&c->ops[k], &c->mid[k], &c->mid[k + 1], &l, &err) != TS_OK) {
            snprintf(msg, msg_len, "op %d: %s", k + 1, err.msg);
            return 1;
        }
    }
    return 0;
}

static void bench_chain(ts_bench *b, const char *text, int fuse, int sep_version)
{
    ts_chain *chain = NULL;
    ts_plan plan;
    ts_err err = { TS_OK, "" };
    chain_run *c;
    char variant[128];
    if (!ts_bench_wants(b, "chain")) return;
    memset(&plan, 0, sizeof plan);
    if (ts_chain_parse(text, &chain, &err) != TS_OK || ts_plan_make(chain, b->io.w, b->io.h, 3, TS_U8, &plan, &err) != TS_OK) {
        ts_bench_fail(b, "chain", text, err.msg);
        ts_chain_free(chain);
        return;
    }
    if (fuse) ts_plan_fuse(&plan, 4);
    c = calloc(1, sizeof *c);
    if (!c || plan.n > CHAIN_MAX_OPS) {
        ts_bench_fail(b, "chain", text, c ? "too many ops" : "out of memory");
    } else {
        /* intermediates alternate between out and tmp, the last in out */
        c->n = plan.n;
        c->sep_version = sep_version;
        c->mid[0] = bench_view(b->io.in[0], b->io.in_pitch, plan.w[0], plan.h[0]);
        for (int k = 0; k < plan.n; k++) {
            const int to_out = (plan.n - 1 - k) % 2 == 0;
            const size_t pitch = to_out ? b->io.out_pitch : (size_t)plan.w[k + 1] * 4;
            c->ops[k] = plan.ops[k];
            c->mid[k + 1] = bench_view(to_out ? b->io.out : b->io.tmp, pitch, plan.w[k + 1], plan.h[k + 1]);
            if (!to_out && pitch * (size_t)plan.h[k + 1] > b->io.tmp_pitch * (size_t)b->io.h) c->n = -1;
        }
        char sep[32] = "default versions";
        if (sep_version) snprintf(sep, sizeof sep, "separable v%d", sep_version);
        snprintf(variant, sizeof variant, "%s: %d op%s%s, %s", text, plan.n, plan.n == 1 ? "" : "s",
                 fuse ? " as the engine fuses them" : " one by one", sep);
        if (c->n < 0) ts_bench_fail(b, "chain", variant, "an intermediate does not fit");
        else ts_bench_line(b, "chain", variant, 8.0 * b->io.w * b->io.h, (double)b->io.w * b->io.h, launch_chain, c);
    }
    free(c);
    ts_plan_free(&plan);
    ts_chain_free(chain);
}

#ifndef TS_HAVE_NPP
void ts_bench_npp(ts_bench *b, const ts_bench_io *io, const char *op) { (void)b; (void)io; (void)op; }
#endif

/* ------------------------------------------------------ set-up, clean-up */

static void bench_free(ts_bench *b)
{
    for (int i = 0; i < TS_BENCH_BUFFERS; i++) cudaFree(b->io.in[i]);
    cudaFree(b->io.out);
    cudaFree(b->io.tmp);
    if (b->events)
        for (int i = 0; i < 2 * b->reps; i++)
            if (b->events[i]) cudaEventDestroy(b->events[i]);
    free(b->events);
    free(b->times);
    if (b->io.stream) cudaStreamDestroy((cudaStream_t)b->io.stream);
    free(b->json.s);
}

static ts_status cuda_fail(cudaError_t e, const char *what, ts_err *err)
{
    return ts_err_set(err, TS_E_DEVICE, "bench kernels: %s: %s", what, cudaGetErrorString(e));
}

/* Random bytes (xorshift64*), the same in every input copy. */
static ts_status bench_fill(ts_bench *b, ts_err *err)
{
    size_t n = b->io.in_pitch * (size_t)b->io.h;
    unsigned long long x = 0x9E3779B97F4A7C15ull;
    unsigned char *host = malloc(n);
    cudaError_t e = cudaSuccess;
    if (!host) return ts_err_set(err, TS_E_NOMEM, "bench kernels: %zu bytes of host memory", n);
    for (size_t i = 0; i < n; i += 8) {
        x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
        unsigned long long r = x * 2685821657736338717ull;
        memcpy(host + i, &r, n - i < 8 ? n - i : 8);
    }
    for (int i = 0; i < TS_BENCH_BUFFERS && e == cudaSuccess; i++) e = cudaMemcpy(b->io.in[i], host, n, cudaMemcpyHostToDevice);
    free(host);
    if (e != cudaSuccess) return cuda_fail(e, "uploading the input", err);
    e = cudaMemset(b->io.out, 0x5A, b->io.out_pitch * 2 * (size_t)b->io.h);
    if (e == cudaSuccess) e = cudaMemset(b->io.tmp, 0x5A, b->io.tmp_pitch * (size_t)b->io.h);
    return e == cudaSuccess ? TS_OK : cuda_fail(e, "clearing the outputs", err);
}

static ts_status bench_setup(ts_bench *b, ts_err *err)
{
    const size_t row = (size_t)b->io.w * 4;
    cudaStream_t s;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) return cuda_fail(e, "stream", err);
    b->io.stream = s;
    for (int i = 0; i < TS_BENCH_BUFFERS && e == cudaSuccess; i++)
        e = cudaMallocPitch((void **)&b->io.in[i], &b->io.in_pitch, row, (size_t)b->io.h);
    if (e == cudaSuccess) e = cudaMallocPitch((void **)&b->io.out, &b->io.out_pitch, 2 * row, 2 * (size_t)b->io.h);
    if (e == cudaSuccess) e = cudaMallocPitch((void **)&b->io.tmp, &b->io.tmp_pitch, row, (size_t)b->io.h);
    if (e != cudaSuccess) return cuda_fail(e, "device buffers", err);
    b->events = calloc(2 * (size_t)b->reps, sizeof *b->events);
    b->times = calloc((size_t)b->reps, sizeof *b->times);
    if (!b->events || !b->times) return ts_err_set(err, TS_E_NOMEM, "bench kernels: timing arrays");
    for (int i = 0; i < 2 * b->reps; i++)
        if ((e = cudaEventCreate(&b->events[i])) != cudaSuccess) return cuda_fail(e, "events", err);
    return bench_fill(b, err);
}

/* The copy first: every other line is compared with it. */
static ts_status bench_copy(ts_bench *b, ts_err *err)
{
    char msg[300] = "";
    double bytes = 2.0 * (double)b->io.in_pitch * b->io.h;
    double ms = bench_time(b, launch_copy, NULL, msg, sizeof msg);
    if (ms <= 0) return ts_err_set(err, TS_E_DEVICE, "bench kernels: the reference copy: %s", msg);
    b->copy_gbps = bytes / (ms * 1e6);
    bench_say(b->opts, "%-12s %-66s %9.4f %9.1f %10.1f %7.1f", "copy", "cudaMemcpyAsync device to device", ms,
              b->copy_gbps, (double)b->io.w * b->io.h / (ms * 1e3), 100.0);
    json_line_start(b, "copy", "cudaMemcpyAsync device to device");
    bench_text_add(&b->json, ", \"ms\": %.5f, \"gbps\": %.2f, \"mpps\": %.1f, \"pct_copy\": 100}", ms, b->copy_gbps,
             (double)b->io.w * b->io.h / (ms * 1e3));
    return TS_OK;
}

static void bench_all_lines(ts_bench *b)
{
    bench_transpose(b);
    bench_matrix(b);
    bench_separable(b, "gauss5", 5, 1.0);
    bench_separable(b, "gauss15", 15, 2.5);
    bench_conv2d(b, "conv3x3", 3, 0.8);
    bench_conv2d(b, "conv5x5", 5, 1.0);
    bench_resize(b, "resize-up", 2.0);
    bench_resize_nearest(b, "resize-up", 2.0);
    bench_resize(b, "resize-down", 0.5);
    bench_chain(b, "gauss=sigma=2,matrix=sepia,transpose", 0, 0);
    bench_chain(b, "gauss=sigma=2,matrix=sepia,transpose", 1, 0);
    /* the fused outputs of the tensor-core versions: v13's, v15's, v18's, v21's and v23's */
    bench_chain(b, "gauss=sigma=2,matrix=sepia,transpose", 1, 13);
    bench_chain(b, "gauss=sigma=2,matrix=sepia,transpose", 1, 15);
    bench_chain(b, "gauss=sigma=2,matrix=sepia,transpose", 1, 18);
    bench_chain(b, "gauss=sigma=2,matrix=sepia,transpose", 1, 21);
    bench_chain(b, "gauss=sigma=2,matrix=sepia,transpose", 1, 23);
    /* sepia with an offset of 0.001 on blue, which the fused output's plain
     * matrix rule (coefficients >= 0, offsets 0) does not take: the general
     * rule's cost, against the default line above */
    bench_chain(b, "gauss=sigma=2,matrix=m=0.393;0.769;0.189;0;0.349;0.686;0.168;0;0.272;0.534;0.131;0.001,transpose", 1,
                0);
}

ts_status ts_bench_kernels(const ts_bench_opts *opts, char **json, ts_err *err)
{
    ts_bench b;
    char device[256];
    ts_status st;
    memset(&b, 0, sizeof b);
    b.opts = opts;
    b.io.w = opts->w > 0 ? opts->w : 7680;
    b.io.h = opts->h > 0 ? opts->h : 4320;
    b.reps = opts->reps > 0 ? (opts->reps < BENCH_MAX_REPS ? opts->reps : BENCH_MAX_REPS) : BENCH_DEFAULT_REPS;
    if (json) *json = NULL;
    if (b.io.w < 2 || b.io.h < 2 || b.io.w > 65536 || b.io.h > 65536)
        return ts_err_set(err, TS_E_ARG, "bench kernels: image size %dx%d (2..65536 each way)", b.io.w, b.io.h);
    if (!ts_gpu_probe(device, sizeof device, err)) return err ? err->status : TS_E_DEVICE;
    st = bench_setup(&b, err);
    if (st == TS_OK) {
        bench_say(b.opts, "kernels on %s: %dx%d RGBA8, median of %d runs; bytes = read + written once", device,
                  b.io.w, b.io.h, b.reps);
        bench_say(b.opts, "%-12s %-66s %9s %9s %10s %7s", "op", "version (* = default)", "ms", "GB/s", "MP/s", "% copy");
        bench_text_add(&b.json, "{\n  \"device\": ");
        bench_text_add_string(&b.json, device);
        bench_text_add(&b.json, ",\n  \"w\": %d, \"h\": %d, \"reps\": %d,\n  \"lines\": [", b.io.w, b.io.h, b.reps);
        st = bench_copy(&b, err);
    }
    if (st == TS_OK) {
        bench_all_lines(&b);
        bench_text_add(&b.json, "\n  ],\n  \"copy_gbps\": %.2f\n}\n", b.copy_gbps);
        if (b.json.failed) st = ts_err_set(err, TS_E_NOMEM, "bench kernels: the JSON report");
    }
    if (st == TS_OK && json) {
        *json = b.json.s;
        b.json.s = NULL;
    }
    bench_free(&b);
    return st;
}

/* test_gpu_conv_sep.c - TSK_CONV_SEP on the GPU against tsk_ref_apply:
 * every version on fresh random inputs of odd sizes (1x1, 31x33, 1023x769,
 * 4097x2161), every border mode, 1 to 4 channels, U8/U16/F32, 1 to 63 taps,
 * gauss-like, sharpen (centre and conv weights) and signed taps, alpha
 * passed through or filtered; destination regions away from the origin
 * with the source exactly tsk_need() of them; views not aligned to their
 * pixel size; two streams using two coefficient slots with changing taps.
 * Outputs sit in poisoned buffers with guard margins: unwritten pixels and
 * writes outside the region both show. The bit-exact versions must match
 * the reference exactly; the fused multiply-add ones within 1 on integers.
 * The largest difference per version and type is printed at the end. */
#include "check.h"
#include "testimg.h"
#include "tsk.h"

#ifndef TS_HAVE_CUDA
int main(void)
{
    fprintf(stderr, "built without CUDA: skipping\n");
    return 77;
}
#else
#include "test_gpu_conv_util.h"

static const int tap_counts[5] = { 1, 3, 5, 15, 63 };
static const ts_type types[3] = { TS_U8, TS_U16, TS_F32 };

enum { TAPS_GAUSS, TAPS_SHARPEN, TAPS_SIGNED };

/* A separable op: `style` picks smoothing taps (centre weight 0, conv
 * weight 1), an unsharp mask, or signed taps with both weights nonzero. */
static tsk_op sep_op(int nx, int ny, int style, ts_border b, float bv, int alpha)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_CONV_SEP;
    op.alpha_passthrough = alpha;
    op.u.sep.nx = nx;
    op.u.sep.ny = ny;
    gc_random_taps(op.u.sep.kx, nx, style != TAPS_SIGNED);
    gc_random_taps(op.u.sep.ky, ny, style != TAPS_SIGNED);
    op.u.sep.center_w = style == TAPS_GAUSS ? 0.0f : style == TAPS_SHARPEN ? 1.7f : 0.3f;
    op.u.sep.conv_w = style == TAPS_GAUSS ? 1.0f : style == TAPS_SHARPEN ? -0.7f : 0.9f;
    op.u.sep.border = b;
    op.u.sep.border_value = bv;
    return op;
}

static float border_value(ts_type t) { return t == TS_U8 ? 77.0f : t == TS_U16 ? 40000.0f : 0.625f; }

static gc_tol sep_tol(const tsk_op *op)
{
    gc_tol t;
    t.kind = TSK_CONV_SEP;
    t.f32 = 2e-6 * (1.0 + fabs(op->u.sep.center_w) +
                    fabs(op->u.sep.conv_w) * gc_abs_sum(op->u.sep.kx, op->u.sep.nx) * gc_abs_sum(op->u.sep.ky, op->u.sep.ny));
    return t;
}

static void check_sep(const tsk_op *op, int w, int h, int c, ts_type t, ts_rect out, size_t shift, const char *what)
{
    char name[160];
    gc_tol tol = sep_tol(op);
    snprintf(name, sizeof name, "%s %s %dx%d taps style alpha %d", what, gc_border_names[op->u.sep.border],
             op->u.sep.nx, op->u.sep.ny, op->alpha_passthrough);
    gc_check_op(op, w, h, c, t, out, shift, 0, &tol, name);
}

static ts_rect whole(int w, int h)
{
    ts_rect r = { 0, 0, w, h };
    return r;
}

/* Small images: the whole cross product of border, channels, type and tap
 * counts (nx and ny differ), the tap style and alpha varying along. */
static void test_small(void)
{
    static const int sizes[2][2] = { { 1, 1 }, { 31, 33 } };
    int k = 0;
    for (int s = 0; s < 2; s++)
        for (int b = 0; b < 5; b++)
            for (int c = 1; c <= 4; c++)
                for (int ti = 0; ti < 3; ti++)
                    for (int n = 0; n < 5; n++, k++) {
                        if (gc_level("TS_CONV_SMALL") >= 2 && k % 7 != 0) continue;
                        ts_type t = types[ti];
                        tsk_op op = sep_op(tap_counts[n], tap_counts[(n + 1 + k % 3) % 5], k % 3, (ts_border)b,
                                           border_value(t), (k / 3) % 2);
                        check_sep(&op, sizes[s][0], sizes[s][1], c, t, whole(sizes[s][0], sizes[s][1]), 0, "small");
                    }
}

/* Regions of a 200x150 image: inside, at each corner, a single pixel and a
 * single row, the source being exactly what they need. */
static void test_regions_small(void)
{
    static const ts_rect regions[6] = { { 37, 45, 101, 60 }, { 0, 0, 50, 40 }, { 150, 110, 50, 40 },
                                        { 199, 0, 1, 150 }, { 13, 149, 187, 1 }, { 100, 75, 1, 1 } };
    for (int i = 0; i < 6; i++)
        for (int b = 0; b < 5; b++) {
            ts_type t = types[(i + b) % 3];
            int c = 1 + (i + 2 * b) % 4, n = tap_counts[1 + (i + b) % 4];
            tsk_op op = sep_op(n, tap_counts[(i + 2 * b) % 5], (i + b) % 3, (ts_border)b, border_value(t), i % 2);
            check_sep(&op, 200, 150, c, t, regions[i], 0, "region");
        }
}

/* 1023x769: every type and channel count once, borders and taps rotating,
 * whole images and regions touching the edges. */
static void test_medium(void)
{
    static const int taps[5][2] = { { 5, 5 }, { 15, 15 }, { 63, 1 }, { 1, 63 }, { 3, 15 } };
    const ts_rect regions[3] = { whole(1023, 769), { 311, 201, 512, 300 }, { 700, 500, 323, 269 } };
    int k = 0;
    for (int ti = 0; ti < 3; ti++)
        for (int c = 1; c <= 4; c++, k++) {
            ts_type t = types[ti];
            tsk_op op = sep_op(taps[k % 5][0], taps[k % 5][1], k % 3, (ts_border)(k % 5), border_value(t), k % 2);
            check_sep(&op, 1023, 769, c, t, regions[k % 3], 0, "medium");
        }
}

/* 4097x2161: a few cases (the reference is slow at this size). */
static void test_large(void)
{
    tsk_op a = sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0);
    tsk_op b = sep_op(15, 3, TAPS_SHARPEN, TS_BORDER_REFLECT101, 0, 1);
    tsk_op c = sep_op(63, 1, TAPS_SIGNED, TS_BORDER_WRAP, 0, 0);
    tsk_op d = sep_op(1, 15, TAPS_GAUSS, TS_BORDER_CONSTANT, 100.0f, 0);
    check_sep(&a, 4097, 2161, 4, TS_U8, whole(4097, 2161), 0, "large");
    check_sep(&b, 4097, 2161, 1, TS_U16, whole(4097, 2161), 0, "large");
    check_sep(&c, 4097, 2161, 2, TS_F32, whole(4097, 2161), 0, "large");
    check_sep(&d, 4097, 2161, 3, TS_U8, whole(4097, 2161), 0, "large");
}

/* Views whose start is one channel off the pixel size (c = 2, 4): the fast
 * versions must notice and still be right. */
static void test_misaligned(void)
{
    for (int ti = 0; ti < 3; ti++)
        for (int c = 2; c <= 4; c += 2) {
            ts_type t = types[ti];
            tsk_op op = sep_op(5, 3, TAPS_SHARPEN, (ts_border)(ti + c) % 5, border_value(t), 1);
            ts_rect r = { 3, 5, 60, 41 };
            check_sep(&op, 97, 61, c, t, r, (size_t)t, "misaligned");
        }
}

/* The cases the column walk (v8) takes: RGBA8 gauss and box with N x N
 * taps, N = 3 .. 15 odd, every border mode; images and regions that end
 * inside a strip (256 x 128 outputs) and span several, strips narrower than
 * the halo, and a constant border value that is not a whole number (which
 * v8 leaves to v4). */
static void test_rgba8_walk(void)
{
    static const int sizes[4][2] = { { 1, 1 }, { 5, 3 }, { 40, 200 }, { 600, 300 } };
    int k = 0;
    for (int n = 3; n <= 15; n += 2)
        for (int b = 0; b < 5; b++, k++) {
            const int *sz = sizes[k % 4];
            tsk_op op = sep_op(n, n, TAPS_GAUSS, (ts_border)b, k % 2 ? 77.0f : 254.0f, 0);
            check_sep(&op, sz[0], sz[1], 4, TS_U8, whole(sz[0], sz[1]), 0, "rgba8 walk");
        }
    const ts_rect regions[4] = { { 0, 0, 300, 150 }, { 250, 120, 350, 180 }, { 3, 7, 257, 129 }, { 599, 1, 1, 298 } };
    for (int i = 0; i < 4; i++) {
        tsk_op op = sep_op(3 + 4 * i, 3 + 4 * i, TAPS_GAUSS, (ts_border)(i + 1), 10.0f, 0);
        check_sep(&op, 600, 300, 4, TS_U8, regions[i], 0, "rgba8 walk region");
    }
    tsk_op frac = sep_op(5, 5, TAPS_GAUSS, TS_BORDER_CONSTANT, 77.5f, 0);
    check_sep(&frac, 70, 50, 4, TS_U8, whole(70, 50), 0, "rgba8 walk fractional border");
}

/* Two streams, slots 0 and 1, each switching between two tap sets on every
 * launch, interleaved: every output must be its own op's result. */
static void test_two_streams(void)
{
    enum { ITER = 12, W = 301, H = 203, C = 4 };
    tsk_op ops[4] = { sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0),
                      sep_op(15, 9, TAPS_SHARPEN, TS_BORDER_REPLICATE, 0, 1),
                      sep_op(9, 15, TAPS_SIGNED, TS_BORDER_REFLECT101, 0, 0),
                      sep_op(3, 63, TAPS_GAUSS, TS_BORDER_REFLECT101, 0, 0) };
    ts_view img = timg_whole(W, H, C, TS_U8);
    ts_view ref[4], got = timg_whole(W, H, C, TS_U8);
    cudaStream_t st[2];
    ts_err err;
    timg_random(&img);
    for (int i = 0; i < 4; i++) {
        ref[i] = timg_whole(W, H, C, TS_U8);
        CHECK(tsk_ref_apply(&ops[i], &img, &ref[i], &err) == TS_OK);
    }
    ts_view src = timg_to_device(&img);
    CHECK(cudaStreamCreateWithFlags(&st[0], cudaStreamNonBlocking) == cudaSuccess);
    CHECK(cudaStreamCreateWithFlags(&st[1], cudaStreamNonBlocking) == cudaSuccess);
    int n = tsk_version_count(TSK_CONV_SEP);
    for (int v = 1; v <= n; v++) {
        if (!gc_version_wanted(v)) continue;
        ts_view out[2 * ITER];
        for (int i = 0; i < 2 * ITER; i++) {
            out[i] = timg_device_poisoned(&img);
            int lane = i % 2, which = lane * 2 + (i / 2) % 2;
            tsk_launch l = { st[lane], v, TS_PATH_GLOBAL, lane };
            CHECK_MSG(tsk_gpu_apply(&ops[which], &src, &out[i], &l, &err) == TS_OK, "two streams v%d: %s", v, err.msg);
        }
        CHECK(cudaDeviceSynchronize() == cudaSuccess);
        for (int i = 0; i < 2 * ITER; i++) {
            int which = (i % 2) * 2 + (i / 2) % 2;
            char name[64];
            snprintf(name, sizeof name, "two streams v%d launch %d", v, i);
            timg_from_device(&got, &out[i]);
            double d = timg_compare(&got, &ref[which], tsk_version_fma(TSK_CONV_SEP, v) ? 1.0 : 0.0, name);
            CHECK_MSG(d <= (tsk_version_fma(TSK_CONV_SEP, v) ? 1.0 : 0.0), "%s: differs by %g", name, d);
            timg_device_free(&out[i]);
        }
    }
    cudaStreamDestroy(st[0]);
    cudaStreamDestroy(st[1]);
    timg_device_free(&src);
    for (int i = 0; i < 4; i++) timg_free(&ref[i]);
    timg_free(&img);
    timg_free(&got);
}

/* Bad arguments come back as TS_E_ARG with a message, not a crash. */
static void test_errors(void)
{
    ts_view img = timg_whole(40, 30, 1, TS_U8);
    ts_view src = timg_to_device(&img), dst = timg_device_poisoned(&img), part = src;
    ts_err err;
    tsk_op op = sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0);
    op.u.sep.nx = 4;
    CHECK_EQ_INT(tsk_gpu_apply(&op, &src, &dst, NULL, &err), TS_E_ARG);
    op.u.sep.nx = 65;
    CHECK_EQ_INT(tsk_gpu_apply(&op, &src, &dst, NULL, &err), TS_E_ARG);
    op.u.sep.nx = 5;
    part.x0 = 1;  /* does not hold column 0, which output column 0 needs */
    part.w = 39;
    CHECK_EQ_INT(tsk_gpu_apply(&op, &part, &dst, NULL, &err), TS_E_ARG);
    CHECK(strstr(err.msg, "lacks") != NULL);
    CHECK_EQ_INT(tsk_gpu_apply(&op, &src, &dst, NULL, &err), TS_OK);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    timg_device_free(&src);
    timg_device_free(&dst);
    timg_free(&img);
}

static void time_versions(void)
{
    tsk_op g5 = sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0);
    tsk_op g15 = sep_op(15, 15, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0);
    tsk_op s9 = sep_op(9, 9, TAPS_SHARPEN, TS_BORDER_REFLECT101, 0, 1);
    gc_time_op(&g5, "gauss 5", 7680, 4320, 4, TS_U8);
    gc_time_op(&g15, "gauss 15", 7680, 4320, 4, TS_U8);
    gc_time_op(&s9, "sharpen 9", 7680, 4320, 4, TS_U8);
    gc_time_op(&g5, "gauss 5", 7680, 4320, 1, TS_U8);
    gc_time_op(&g5, "gauss 5", 7680, 4320, 4, TS_F32);
}

int main(void)
{
    check_seed();
    if (!timg_gpu_ready()) return 77;
    if (gc_env("TS_CONV_TIMING")) {
        time_versions();
        return check_exit();
    }
    test_errors();
    test_small();
    test_regions_small();
    test_misaligned();
    test_rgba8_walk();
    test_two_streams();
    if (!gc_env("TS_CONV_SMALL")) {
        test_medium();
        test_large();
    }
    gc_report(TSK_CONV_SEP);
    return check_exit();
}
#endif

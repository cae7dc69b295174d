/* test_gpu_conv2d.c - TSK_CONV_2D on the GPU against tsk_ref_apply: every
 * version on fresh random inputs of odd sizes (1x1, 31x33, 1023x769,
 * 4097x2161), every border mode, 1 to 4 channels, U8/U16/F32, kernels from
 * 1x1 to 15x15 (square and not), the modes LINEAR (with a bias), ABS and
 * MAG, alpha passed through or filtered; destination regions away from the
 * origin with the source exactly tsk_need() of them; views not aligned to
 * their pixel size; two streams using two coefficient slots with changing
 * taps. Outputs sit in poisoned buffers with guard margins. The bit-exact
 * versions must match the reference exactly; the fused multiply-add ones
 * within 1 on integers. The largest difference per version and type is
 * printed at the end. */
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

static const int sizes_k[5] = { 1, 3, 5, 7, 15 };
static const ts_type types[3] = { TS_U8, TS_U16, TS_F32 };

/* A kw x kh kernel: LINEAR (smoothing taps, or signed taps and a bias like
 * emboss), ABS or MAG (signed taps, like sobel). */
static tsk_op c2d_op(int kw, int kh, tsk_conv_mode mode, int smooth, ts_border b, float bv, int alpha)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_CONV_2D;
    op.alpha_passthrough = alpha;
    op.u.conv2d.kw = kw;
    op.u.conv2d.kh = kh;
    gc_random_taps(op.u.conv2d.k, kw * kh, mode == TSK_CONV_LINEAR && smooth);
    if (mode == TSK_CONV_MAG) gc_random_taps(op.u.conv2d.k2, kw * kh, 0);
    op.u.conv2d.mode = mode;
    op.u.conv2d.bias = mode == TSK_CONV_LINEAR && !smooth ? 0.5f : 0.0f;
    op.u.conv2d.border = b;
    op.u.conv2d.border_value = bv;
    return op;
}

static float border_value(ts_type t) { return t == TS_U8 ? 77.0f : t == TS_U16 ? 40000.0f : 0.625f; }

static void check_c2d(const tsk_op *op, int w, int h, int c, ts_type t, ts_rect out, size_t shift, const char *what)
{
    static const char *const modes[3] = { "linear", "abs", "mag" };
    char name[160];
    gc_tol tol;
    int n = op->u.conv2d.kw * op->u.conv2d.kh;
    tol.kind = TSK_CONV_2D;
    tol.f32 = 2e-6 * (1.0 + fabs(op->u.conv2d.bias) + gc_abs_sum(op->u.conv2d.k, n) + gc_abs_sum(op->u.conv2d.k2, n));
    snprintf(name, sizeof name, "%s %s %dx%d %s alpha %d", what, gc_border_names[op->u.conv2d.border],
             op->u.conv2d.kw, op->u.conv2d.kh, modes[op->u.conv2d.mode], op->alpha_passthrough);
    gc_check_op(op, w, h, c, t, out, shift, 0, &tol, name);
}

static ts_rect whole(int w, int h)
{
    ts_rect r = { 0, 0, w, h };
    return r;
}

/* Small images: border x channels x type x kernel size, the kernel height,
 * mode, style and alpha varying along. */
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
                        tsk_op op = c2d_op(sizes_k[n], sizes_k[(n + k % 3) % 5], (tsk_conv_mode)(k % 3), (k / 3) % 2,
                                           (ts_border)b, border_value(t), (k / 2) % 2);
                        check_c2d(&op, sizes[s][0], sizes[s][1], c, t, whole(sizes[s][0], sizes[s][1]), 0, "small");
                    }
}

static void test_regions_small(void)
{
    static const ts_rect regions[6] = { { 37, 45, 101, 60 }, { 0, 0, 50, 40 }, { 150, 110, 50, 40 },
                                        { 199, 0, 1, 150 }, { 13, 149, 187, 1 }, { 100, 75, 1, 1 } };
    for (int i = 0; i < 6; i++)
        for (int b = 0; b < 5; b++) {
            ts_type t = types[(i + b) % 3];
            int c = 1 + (i + 2 * b) % 4;
            tsk_op op = c2d_op(sizes_k[1 + (i + b) % 4], sizes_k[(i + 2 * b) % 5], (tsk_conv_mode)((i + b) % 3), i % 2,
                               (ts_border)b, border_value(t), (i + 1) % 2);
            check_c2d(&op, 200, 150, c, t, regions[i], 0, "region");
        }
}

static void test_medium(void)
{
    static const int k2[5][2] = { { 5, 5 }, { 15, 15 }, { 3, 3 }, { 15, 1 }, { 1, 7 } };
    const ts_rect regions[3] = { whole(1023, 769), { 311, 201, 512, 300 }, { 700, 500, 323, 269 } };
    int k = 0;
    for (int ti = 0; ti < 3; ti++)
        for (int c = 1; c <= 4; c++, k++) {
            ts_type t = types[ti];
            tsk_op op = c2d_op(k2[k % 5][0], k2[k % 5][1], (tsk_conv_mode)(k % 3), k % 2, (ts_border)(k % 5),
                               border_value(t), (k / 2) % 2);
            check_c2d(&op, 1023, 769, c, t, regions[k % 3], 0, "medium");
        }
}

static void test_large(void)
{
    tsk_op a = c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0);
    tsk_op b = c2d_op(3, 3, TSK_CONV_MAG, 0, TS_BORDER_REFLECT101, 0, 1);
    tsk_op c = c2d_op(7, 3, TSK_CONV_ABS, 0, TS_BORDER_WRAP, 0, 0);
    tsk_op d = c2d_op(3, 5, TSK_CONV_LINEAR, 0, TS_BORDER_CONSTANT, 0.25f, 0);
    check_c2d(&a, 4097, 2161, 4, TS_U8, whole(4097, 2161), 0, "large");
    check_c2d(&b, 4097, 2161, 2, TS_U16, whole(4097, 2161), 0, "large");
    check_c2d(&c, 4097, 2161, 1, TS_F32, whole(4097, 2161), 0, "large");
    check_c2d(&d, 4097, 2161, 3, TS_F32, whole(4097, 2161), 0, "large");
}

static void test_misaligned(void)
{
    for (int ti = 0; ti < 3; ti++)
        for (int c = 2; c <= 4; c += 2) {
            ts_type t = types[ti];
            tsk_op op = c2d_op(5, 3, (tsk_conv_mode)ti, 0, (ts_border)((ti + c) % 5), border_value(t), 1);
            ts_rect r = { 3, 5, 60, 41 };
            check_c2d(&op, 97, 61, c, t, r, (size_t)t, "misaligned");
        }
}

/* The cases the column walk (v7) takes: RGBA8, LINEAR (smoothing, or signed
 * with a bias) and ABS, N x N for N = 3, 5, 7, every border mode; images and
 * regions that end inside a strip (256 x 128 outputs) and span several, and
 * a constant border value that is not a whole number (which v7 leaves to
 * v4). */
static void test_rgba8_walk(void)
{
    static const int sizes[4][2] = { { 1, 1 }, { 5, 3 }, { 40, 200 }, { 600, 300 } };
    int k = 0;
    for (int n = 3; n <= 7; n += 2)
        for (int b = 0; b < 5; b++)
            for (int m = 0; m < 3; m++, k++) {
                const int *sz = sizes[k % 4];
                tsk_op op = c2d_op(n, n, m == 2 ? TSK_CONV_ABS : TSK_CONV_LINEAR, m == 0, (ts_border)b,
                                   k % 2 ? 77.0f : 254.0f, 0);
                check_c2d(&op, sz[0], sz[1], 4, TS_U8, whole(sz[0], sz[1]), 0, "rgba8 walk");
            }
    const ts_rect regions[4] = { { 0, 0, 300, 150 }, { 250, 120, 350, 180 }, { 3, 7, 257, 129 }, { 599, 1, 1, 298 } };
    for (int i = 0; i < 4; i++) {
        tsk_op op = c2d_op(3 + 2 * (i % 3), 3 + 2 * (i % 3), i % 2 ? TSK_CONV_ABS : TSK_CONV_LINEAR, i == 0,
                           (ts_border)(i + 1), 10.0f, 0);
        check_c2d(&op, 600, 300, 4, TS_U8, regions[i], 0, "rgba8 walk region");
    }
    tsk_op frac = c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_CONSTANT, 77.5f, 0);
    check_c2d(&frac, 70, 50, 4, TS_U8, whole(70, 50), 0, "rgba8 walk fractional border");
}

static void test_two_streams(void)
{
    enum { ITER = 12, W = 301, H = 203, C = 4 };
    tsk_op ops[4] = { c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0),
                      c2d_op(3, 3, TSK_CONV_MAG, 0, TS_BORDER_REPLICATE, 0, 1),
                      c2d_op(15, 15, TSK_CONV_LINEAR, 0, TS_BORDER_REFLECT101, 0, 1),
                      c2d_op(7, 5, TSK_CONV_ABS, 0, TS_BORDER_REFLECT101, 0, 0) };
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
    int n = tsk_version_count(TSK_CONV_2D);
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
            double d = timg_compare(&got, &ref[which], tsk_version_fma(TSK_CONV_2D, v) ? 1.0 : 0.0, name);
            CHECK_MSG(d <= (tsk_version_fma(TSK_CONV_2D, v) ? 1.0 : 0.0), "%s: differs by %g", name, d);
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

static void test_errors(void)
{
    ts_view img = timg_whole(40, 30, 1, TS_U8);
    ts_view src = timg_to_device(&img), dst = timg_device_poisoned(&img), part = src;
    ts_err err;
    tsk_op op = c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0);
    op.u.conv2d.kw = 17;
    CHECK_EQ_INT(tsk_gpu_apply(&op, &src, &dst, NULL, &err), TS_E_ARG);
    op.u.conv2d.kw = 5;
    op.u.conv2d.mode = (tsk_conv_mode)7;
    CHECK_EQ_INT(tsk_gpu_apply(&op, &src, &dst, NULL, &err), TS_E_ARG);
    op.u.conv2d.mode = TSK_CONV_LINEAR;
    part.y0 = 1;  /* does not hold row 0, which output row 0 needs */
    part.h = 29;
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
    tsk_op g5 = c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0);
    tsk_op sob = c2d_op(3, 3, TSK_CONV_MAG, 0, TS_BORDER_REPLICATE, 0, 1);
    tsk_op k15 = c2d_op(15, 15, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0);
    gc_time_op(&g5, "conv 5x5", 7680, 4320, 4, TS_U8);
    gc_time_op(&sob, "sobel 3x3 mag", 7680, 4320, 4, TS_U8);
    gc_time_op(&k15, "conv 15x15", 7680, 4320, 4, TS_U8);
    gc_time_op(&g5, "conv 5x5", 7680, 4320, 1, TS_U8);
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
    gc_report(TSK_CONV_2D);
    return check_exit();
}
#endif

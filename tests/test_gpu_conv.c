/* test_gpu_conv.c - the convolution kinds on the GPU against tsk_ref_apply,
 * one test body run over both families: TSK_CONV_SEP (1 to 63 taps per axis;
 * gauss-like, sharpen (centre and conv weights) and signed taps) and
 * TSK_CONV_2D (1x1 to 15x15, square and not; LINEAR with or without a bias,
 * ABS and MAG). For each: every version on fresh random inputs of odd sizes
 * (1x1, 31x33, 1023x769, 4097x2161), every border mode, 1 to 4 channels,
 * U8/U16/F32, alpha passed through or filtered; destination regions away
 * from the origin with the source exactly tsk_need() of them; views not
 * aligned to their pixel size; the cases of the RGBA8 column walk; two
 * streams using two coefficient slots with changing taps; bad arguments.
 * Outputs sit in poisoned buffers with guard margins: unwritten pixels and
 * writes outside the region both show. The bit-exact versions must match the
 * reference exactly, the fused multiply-add ones (tsk_version_fma) within 1
 * on integers. The largest difference per version and type is printed at
 * the end.
 *
 *   test_gpu_conv sep | 2d      one family (CTest: test_gpu_conv_sep, test_gpu_conv2d)
 *   test_gpu_conv               both, one after the other (compute-sanitizer)
 *
 * The sizes, borders and types are the body's; what differs between the
 * families is only the op of each case, which conv_family supplies. */
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

static const ts_type types[3] = { TS_U8, TS_U16, TS_F32 };

static float border_value(ts_type t) { return t == TS_U8 ? 77.0f : t == TS_U16 ? 40000.0f : 0.625f; }

static ts_rect whole(int w, int h)
{
    ts_rect r = { 0, 0, w, h };
    return r;
}

/* One case of a fixed size: its op, channels and type. */
typedef struct conv_case {
    tsk_op op;
    int c;
    ts_type type;
    const char *what; /* timing cases only */
} conv_case;

enum { LARGE_CASES = 4, STREAM_OPS = 4 };

/* What a family supplies: the op of each numbered case of each test, and
 * how its ops are named and how far floats may drift. */
typedef struct conv_family {
    const char *arg;  /* the command-line argument */
    tsk_kind kind;
    /* test_small: k counts every case, n picks the tap count */
    tsk_op (*small_op)(int k, int n, ts_border b, float bv);
    /* test_regions_small: region i, border b */
    tsk_op (*region_op)(int i, int b, float bv);
    /* test_medium: case k of 12 */
    tsk_op (*medium_op)(int k, float bv);
    /* test_misaligned: type index ti, channels c */
    tsk_op (*misaligned_op)(int ti, int c, float bv);
    /* test_rgba8_walk: walk_cases ops on whole images, four on regions, one
     * with a constant border that is not a whole number */
    int walk_cases;
    tsk_op (*walk_op)(int k, float bv);
    tsk_op (*walk_region_op)(int i);
    tsk_op (*walk_fraction_op)(void);
    /* test_walks_agree: the walk versions that make the same sums in the
     * same order (column walk; warp walk at 4 and 2 pixels a lane, lean, in
     * one wave), on walk cases 0 .. walks_cases - 1 (those of 3 and 5 taps) */
    int walks[5], walks_cases;
    /* the same for the tensor-core versions that make the same sums in the
     * same order (separable v13's, 2-D v12's), on walk cases 0 ..
     * mmas_cases - 1; the list ends at the first 0 */
    int mmas[5], mmas_cases;
    void (*large)(conv_case cases[LARGE_CASES]);
    void (*stream_ops)(tsk_op ops[STREAM_OPS]);
    /* test_errors: a valid op, two invalid changes of it, and which axis a
     * source short by one pixel at its start lacks (0 = x, 1 = y) */
    tsk_op (*error_op)(void);
    void (*break_op)(tsk_op *op, int which);
    int short_axis;
    int (*timing)(int i, conv_case *cs); /* 0 past the last */
    double (*f32_tol)(const tsk_op *op);
    void (*describe)(const tsk_op *op, char *buf, size_t n);
} conv_family;

static const conv_family *fam;

static void check_case(const tsk_op *op, int w, int h, int c, ts_type t, ts_rect out, size_t shift, const char *what)
{
    char desc[120], name[160];
    gc_tol tol;
    tol.kind = fam->kind;
    tol.f32 = fam->f32_tol(op);
    fam->describe(op, desc, sizeof desc);
    snprintf(name, sizeof name, "%s %s", what, desc);
    gc_check_op(op, w, h, c, t, out, shift, 0, &tol, name);
}

/* ------------------------------------------------------ separable family */

static const int sep_taps[5] = { 1, 3, 5, 15, 63 };

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

/* nx and ny differ; the tap style and alpha vary along */
static tsk_op sep_small(int k, int n, ts_border b, float bv)
{
    return sep_op(sep_taps[n], sep_taps[(n + 1 + k % 3) % 5], k % 3, b, bv, (k / 3) % 2);
}

static tsk_op sep_region(int i, int b, float bv)
{
    return sep_op(sep_taps[1 + (i + b) % 4], sep_taps[(i + 2 * b) % 5], (i + b) % 3, (ts_border)b, bv, i % 2);
}

static tsk_op sep_medium(int k, float bv)
{
    static const int taps[5][2] = { { 5, 5 }, { 15, 15 }, { 63, 1 }, { 1, 63 }, { 3, 15 } };
    return sep_op(taps[k % 5][0], taps[k % 5][1], k % 3, (ts_border)(k % 5), bv, k % 2);
}

static tsk_op sep_misaligned(int ti, int c, float bv)
{
    return sep_op(5, 3, TAPS_SHARPEN, (ts_border)((ti + c) % 5), bv, 1);
}

/* v8's cases: gauss and box with N x N taps, N = 3 .. 15 odd, every border */
static tsk_op sep_walk(int k, float bv) { return sep_op(3 + 2 * (k / 5), 3 + 2 * (k / 5), TAPS_GAUSS, (ts_border)(k % 5), bv, 0); }

static tsk_op sep_walk_region(int i) { return sep_op(3 + 4 * i, 3 + 4 * i, TAPS_GAUSS, (ts_border)(i + 1), 10.0f, 0); }

static tsk_op sep_walk_fraction(void) { return sep_op(5, 5, TAPS_GAUSS, TS_BORDER_CONSTANT, 77.5f, 0); }

static void sep_large(conv_case cs[LARGE_CASES])
{
    cs[0] = (conv_case){ sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0), 4, TS_U8, NULL };
    cs[1] = (conv_case){ sep_op(15, 3, TAPS_SHARPEN, TS_BORDER_REFLECT101, 0, 1), 1, TS_U16, NULL };
    cs[2] = (conv_case){ sep_op(63, 1, TAPS_SIGNED, TS_BORDER_WRAP, 0, 0), 2, TS_F32, NULL };
    cs[3] = (conv_case){ sep_op(1, 15, TAPS_GAUSS, TS_BORDER_CONSTANT, 100.0f, 0), 3, TS_U8, NULL };
}

static void sep_stream_ops(tsk_op ops[STREAM_OPS])
{
    ops[0] = sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0);
    ops[1] = sep_op(15, 9, TAPS_SHARPEN, TS_BORDER_REPLICATE, 0, 1);
    ops[2] = sep_op(9, 15, TAPS_SIGNED, TS_BORDER_REFLECT101, 0, 0);
    ops[3] = sep_op(3, 63, TAPS_GAUSS, TS_BORDER_REFLECT101, 0, 0);
}

static tsk_op sep_error_op(void) { return sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0); }

/* an even tap count, then more than 63 */
static void sep_break(tsk_op *op, int which) { op->u.sep.nx = which == 0 ? 4 : 65; }

static int sep_timing(int i, conv_case *cs)
{
    switch (i) {
    case 0: *cs = (conv_case){ sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0), 4, TS_U8, "gauss 5" }; return 1;
    case 1: *cs = (conv_case){ sep_op(15, 15, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0), 4, TS_U8, "gauss 15" }; return 1;
    case 2: *cs = (conv_case){ sep_op(9, 9, TAPS_SHARPEN, TS_BORDER_REFLECT101, 0, 1), 4, TS_U8, "sharpen 9" }; return 1;
    case 3: *cs = (conv_case){ sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0), 1, TS_U8, "gauss 5" }; return 1;
    case 4: *cs = (conv_case){ sep_op(5, 5, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0), 4, TS_F32, "gauss 5" }; return 1;
    case 5: *cs = (conv_case){ sep_op(3, 3, TAPS_GAUSS, TS_BORDER_REPLICATE, 0, 0), 4, TS_U8, "gauss 3" }; return 1;
    default: return 0;
    }
}

static double sep_f32_tol(const tsk_op *op)
{
    return 2e-6 * (1.0 + fabs(op->u.sep.center_w) +
                   fabs(op->u.sep.conv_w) * gc_abs_sum(op->u.sep.kx, op->u.sep.nx) * gc_abs_sum(op->u.sep.ky, op->u.sep.ny));
}

static void sep_describe(const tsk_op *op, char *buf, size_t n)
{
    snprintf(buf, n, "%s %dx%d taps style alpha %d", gc_border_names[op->u.sep.border], op->u.sep.nx, op->u.sep.ny,
             op->alpha_passthrough);
}

static const conv_family family_sep = {
    "sep", TSK_CONV_SEP, sep_small, sep_region, sep_medium, sep_misaligned,
    7 * 5, sep_walk, sep_walk_region, sep_walk_fraction, { 8, 9, 10, 11, 12 }, 10, { 13, 15, 16, 18, 21 }, 7 * 5, sep_large, sep_stream_ops,
    sep_error_op, sep_break, 0, sep_timing, sep_f32_tol, sep_describe,
};

/* ------------------------------------------------------------ 2-D family */

static const int c2d_sizes[5] = { 1, 3, 5, 7, 15 };

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

/* the kernel height, mode, style and alpha vary along */
static tsk_op c2d_small(int k, int n, ts_border b, float bv)
{
    return c2d_op(c2d_sizes[n], c2d_sizes[(n + k % 3) % 5], (tsk_conv_mode)(k % 3), (k / 3) % 2, b, bv, (k / 2) % 2);
}

static tsk_op c2d_region(int i, int b, float bv)
{
    return c2d_op(c2d_sizes[1 + (i + b) % 4], c2d_sizes[(i + 2 * b) % 5], (tsk_conv_mode)((i + b) % 3), i % 2,
                  (ts_border)b, bv, (i + 1) % 2);
}

static tsk_op c2d_medium(int k, float bv)
{
    static const int k2[5][2] = { { 5, 5 }, { 15, 15 }, { 3, 3 }, { 15, 1 }, { 1, 7 } };
    return c2d_op(k2[k % 5][0], k2[k % 5][1], (tsk_conv_mode)(k % 3), k % 2, (ts_border)(k % 5), bv, (k / 2) % 2);
}

static tsk_op c2d_misaligned(int ti, int c, float bv)
{
    return c2d_op(5, 3, (tsk_conv_mode)ti, 0, (ts_border)((ti + c) % 5), bv, 1);
}

/* v7's cases: LINEAR (smoothing, or signed with a bias) and ABS, N x N for
 * N = 3, 5, 7, every border mode */
static tsk_op c2d_walk(int k, float bv)
{
    int n = 3 + 2 * (k / 15), b = (k / 3) % 5, m = k % 3;
    return c2d_op(n, n, m == 2 ? TSK_CONV_ABS : TSK_CONV_LINEAR, m == 0, (ts_border)b, bv, 0);
}

static tsk_op c2d_walk_region(int i)
{
    return c2d_op(3 + 2 * (i % 3), 3 + 2 * (i % 3), i % 2 ? TSK_CONV_ABS : TSK_CONV_LINEAR, i == 0, (ts_border)(i + 1),
                  10.0f, 0);
}

static tsk_op c2d_walk_fraction(void) { return c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_CONSTANT, 77.5f, 0); }

static void c2d_large(conv_case cs[LARGE_CASES])
{
    cs[0] = (conv_case){ c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0), 4, TS_U8, NULL };
    cs[1] = (conv_case){ c2d_op(3, 3, TSK_CONV_MAG, 0, TS_BORDER_REFLECT101, 0, 1), 2, TS_U16, NULL };
    cs[2] = (conv_case){ c2d_op(7, 3, TSK_CONV_ABS, 0, TS_BORDER_WRAP, 0, 0), 1, TS_F32, NULL };
    cs[3] = (conv_case){ c2d_op(3, 5, TSK_CONV_LINEAR, 0, TS_BORDER_CONSTANT, 0.25f, 0), 3, TS_F32, NULL };
}

static void c2d_stream_ops(tsk_op ops[STREAM_OPS])
{
    ops[0] = c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0);
    ops[1] = c2d_op(3, 3, TSK_CONV_MAG, 0, TS_BORDER_REPLICATE, 0, 1);
    ops[2] = c2d_op(15, 15, TSK_CONV_LINEAR, 0, TS_BORDER_REFLECT101, 0, 1);
    ops[3] = c2d_op(7, 5, TSK_CONV_ABS, 0, TS_BORDER_REFLECT101, 0, 0);
}

static tsk_op c2d_error_op(void) { return c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0); }

/* wider than 15, then a mode that does not exist */
static void c2d_break(tsk_op *op, int which)
{
    if (which == 0) op->u.conv2d.kw = 17;
    else op->u.conv2d.mode = (tsk_conv_mode)7;
}

static int c2d_timing(int i, conv_case *cs)
{
    switch (i) {
    case 0: *cs = (conv_case){ c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0), 4, TS_U8, "conv 5x5" }; return 1;
    case 1: *cs = (conv_case){ c2d_op(3, 3, TSK_CONV_MAG, 0, TS_BORDER_REPLICATE, 0, 1), 4, TS_U8, "sobel 3x3 mag" }; return 1;
    case 2: *cs = (conv_case){ c2d_op(15, 15, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0), 4, TS_U8, "conv 15x15" }; return 1;
    case 3: *cs = (conv_case){ c2d_op(5, 5, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0), 1, TS_U8, "conv 5x5" }; return 1;
    case 4: *cs = (conv_case){ c2d_op(3, 3, TSK_CONV_LINEAR, 1, TS_BORDER_REPLICATE, 0, 0), 4, TS_U8, "conv 3x3" }; return 1;
    default: return 0;
    }
}

static double c2d_f32_tol(const tsk_op *op)
{
    int n = op->u.conv2d.kw * op->u.conv2d.kh;
    return 2e-6 * (1.0 + fabs(op->u.conv2d.bias) + gc_abs_sum(op->u.conv2d.k, n) + gc_abs_sum(op->u.conv2d.k2, n));
}

static void c2d_describe(const tsk_op *op, char *buf, size_t n)
{
    static const char *const modes[3] = { "linear", "abs", "mag" };
    snprintf(buf, n, "%s %dx%d %s alpha %d", gc_border_names[op->u.conv2d.border], op->u.conv2d.kw, op->u.conv2d.kh,
             modes[op->u.conv2d.mode], op->alpha_passthrough);
}

static const conv_family family_2d = {
    "2d", TSK_CONV_2D, c2d_small, c2d_region, c2d_medium, c2d_misaligned,
    3 * 5 * 3, c2d_walk, c2d_walk_region, c2d_walk_fraction, { 7, 8, 9, 10, 11 }, 30, { 12, 13 }, 30, c2d_large, c2d_stream_ops,
    c2d_error_op, c2d_break, 1, c2d_timing, c2d_f32_tol, c2d_describe,
};

/* ------------------------------------------------------------- the body */

/* Small images: the whole cross product of border, channels, type and tap
 * count, the rest varying along with the case number. */
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
                        tsk_op op = fam->small_op(k, n, (ts_border)b, border_value(t));
                        check_case(&op, sizes[s][0], sizes[s][1], c, t, whole(sizes[s][0], sizes[s][1]), 0, "small");
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
            int c = 1 + (i + 2 * b) % 4;
            tsk_op op = fam->region_op(i, b, border_value(t));
            check_case(&op, 200, 150, c, t, regions[i], 0, "region");
        }
}

/* 1023x769: every type and channel count once, borders and taps rotating,
 * whole images and regions touching the edges. */
static void test_medium(void)
{
    const ts_rect regions[3] = { whole(1023, 769), { 311, 201, 512, 300 }, { 700, 500, 323, 269 } };
    int k = 0;
    for (int ti = 0; ti < 3; ti++)
        for (int c = 1; c <= 4; c++, k++) {
            ts_type t = types[ti];
            tsk_op op = fam->medium_op(k, border_value(t));
            check_case(&op, 1023, 769, c, t, regions[k % 3], 0, "medium");
        }
}

/* 4097x2161: a few cases (the reference is slow at this size). */
static void test_large(void)
{
    conv_case cs[LARGE_CASES];
    fam->large(cs);
    for (int i = 0; i < LARGE_CASES; i++) check_case(&cs[i].op, 4097, 2161, cs[i].c, cs[i].type, whole(4097, 2161), 0, "large");
}

/* Views whose start is one channel off the pixel size (c = 2, 4): the fast
 * versions must notice and still be right. */
static void test_misaligned(void)
{
    for (int ti = 0; ti < 3; ti++)
        for (int c = 2; c <= 4; c += 2) {
            ts_type t = types[ti];
            tsk_op op = fam->misaligned_op(ti, c, border_value(t));
            ts_rect r = { 3, 5, 60, 41 };
            check_case(&op, 97, 61, c, t, r, (size_t)t, "misaligned");
        }
}

/* The cases the column walk takes (conv_sep v8, conv2d v7): RGBA8, every
 * border mode; images and regions that end inside a strip (256 x 128
 * outputs) and span several, strips narrower than the halo, and a constant
 * border value that is not a whole number (which the walk leaves to v4). */
static void test_rgba8_walk(void)
{
    static const int sizes[4][2] = { { 1, 1 }, { 5, 3 }, { 40, 200 }, { 600, 300 } };
    for (int k = 0; k < fam->walk_cases; k++) {
        const int *sz = sizes[k % 4];
        tsk_op op = fam->walk_op(k, k % 2 ? 77.0f : 254.0f);
        check_case(&op, sz[0], sz[1], 4, TS_U8, whole(sz[0], sz[1]), 0, "rgba8 walk");
    }
    const ts_rect regions[4] = { { 0, 0, 300, 150 }, { 250, 120, 350, 180 }, { 3, 7, 257, 129 }, { 599, 1, 1, 298 } };
    for (int i = 0; i < 4; i++) {
        tsk_op op = fam->walk_region_op(i);
        check_case(&op, 600, 300, 4, TS_U8, regions[i], 0, "rgba8 walk region");
    }
    /* 3 taps on a region whose source view, in an allocation of its own
     * (aligned rows, as an engine tile's), starts an odd number of pixels
     * left of the destination's strips: each lane's load must still be
     * aligned, or go pixel by pixel */
    tsk_op odd = fam->walk_region_op(0);
    check_case(&odd, 600, 300, 4, TS_U8, (ts_rect){ 3, 7, 257, 129 }, 0, "rgba8 walk, source an odd pixel off");
    tsk_op frac = fam->walk_fraction_op();
    check_case(&frac, 70, 50, 4, TS_U8, whole(70, 50), 0, "rgba8 walk fractional border");
}

/* versions[0..nv-1] give the same bytes on the first `cases` walk ops,
 * on an image whose width ends inside a strip (a tile) of every width. */
static void versions_agree(const int *versions, int nv, int cases, const char *what)
{
    ts_view img = timg_whole(1001, 131, 4, TS_U8), got = timg_whole(1001, 131, 4, TS_U8), first = got;
    first.data = NULL;
    ts_err err;
    timg_random(&img);
    ts_view src = timg_to_device(&img);
    for (int k = 0; k < cases; k++) {
        tsk_op op = fam->walk_op(k, 77.0f);
        for (int i = 0; i < nv; i++) {
            if (!gc_version_wanted(versions[i])) continue;
            ts_view out = timg_device_poisoned(&img);
            tsk_launch l = { 0, versions[i], TS_PATH_GLOBAL, 0 };
            CHECK_MSG(tsk_gpu_apply(&op, &src, &out, &l, &err) == TS_OK, "%s v%d: %s", what, versions[i], err.msg);
            CHECK(cudaDeviceSynchronize() == cudaSuccess);
            timg_from_device(&got, &out);
            timg_device_free(&out);
            if (!first.data) {
                first = timg_whole(1001, 131, 4, TS_U8);
                memcpy(first.data, got.data, got.pitch * (size_t)got.h);
                continue;
            }
            char name[64];
            snprintf(name, sizeof name, "%s v%d against v%d, case %d", what, versions[i], versions[0], k);
            CHECK_MSG(timg_compare(&got, &first, 0.0, name) == 0.0, "%s differs", name);
        }
        if (first.data) timg_free(&first);
    }
    timg_device_free(&src);
    timg_free(&img);
    timg_free(&got);
}

/* The walks make the same sums in the same order, so they give the same
 * bytes, not only bytes within 1 of the reference: 3 and 5 taps, every
 * border. So do the tensor-core versions, at 3 to 15 taps. */
static void test_walks_agree(void)
{
    versions_agree(fam->walks, (int)(sizeof fam->walks / sizeof fam->walks[0]), fam->walks_cases, "walk");
    int n = 0;
    while (n < (int)(sizeof fam->mmas / sizeof fam->mmas[0]) && fam->mmas[n]) n++;
    if (n > 1) versions_agree(fam->mmas, n, fam->mmas_cases, "tensor");
}

/* Two streams, slots 0 and 1, each switching between two tap sets on every
 * launch, interleaved: every output must be its own op's result. */
static void test_two_streams(void)
{
    enum { ITER = 12, W = 301, H = 203, C = 4 };
    tsk_op ops[STREAM_OPS];
    fam->stream_ops(ops);
    ts_view img = timg_whole(W, H, C, TS_U8);
    ts_view ref[STREAM_OPS], got = timg_whole(W, H, C, TS_U8);
    cudaStream_t st[2];
    ts_err err;
    timg_random(&img);
    for (int i = 0; i < STREAM_OPS; i++) {
        ref[i] = timg_whole(W, H, C, TS_U8);
        CHECK(tsk_ref_apply(&ops[i], &img, &ref[i], &err) == TS_OK);
    }
    ts_view src = timg_to_device(&img);
    CHECK(cudaStreamCreateWithFlags(&st[0], cudaStreamNonBlocking) == cudaSuccess);
    CHECK(cudaStreamCreateWithFlags(&st[1], cudaStreamNonBlocking) == cudaSuccess);
    int n = tsk_version_count(fam->kind);
    for (int v = 1; v <= n; v++) {
        if (!gc_version_wanted(v)) continue;
        double tol = tsk_version_fma(fam->kind, v) ? 1.0 : 0.0;
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
            double d = timg_compare(&got, &ref[which], tol, name);
            CHECK_MSG(d <= tol, "%s: differs by %g", name, d);
            timg_device_free(&out[i]);
        }
    }
    cudaStreamDestroy(st[0]);
    cudaStreamDestroy(st[1]);
    timg_device_free(&src);
    for (int i = 0; i < STREAM_OPS; i++) timg_free(&ref[i]);
    timg_free(&img);
    timg_free(&got);
}

/* Bad arguments come back as TS_E_ARG with a message, not a crash. */
static void test_errors(void)
{
    ts_view img = timg_whole(40, 30, 1, TS_U8);
    ts_view src = timg_to_device(&img), dst = timg_device_poisoned(&img), part = src;
    ts_err err;
    const tsk_op good = fam->error_op();
    for (int which = 0; which < 2; which++) {
        tsk_op op = good;
        fam->break_op(&op, which);
        CHECK_EQ_INT(tsk_gpu_apply(&op, &src, &dst, NULL, &err), TS_E_ARG);
    }
    /* does not hold column (row) 0, which output column (row) 0 needs */
    if (fam->short_axis == 0) {
        part.x0 = 1;
        part.w = 39;
    } else {
        part.y0 = 1;
        part.h = 29;
    }
    CHECK_EQ_INT(tsk_gpu_apply(&good, &part, &dst, NULL, &err), TS_E_ARG);
    CHECK(strstr(err.msg, "lacks") != NULL);
    CHECK_EQ_INT(tsk_gpu_apply(&good, &src, &dst, NULL, &err), TS_OK);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    timg_device_free(&src);
    timg_device_free(&dst);
    timg_free(&img);
}

static void time_versions(void)
{
    conv_case cs;
    for (int i = 0; fam->timing(i, &cs); i++) gc_time_op(&cs.op, cs.what, 7680, 4320, cs.c, cs.type);
}

static void run_family(const conv_family *f)
{
    fam = f;
    gc_reset();
    fprintf(stderr, "family %s (%s)\n", f->arg, tsk_kind_info_of(f->kind)->stage);
    if (gc_env("TS_CONV_TIMING")) {
        time_versions();
        return;
    }
    test_errors();
    test_small();
    test_regions_small();
    test_misaligned();
    test_rgba8_walk();
    test_walks_agree();
    test_two_streams();
    if (!gc_env("TS_CONV_SMALL")) {
        test_medium();
        test_large();
    }
    gc_report(f->kind);
}

int main(int argc, char **argv)
{
    static const conv_family *const families[2] = { &family_sep, &family_2d };
    int ran = 0;
    if (argc > 2 || (argc == 2 && strcmp(argv[1], "sep") != 0 && strcmp(argv[1], "2d") != 0)) {
        fprintf(stderr, "usage: %s [sep|2d]\n", argv[0]);
        return 2;
    }
    check_seed();
    if (!timg_gpu_ready()) return 77;
    for (int i = 0; i < 2; i++)
        if (argc < 2 || strcmp(argv[1], families[i]->arg) == 0) {
            run_family(families[i]);
            ran++;
        }
    CHECK(ran >= 1);
    return check_exit();
}
#endif

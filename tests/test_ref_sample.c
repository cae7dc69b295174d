/* test_ref_sample.c - the reference resampler: identity maps copy (every
 * interpolation), a 2x upscale of a 2x2 image worked out by hand (nearest,
 * bilinear, replicate and constant borders), nearest taps through every
 * border, the eight orientations written as affine maps against ORIENT, a
 * 2x bilinear downscale against 2x2 means, area shrinks against block
 * means and against the overlap integral in double, bicubic weights worked
 * out by hand, and a NaN map. */
#include "check.h"
#include "testimg.h"
#include "test_ref_util.h"

#include <math.h>

static tsk_op sample_op(const float inv[6], int out_w, int out_h, tsk_interp interp, ts_border b, float bv)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_SAMPLE;
    memcpy(op.u.sample.inv, inv, sizeof op.u.sample.inv);
    op.u.sample.out_w = out_w;
    op.u.sample.out_h = out_h;
    op.u.sample.interp = interp;
    op.u.sample.border = b;
    op.u.sample.border_value = bv;
    return op;
}

/* inv = identity: sx = x + 0.5 lands on pixel centres, so nearest reads
 * (x, y) and bilinear has fx = fy = 0: both copy, whatever the border. */
static const char *const interp_names[] = { "nearest", "bilinear", "area", "bicubic" };

/* Area at footprint 1 weighs the centre pixel 1 and its neighbour 0;
 * bicubic's taps at distances -1, 0, 1, 2 weigh 0, 1, 0, 0. */
static void test_identity_copies(void)
{
    static const float id[6] = { 1, 0, 0, 0, 1, 0 };
    for (int round = 0; round < 40; round++) {
        ts_view src = timg_whole(tref_randint(1, 19), tref_randint(1, 19), tref_randint(1, 4), tref_randtype());
        tsk_op op = sample_op(id, src.w, src.h, (tsk_interp)(round % 4), (ts_border)(round % 5), 0.5f);
        ts_view dst;
        timg_random(&src);
        dst = tref_apply_whole(&op, &src);
        CHECK_MSG(tref_same_bytes(&dst, &src), "identity %s %s is not a copy", interp_names[round % 4],
                  tref_border_names[round % 5]);
        timg_free(&dst);
        timg_free(&src);
    }
}

/* 2x upscale of   10 20
 *                 30 40   with inv = diag(0.5, 0.5): sx = 0.5 (x + 0.5)
 * = 0.25, 0.75, 1.25, 1.75 for x = 0..3 (sy likewise).
 * Nearest: floor 0 0 1 1: each pixel becomes a 2x2 block.
 * Bilinear: px = sx - 0.5 = -0.25, 0.25, 0.75, 1.25, so x0 = -1 0 0 1 and
 * fx = 0.75 0.25 0.75 0.25. Replicate: x = 0 mixes pixel 0 with itself
 * (10), x = 1: 0.75*10 + 0.25*20 = 12.5, x = 2: 17.5, x = 3: 20; rows mix
 * the same way: row 1 = 0.75 row 0 + 0.25 row 3 = 15 17.5 22.5 25. All
 * weights are multiples of 1/16, so F32 is exact and U8 rounds the halves
 * up (12.5 -> 13).
 * Constant 100 at (0,0): taps (-1,-1) (0,-1) (-1,0) are 100, (0,0) is 10,
 * weights (1-fx)(1-fy) = 0.0625, fx(1-fy) = 0.1875, (1-fx)fy = 0.1875,
 * fx fy = 0.5625: 6.25 + 18.75 + 18.75 + 5.625 = 49.375. At (1,0): x0 = 0,
 * fx = 0.25; taps (0,-1) (1,-1) = 100, (0,0) = 10, (1,0) = 20, weights
 * 0.1875 0.0625 0.5625 0.1875: 18.75 + 6.25 + 5.625 + 3.75 = 34.375. */
static void test_upscale_2x2(void)
{
    static const float in[4] = { 10, 20, 30, 40 };
    static const float inv[6] = { 0.5f, 0, 0, 0, 0.5f, 0 };
    static const float nearest_w[16] = { 10, 10, 20, 20, 10, 10, 20, 20, 30, 30, 40, 40, 30, 30, 40, 40 };
    static const float rep_f[16] = { 10, 12.5f, 17.5f, 20, 15, 17.5f, 22.5f, 25,
                                     25, 27.5f, 32.5f, 35, 30, 32.5f, 37.5f, 40 };
    static const float rep_u8[16] = { 10, 13, 18, 20, 15, 18, 23, 25, 25, 28, 33, 35, 30, 33, 38, 40 };
    static const float const_f[16] = { 49.375f, 34.375f, 38.125f, 55, 36.25f, 17.5f, 22.5f, 43.75f,
                                        43.75f, 27.5f, 32.5f, 51.25f, 60.625f, 49.375f, 53.125f, 66.25f };
    static const float const_u8[16] = { 49, 34, 38, 55, 36, 18, 23, 44, 44, 28, 33, 51, 61, 49, 53, 66 };
    ts_view f = tref_view(2, 2, 1, TS_F32, in), u = tref_view(2, 2, 1, TS_U8, in), d;
    tsk_op op = sample_op(inv, 4, 4, TSK_NEAREST, TS_BORDER_REPLICATE, 100);
    d = tref_apply_whole(&op, &u);
    tref_expect(&d, nearest_w, 0, "upscale nearest u8");
    timg_free(&d);
    op.u.sample.interp = TSK_BILINEAR;
    d = tref_apply_whole(&op, &f);
    tref_expect(&d, rep_f, 0, "upscale bilinear replicate f32");
    timg_free(&d);
    d = tref_apply_whole(&op, &u);
    tref_expect(&d, rep_u8, 0, "upscale bilinear replicate u8");
    timg_free(&d);
    op.u.sample.border = TS_BORDER_CONSTANT;
    d = tref_apply_whole(&op, &f);
    tref_expect(&d, const_f, 0, "upscale bilinear constant f32");
    timg_free(&d);
    d = tref_apply_whole(&op, &u);
    tref_expect(&d, const_u8, 0, "upscale bilinear constant u8");
    timg_free(&d);
    timg_free(&f);
    timg_free(&u);
}

/* Nearest taps through each border. Input 3x2:  1 2 3 / 4 5 6.
 * Along x: sx = (x + 0.5) - 1.75, sy = 1.5 (row 1: 4 5 6); for x = 0..5
 * floor(sx) = -2 -1 0 1 2 3:
 *   replicate  4 4 4 5 6 6
 *   reflect101 (-2 -> 2, -1 -> 1, 3 -> 1)  6 5 4 5 6 5
 *   reflect    (-2 -> 1, -1 -> 0, 3 -> 2)  5 4 4 5 6 6
 *   wrap       (-2 -> 1, -1 -> 2, 3 -> 0)  5 6 4 5 6 4
 *   constant 9                              9 9 4 5 6 9
 * Along y: sx = 0.5 (column 0: 1 over 4), sy = (y + 0.5) - 1.75, floor =
 * -2 -1 0 1 for y = 0..3 with H = 2:
 *   replicate 1 1 1 4; reflect101 (-2 -> 0, -1 -> 1) 1 4 1 4;
 *   reflect (-2 -> 1, -1 -> 0) 4 1 1 4; wrap (-2 -> 0, -1 -> 1) 1 4 1 4;
 *   constant 9 9 1 4. */
static void test_nearest_borders(void)
{
    static const float in[6] = { 1, 2, 3, 4, 5, 6 };
    static const float inv_x[6] = { 1, 0, -1.75f, 0, 0, 1.5f }, inv_y[6] = { 0, 0, 0.5f, 0, 1, -1.75f };
    static const float want_x[5][6] = {
        { 4, 4, 4, 5, 6, 6 }, { 6, 5, 4, 5, 6, 5 }, { 5, 4, 4, 5, 6, 6 }, { 5, 6, 4, 5, 6, 4 }, { 9, 9, 4, 5, 6, 9 },
    };
    static const float want_y[5][4] = {
        { 1, 1, 1, 4 }, { 1, 4, 1, 4 }, { 4, 1, 1, 4 }, { 1, 4, 1, 4 }, { 9, 9, 1, 4 },
    };
    ts_view src = tref_view(3, 2, 1, TS_U16, in);
    for (int b = 0; b < 5; b++) {
        char name[64];
        tsk_op op = sample_op(inv_x, 6, 1, TSK_NEAREST, (ts_border)b, 9);
        ts_view d = tref_apply_whole(&op, &src);
        snprintf(name, sizeof name, "nearest along x %s", tref_border_names[b]);
        tref_expect(&d, want_x[b], 0, name);
        timg_free(&d);
        op = sample_op(inv_y, 1, 4, TSK_NEAREST, (ts_border)b, 9);
        d = tref_apply_whole(&op, &src);
        snprintf(name, sizeof name, "nearest along y %s", tref_border_names[b]);
        tref_expect(&d, want_y[b], 0, name);
        timg_free(&d);
    }
    timg_free(&src);
}

/* The affine map that is orientation code (tsk.h): with X = x + 0.5 and
 * Y = y + 0.5, W - X floors to W-1-x exactly, so nearest reads exactly
 * the pixel ORIENT does, and bilinear lands on centres (weights 1, 0, 0,
 * 0) and reads the same. */
static void orient_as_affine(int code, int W, int H, float inv[6])
{
    float fw = (float)W, fh = (float)H;
    static const float zero[6] = { 0, 0, 0, 0, 0, 0 };
    memcpy(inv, zero, sizeof zero);
    switch (code) {
    case 1: inv[0] = 1; inv[4] = 1; break;                              /* (X, Y) */
    case 2: inv[0] = -1; inv[2] = fw; inv[4] = 1; break;                /* (W-X, Y) */
    case 3: inv[0] = -1; inv[2] = fw; inv[4] = -1; inv[5] = fh; break;  /* (W-X, H-Y) */
    case 4: inv[0] = 1; inv[4] = -1; inv[5] = fh; break;                /* (X, H-Y) */
    case 5: inv[1] = 1; inv[3] = 1; break;                              /* (Y, X) */
    case 6: inv[1] = 1; inv[3] = -1; inv[5] = fh; break;                /* (Y, H-X) */
    case 7: inv[1] = -1; inv[2] = fw; inv[3] = -1; inv[5] = fh; break;  /* (W-Y, H-X) */
    default: inv[1] = -1; inv[2] = fw; inv[3] = 1; break;               /* (W-Y, X) */
    }
}

static void test_orientations_as_affine(void)
{
    for (int round = 0; round < 16; round++) {
        int W = tref_randint(1, 15), H = tref_randint(1, 15);
        ts_view src = timg_whole(W, H, tref_randint(1, 4), tref_randtype());
        timg_random(&src);
        for (int code = 1; code <= 8; code++) {
            float inv[6];
            tsk_op orient, samp;
            ts_view a, b;
            int ow, oh;
            memset(&orient, 0, sizeof orient);
            orient.kind = TSK_ORIENT;
            orient.u.orient.code = code;
            tsk_out_size(&orient, W, H, &ow, &oh);
            orient_as_affine(code, W, H, inv);
            samp = sample_op(inv, ow, oh, (tsk_interp)(round & 1), (ts_border)(round % 5), 0.5f);
            a = tref_apply_whole(&orient, &src);
            b = tref_apply_whole(&samp, &src);
            CHECK_MSG(tref_same_bytes(&a, &b), "orient %d vs %s sample on %dx%dx%d %s", code,
                      round & 1 ? "bilinear" : "nearest", W, H, src.c, tref_type_names[src.type]);
            timg_free(&a);
            timg_free(&b);
        }
        timg_free(&src);
    }
}

/* inv = diag(2, 2): px = 2x + 0.5, so bilinear weighs the 2x2 block at
 * (2x, 2y) by a quarter each: the block mean (never a border tap). */
static void test_downscale_is_block_mean(void)
{
    static const float inv[6] = { 2, 0, 0, 0, 2, 0 };
    for (int round = 0; round < 10; round++) {
        int ow = tref_randint(1, 9), oh = tref_randint(1, 9), c = tref_randint(1, 4), bad = 0;
        ts_view src = timg_whole(2 * ow, 2 * oh, c, TS_F32), d;
        tsk_op op = sample_op(inv, ow, oh, TSK_BILINEAR, (ts_border)(round % 5), 0.5f);
        timg_random(&src);
        d = tref_apply_whole(&op, &src);
        for (int y = 0; y < oh; y++)
            for (int x = 0; x < ow; x++)
                for (int ch = 0; ch < c; ch++) {
                    double m = (timg_get(&src, 2 * x, 2 * y, ch) + timg_get(&src, 2 * x + 1, 2 * y, ch) +
                                timg_get(&src, 2 * x, 2 * y + 1, ch) + timg_get(&src, 2 * x + 1, 2 * y + 1, ch)) / 4;
                    if (fabs(m - timg_get(&d, x, y, ch)) > 1e-6) bad++;
                }
        CHECK_MSG(bad == 0, "2x downscale vs block mean: %d values differ", bad);
        timg_free(&d);
        timg_free(&src);
    }
}

/* A tap of a float image through tref_fold, or the border value. */
static float tap(const ts_view *v, int x, int y, int ch, ts_border b, float bv)
{
    int fx = tref_fold(x, v->w, b), fy = tref_fold(y, v->h, b);
    return (fx < 0 || fy < 0) ? bv : timg_get(v, fx, fy, ch);
}

/* Bilinear in the order tsk.h fixes, written out here in float, for
 * random rotations and scales: the reference matches bit for bit. */
static void test_bilinear_order_bit_exact(void)
{
    for (int round = 0; round < 20; round++) {
        int w = tref_randint(1, 12), h = tref_randint(1, 12), c = tref_randint(1, 4), bad = 0;
        int ow = tref_randint(1, 16), oh = tref_randint(1, 16);
        float a = tref_randf(-3.2f, 3.2f), sc = tref_randf(0.3f, 3), bv = tref_randf(0, 1);
        float inv[6] = { sc * cosf(a), -sc * sinf(a), tref_randf(-4, 4), sc * sinf(a), sc * cosf(a), tref_randf(-4, 4) };
        ts_border b = (ts_border)(round % 5);
        ts_view src = timg_whole(w, h, c, TS_F32), d;
        tsk_op op = sample_op(inv, ow, oh, TSK_BILINEAR, b, bv);
        timg_random(&src);
        d = tref_apply_whole(&op, &src);
        for (int y = 0; y < oh; y++)
            for (int x = 0; x < ow; x++) {
                float X = (float)x + 0.5f, Y = (float)y + 0.5f;
                float sx = inv[0] * X + inv[1] * Y + inv[2], sy = inv[3] * X + inv[4] * Y + inv[5];
                float px = sx - 0.5f, py = sy - 0.5f, fx0 = floorf(px), fy0 = floorf(py);
                float fx = px - fx0, fy = py - fy0;
                int x0 = (int)fx0, y0 = (int)fy0;
                for (int ch = 0; ch < c; ch++) {
                    float want = (1 - fx) * (1 - fy) * tap(&src, x0, y0, ch, b, bv) +
                                 fx * (1 - fy) * tap(&src, x0 + 1, y0, ch, b, bv) +
                                 (1 - fx) * fy * tap(&src, x0, y0 + 1, ch, b, bv) +
                                 fx * fy * tap(&src, x0 + 1, y0 + 1, ch, b, bv);
                    bad += memcmp(&want, &((float *)(d.data + (size_t)y * d.pitch))[x * c + ch], 4) != 0;
                }
            }
        CHECK_MSG(bad == 0, "bilinear %s: %d values not bit-exact", tref_border_names[b], bad);
        timg_free(&d);
        timg_free(&src);
    }
}

/* inv = diag(k, k), k integer: sx = k x + k/2, p = k x + (k-1)/2, half
 * box k/2: the taps k x .. k x + k - 1 weigh 1 (their whole pixel lies in
 * the box) and the last tap k x + k weighs 0, so area is the k x k block
 * mean, whatever the border (no tap outside is weighed). */
static void test_area_is_block_mean(void)
{
    for (int round = 0; round < 24; round++) {
        int k = 2 + round % 4, ow = tref_randint(1, 7), oh = tref_randint(1, 7), c = tref_randint(1, 4), bad = 0;
        float inv[6] = { (float)k, 0, 0, 0, (float)k, 0 };
        ts_view src = timg_whole(k * ow, k * oh, c, TS_F32), d;
        tsk_op op = sample_op(inv, ow, oh, TSK_AREA, (ts_border)(round % 5), 0.5f);
        timg_random(&src);
        d = tref_apply_whole(&op, &src);
        for (int y = 0; y < oh; y++)
            for (int x = 0; x < ow; x++)
                for (int ch = 0; ch < c; ch++) {
                    double m = 0;
                    for (int j = 0; j < k; j++)
                        for (int i = 0; i < k; i++) m += timg_get(&src, k * x + i, k * y + j, ch);
                    if (fabs(m / (k * k) - timg_get(&d, x, y, ch)) > 1e-6) bad++;
                }
        CHECK_MSG(bad == 0, "area %dx downscale vs block mean: %d values differ", k, bad);
        timg_free(&d);
        timg_free(&src);
    }
}

/* Area at any factor (1.3x to 5x, different per axis) is the mean of the
 * input over the output pixel's box, the box being the pixel mapped back:
 * integrated in double, pixel by pixel, with replicate borders. */
static double box_mean(const ts_view *src, double cx, double cy, double hx, double hy, int ch)
{
    double sum = 0, area = 0;
    for (int j = (int)floor(cy - hy) - 1; j <= (int)floor(cy + hy) + 1; j++)
        for (int i = (int)floor(cx - hx) - 1; i <= (int)floor(cx + hx) + 1; i++) {
            double ox = fmin(i + 1, cx + hx) - fmax(i, cx - hx), oy = fmin(j + 1, cy + hy) - fmax(j, cy - hy);
            if (ox <= 0 || oy <= 0) continue;
            sum += ox * oy * timg_get(src, tref_fold(i, src->w, TS_BORDER_REPLICATE),
                                      tref_fold(j, src->h, TS_BORDER_REPLICATE), ch);
            area += ox * oy;
        }
    return sum / area;
}

static void test_area_is_box_integral(void)
{
    for (int round = 0; round < 12; round++) {
        float kx = tref_randf(1.3f, 5), ky = tref_randf(1.3f, 5);
        int w = tref_randint(8, 40), h = tref_randint(8, 40), c = tref_randint(1, 4), bad = 0;
        int ow = (int)(w / kx), oh = (int)(h / ky);
        float inv[6] = { kx, 0, tref_randf(-2, 2), 0, ky, tref_randf(-2, 2) };
        ts_view src = timg_whole(w, h, c, TS_F32), d;
        tsk_op op = sample_op(inv, ow > 0 ? ow : 1, oh > 0 ? oh : 1, TSK_AREA, TS_BORDER_REPLICATE, 0);
        timg_random(&src);
        d = tref_apply_whole(&op, &src);
        for (int y = 0; y < d.h; y++)
            for (int x = 0; x < d.w; x++)
                for (int ch = 0; ch < c; ch++) {
                    double cx = (double)inv[0] * (x + 0.5) + inv[2], cy = (double)inv[4] * (y + 0.5) + inv[5];
                    double want = box_mean(&src, cx, cy, kx / 2.0, ky / 2.0, ch);
                    if (fabs(want - timg_get(&d, x, y, ch)) > 2e-5) {
                        if (bad++ < 4)
                            fprintf(stderr, "area %.3fx%.3f at (%d,%d): got %.7f want %.7f\n", kx, ky, x, y,
                                    timg_get(&d, x, y, ch), want);
                    }
                }
        CHECK_MSG(bad == 0, "area %.3f x %.3f vs the box integral: %d values differ", kx, ky, bad);
        timg_free(&d);
        timg_free(&src);
    }
}

/* Bicubic, enlarging 2x along x only, of an impulse 1 at pixel 3 of a row
 * of 8: sx = 0.5 (x + 0.5), p = sx - 0.5 = 0.5 x - 0.25. For x = 5, p =
 * 2.25: taps 1..4 at d = -1.25, -0.25, 0.75, 1.75, Catmull-Rom weights
 * -0.0703125, 0.8671875, 0.2265625, -0.0234375 (sum 1), so pixel 3 gives
 * 0.2265625. x = 6 (p = 2.75): pixel 3 at d = 0.25: 0.8671875. x = 7 (p =
 * 3.25): d = -0.25: 0.8671875. x = 8 (p = 3.75): d = -0.75: 0.2265625.
 * x = 9: d = -1.25: -0.0703125; x = 4: d = 1.25: -0.0703125; x = 3 (p =
 * 1.25): d = 1.75: -0.0234375; x = 10: d = -1.75: -0.0234375. Rows: the
 * identity (weights 0 1 0 0). All weights are exact in float. */
static void test_bicubic_by_hand(void)
{
    static const float in[8] = { 0, 0, 0, 1, 0, 0, 0, 0 };
    static const float inv[6] = { 0.5f, 0, 0, 0, 1, 0 };
    static const float want[16] = { 0, 0, 0, -0.0234375f, -0.0703125f, 0.2265625f, 0.8671875f, 0.8671875f,
                                     0.2265625f, -0.0703125f, -0.0234375f, 0, 0, 0, 0, 0 };
    ts_view src = tref_view(8, 1, 1, TS_F32, in), d;
    tsk_op op = sample_op(inv, 16, 1, TSK_BICUBIC, TS_BORDER_CONSTANT, 0);
    d = tref_apply_whole(&op, &src);
    tref_expect(&d, want, 0, "bicubic 2x impulse");
    timg_free(&d);
    timg_free(&src);
}

/* The footprint: enlarging or a pure rotation is 1 (bilinear's tent for
 * area), a uniform shrink by s under any rotation is 1/s, and it stops at
 * TSK_MAX_FOOTPRINT; area reads ceil(k + 1) taps, bicubic ceil(4k). */
static void test_footprint(void)
{
    for (int i = 0; i < 20; i++) {
        float a = tref_randf(-3.2f, 3.2f), s = tref_randf(0.05f, 1.0f), kx, ky;
        float inv[6] = { cosf(a) / s, -sinf(a) / s, 0, sinf(a) / s, cosf(a) / s, 0 };
        tsk_op op = sample_op(inv, 4, 4, TSK_AREA, TS_BORDER_REPLICATE, 0);
        tsk_sample_footprint(&op, &kx, &ky);
        CHECK_NEAR(kx, s > 0.999f ? 1.0f : 1.0f / s, 1e-4 / s);
        CHECK_NEAR(ky, s > 0.999f ? 1.0f : 1.0f / s, 1e-4 / s);
        op.u.sample.inv[0] *= s; op.u.sample.inv[1] *= s; op.u.sample.inv[3] *= s; op.u.sample.inv[4] *= s;
        tsk_sample_footprint(&op, &kx, &ky);
        CHECK(kx == 1.0f && ky == 1.0f);
    }
    {
        float inv[6] = { 1000, 0, 0, 0, 0.5f, 0 }, kx, ky;
        tsk_op op = sample_op(inv, 4, 4, TSK_AREA, TS_BORDER_REPLICATE, 0);
        tsk_sample_footprint(&op, &kx, &ky);
        CHECK(kx == TSK_MAX_FOOTPRINT && ky == 1.0f);
    }
    CHECK_EQ_INT(tsk_sample_taps(TSK_AREA, 1), 2);
    CHECK_EQ_INT(tsk_sample_taps(TSK_AREA, 4), 5);
    CHECK_EQ_INT(tsk_sample_taps(TSK_AREA, 2.5f), 4);
    CHECK_EQ_INT(tsk_sample_taps(TSK_BICUBIC, 1), 4);
    CHECK_EQ_INT(tsk_sample_taps(TSK_BICUBIC, 2.5f), 10);
}

/* A NaN coefficient makes sx NaN; ts_coord_clamp sends it to -2^30, which
 * replicate maps to column 0 and constant to the border value. */
static void test_nan_map(void)
{
    static const float in[6] = { 1, 2, 3, 4, 5, 6 };
    float inv[6] = { NAN, 0, 0, 0, 1, 0 };
    static const float rep[6] = { 1, 1, 1, 4, 4, 4 }, con[6] = { 7, 7, 7, 7, 7, 7 };
    ts_view src = tref_view(3, 2, 1, TS_U8, in), d;
    tsk_op op = sample_op(inv, 3, 2, TSK_NEAREST, TS_BORDER_REPLICATE, 7);
    d = tref_apply_whole(&op, &src);
    tref_expect(&d, rep, 0, "NaN map, replicate");
    timg_free(&d);
    op.u.sample.border = TS_BORDER_CONSTANT;
    op.u.sample.interp = TSK_BILINEAR;
    d = tref_apply_whole(&op, &src);
    tref_expect(&d, con, 0, "NaN map, constant");
    timg_free(&d);
    timg_free(&src);
}

static void test_out_size_and_bad_parameters(void)
{
    static const float id[6] = { 1, 0, 0, 0, 1, 0 };
    static const float in[6] = { 1, 2, 3, 4, 5, 6 };
    tsk_op op = sample_op(id, 5, 7, TSK_NEAREST, TS_BORDER_WRAP, 0);
    ts_view src = tref_view(3, 2, 1, TS_U8, in), dst = timg_whole(5, 7, 1, TS_U8);
    ts_err err;
    int w, h;
    tsk_out_size(&op, 3, 2, &w, &h);
    CHECK_EQ_INT(w, 5);
    CHECK_EQ_INT(h, 7);
    op.u.sample.interp = TSK_INTERP_COUNT;
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    op.u.sample.interp = TSK_NEAREST;
    op.u.sample.out_w = 6; /* dst is 5 wide: not what the op makes */
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    timg_free(&src);
    timg_free(&dst);
}

int main(void)
{
    check_seed();
    test_identity_copies();
    test_upscale_2x2();
    test_nearest_borders();
    test_orientations_as_affine();
    test_downscale_is_block_mean();
    test_bilinear_order_bit_exact();
    test_area_is_block_mean();
    test_area_is_box_integral();
    test_bicubic_by_hand();
    test_footprint();
    test_nan_map();
    test_out_size_and_bad_parameters();
    return check_exit();
}

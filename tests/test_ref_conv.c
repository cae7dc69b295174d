/* test_ref_conv.c - the reference convolutions: a 3x3 box on a 4x3 image
 * with each border worked out by hand, a 5-tap row that tells the
 * reflections apart, Sobel on a step edge, a gradient magnitude, 16-bit
 * and float cases; then CONV_SEP against CONV_2D of the outer product and
 * against a naive double-precision version with its own border folding. */
#include "check.h"
#include "testimg.h"
#include "test_ref_util.h"

#include <math.h>

static tsk_op sep_op(int nx, const float *kx, int ny, const float *ky, ts_border b, float bv)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_CONV_SEP;
    op.u.sep.nx = nx;
    op.u.sep.ny = ny;
    memcpy(op.u.sep.kx, kx, sizeof(float) * (size_t)nx);
    memcpy(op.u.sep.ky, ky, sizeof(float) * (size_t)ny);
    op.u.sep.center_w = 0;
    op.u.sep.conv_w = 1;
    op.u.sep.border = b;
    op.u.sep.border_value = bv;
    return op;
}

static tsk_op conv2d_op(int kw, int kh, const float *k, const float *k2, tsk_conv_mode mode, float bias,
                        ts_border b, float bv)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_CONV_2D;
    op.u.conv2d.kw = kw;
    op.u.conv2d.kh = kh;
    memcpy(op.u.conv2d.k, k, sizeof(float) * (size_t)(kw * kh));
    if (k2) memcpy(op.u.conv2d.k2, k2, sizeof(float) * (size_t)(kw * kh));
    op.u.conv2d.mode = mode;
    op.u.conv2d.bias = bias;
    op.u.conv2d.border = b;
    op.u.conv2d.border_value = bv;
    return op;
}

/* The 4x3 image
 *      1  2  3  4
 *      5  6  7  8
 *      9 10 11 12
 * under a 3x3 box of ones (the plain sum of 9 taps), U16 so nothing rounds.
 * The centre pixels (1,1) and (2,1) read no border: 1+2+3+5+6+7+9+10+11 =
 * 54 and 63 in every mode. At (0,0):
 *   replicate: x -1 -> 0, y -1 -> 0: (1+1+2) + (1+1+2) + (5+5+6) = 24
 *   reflect101: x -1 -> 1, y -1 -> 1: (6+5+6) + (2+1+2) + (6+5+6) = 39
 *   reflect: x -1 -> 0, y -1 -> 0: as replicate at radius 1, 24
 *   wrap: x -1 -> 3, y -1 -> 2: (12+9+10) + (4+1+2) + (8+5+6) = 57
 *   constant 100: five border taps: 500 + 1+2+5+6 = 514
 * Wrap with H = 3 sums whole columns (15, 18, 21, 24), so every row is
 * 24+15+18 = 57, 15+18+21 = 54, 63, 21+24+15 = 60. Constant at (1,0):
 * 300 + 1+2+3+5+6+7 = 324. The rest likewise: */
static const float box_in[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
static const float box_sum[5][12] = {
    { 24, 30, 39, 45, 48, 54, 63, 69, 72, 78, 87, 93 },          /* replicate */
    { 39, 42, 51, 54, 51, 54, 63, 66, 63, 66, 75, 78 },          /* reflect101 */
    { 24, 30, 39, 45, 48, 54, 63, 69, 72, 78, 87, 93 },          /* reflect */
    { 57, 54, 63, 60, 57, 54, 63, 60, 57, 54, 63, 60 },          /* wrap */
    { 514, 324, 330, 522, 333, 54, 63, 345, 530, 348, 354, 538 } /* constant 100 */
};

static void test_box_3x3_borders(void)
{
    static const float ones[3] = { 1, 1, 1 }, third[3] = { 1.0f / 3, 1.0f / 3, 1.0f / 3 };
    static const float ones9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    for (int b = 0; b < 5; b++) {
        char name[64];
        float mean[12];
        tsk_op op = sep_op(3, ones, 3, ones, (ts_border)b, 100);
        tsk_op op2 = conv2d_op(3, 3, ones9, NULL, TSK_CONV_LINEAR, 0, (ts_border)b, 100);
        ts_view src = tref_view(4, 3, 1, TS_U16, box_in), dst;
        snprintf(name, sizeof name, "box sum %s", tref_border_names[b]);
        dst = tref_apply_whole(&op, &src);
        tref_expect(&dst, box_sum[b], 0, name);
        timg_free(&dst);
        snprintf(name, sizeof name, "2-D box sum %s", tref_border_names[b]);
        dst = tref_apply_whole(&op2, &src);
        tref_expect(&dst, box_sum[b], 0, name);
        timg_free(&dst);
        timg_free(&src);
        /* U8 mean: the sums / 9, rounded; none of them is within 0.1 of a
         * half (e.g. 24/9 = 2.67 -> 3, 514/9 = 57.1 -> 57). */
        for (int i = 0; i < 12; i++) mean[i] = floorf(box_sum[b][i] / 9.0f + 0.5f);
        op = sep_op(3, third, 3, third, (ts_border)b, 100);
        src = tref_view(4, 3, 1, TS_U8, box_in);
        dst = tref_apply_whole(&op, &src);
        snprintf(name, sizeof name, "box mean u8 %s", tref_border_names[b]);
        tref_expect(&dst, mean, 0, name);
        timg_free(&src);
        timg_free(&dst);
    }
}

/* A 5-tap row sum on the row 1 2 3 4 tells every border apart at x = 0
 * (taps -2..2): replicate 1+1+1+2+3 = 8; reflect101 (-2 -> 2, -1 -> 1)
 * 3+2+1+2+3 = 11; reflect (-2 -> 1, -1 -> 0) 2+1+1+2+3 = 9; wrap (-2 -> 2,
 * -1 -> 3) 3+4+1+2+3 = 13; constant 100: 200+1+2+3 = 206. At x = 3 (taps
 * 1..5): replicate 2+3+4+4+4 = 17; reflect101 (4 -> 2, 5 -> 1) 2+3+4+3+2
 * = 14; reflect (4 -> 3, 5 -> 2) 2+3+4+4+3 = 16; wrap (4 -> 0, 5 -> 1)
 * 2+3+4+1+2 = 12; constant 2+3+4+200 = 209. x = 1, 2 read taps -1..3 and
 * 0..4: replicate 1+1+2+3+4 = 11, 1+2+3+4+4 = 14; reflect101 2+1+2+3+4 = 12,
 * 1+2+3+4+3 = 13; reflect 11, 14; wrap 4+1+2+3+4 = 14, 1+2+3+4+1 = 11;
 * constant 110, 110. */
static void test_row_5_taps(void)
{
    static const float ones[5] = { 1, 1, 1, 1, 1 }, one[1] = { 1 };
    static const float row[4] = { 1, 2, 3, 4 };
    static const float want[5][4] = {
        { 8, 11, 14, 17 }, { 11, 12, 13, 14 }, { 9, 11, 14, 16 }, { 13, 14, 11, 12 }, { 206, 110, 110, 209 },
    };
    for (int b = 0; b < 5; b++) {
        char name[64];
        tsk_op op = sep_op(5, ones, 1, one, (ts_border)b, 100);
        ts_view src = tref_view(4, 1, 1, TS_U16, row), dst;
        dst = tref_apply_whole(&op, &src);
        snprintf(name, sizeof name, "5-tap row %s", tref_border_names[b]);
        tref_expect(&dst, want[b], 0, name);
        timg_free(&dst);
        timg_free(&src);
        /* The same taps down a column: ny = 5 on the transposed image. */
        op = sep_op(1, one, 5, ones, (ts_border)b, 100);
        src = tref_view(1, 4, 1, TS_U16, row);
        dst = tref_apply_whole(&op, &src);
        snprintf(name, sizeof name, "5-tap column %s", tref_border_names[b]);
        tref_expect(&dst, want[b], 0, name);
        timg_free(&dst);
        timg_free(&src);
    }
}

/* Sobel x on a 5x4 step: columns 0-1 are 200, columns 2-4 are 10.
 * s = sum_j w_j (p(x+1) - p(x-1)), w = 1, 2, 1, the same in every row
 * (replicate): x = 0: 200-200 = 0; x = 1: 10-200 = -190, times 4 = -760;
 * x = 2: 10-200 -> -760; x = 3, 4: 0. ABS gives 0 760 760 0 0 (U16);
 * LINEAR with bias 0.5: 32767.5 + s -> 32768, 32007.5 -> 32008 (halves up);
 * LINEAR bias 0 saturates -760 to 0; U8 ABS saturates 760 to 255. MAG
 * with Sobel y (no vertical change, s2 = 0) equals ABS. */
static void test_sobel_step(void)
{
    static const float sx[9] = { -1, 0, 1, -2, 0, 2, -1, 0, 1 };
    static const float sy[9] = { -1, -2, -1, 0, 0, 0, 1, 2, 1 };
    float in[20], abs_w[20], lin_w[20], zero_w[20], u8_w[20];
    static const float absrow[5] = { 0, 760, 760, 0, 0 }, linrow[5] = { 32768, 32008, 32008, 32768, 32768 };
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 5; x++) {
            in[y * 5 + x] = x < 2 ? 200 : 10;
            abs_w[y * 5 + x] = absrow[x];
            lin_w[y * 5 + x] = linrow[x];
            zero_w[y * 5 + x] = 0;
            u8_w[y * 5 + x] = absrow[x] > 255 ? 255 : absrow[x];
        }
    {
        tsk_op abs_op = conv2d_op(3, 3, sx, NULL, TSK_CONV_ABS, 0, TS_BORDER_REPLICATE, 0);
        tsk_op lin_op = conv2d_op(3, 3, sx, NULL, TSK_CONV_LINEAR, 0.5f, TS_BORDER_REPLICATE, 0);
        tsk_op zero_op = conv2d_op(3, 3, sx, NULL, TSK_CONV_LINEAR, 0, TS_BORDER_REPLICATE, 0);
        tsk_op mag_op = conv2d_op(3, 3, sx, sy, TSK_CONV_MAG, 0, TS_BORDER_REFLECT101, 0);
        ts_view src = tref_view(5, 4, 1, TS_U16, in), src8 = tref_view(5, 4, 1, TS_U8, in), dst;
        dst = tref_apply_whole(&abs_op, &src);
        tref_expect(&dst, abs_w, 0, "sobel abs u16");
        timg_free(&dst);
        dst = tref_apply_whole(&lin_op, &src);
        tref_expect(&dst, lin_w, 0, "sobel linear bias 0.5 u16");
        timg_free(&dst);
        dst = tref_apply_whole(&zero_op, &src);
        tref_expect(&dst, zero_w, 0, "sobel linear saturates u16");
        timg_free(&dst);
        /* reflect101 at x = 0 reads x = 1 on both sides: 0, as replicate. */
        dst = tref_apply_whole(&mag_op, &src);
        tref_expect(&dst, abs_w, 0, "sobel magnitude u16");
        timg_free(&dst);
        dst = tref_apply_whole(&abs_op, &src8);
        tref_expect(&dst, u8_w, 0, "sobel abs u8");
        timg_free(&dst);
        timg_free(&src);
        timg_free(&src8);
    }
}

/* The gradient magnitude of the ramp p = 3x + 4y + 7 (F32) with forward
 * differences k = p(x+1) - p(x) and k2 = p(y+1) - p(y): inside, 3 and 4,
 * magnitude 5. Replicate makes the last column's x difference 0 (-> 4),
 * the last row's y difference 0 (-> 3), and the corner 0. Wrap on the
 * last column: p(0) - p(3) = -9, so sqrt(81 + 16) = sqrt(97). */
static void test_gradient_magnitude_f32(void)
{
    static const float fx[9] = { 0, 0, 0, 0, -1, 1, 0, 0, 0 };
    static const float fy[9] = { 0, 0, 0, 0, -1, 0, 0, 1, 0 };
    float in[12];
    static const float want_rep[12] = { 5, 5, 5, 4, 5, 5, 5, 4, 3, 3, 3, 0 };
    float want_wrap[12];
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 4; x++) in[y * 4 + x] = 3.0f * x + 4.0f * y + 7.0f;
    /* wrap: last row's y difference p(y=0) - p(y=2) = -8 -> sqrt(9+64);
     * the corner: sqrt(81+64). */
    for (int i = 0; i < 12; i++) want_wrap[i] = 5;
    for (int y = 0; y < 2; y++) want_wrap[y * 4 + 3] = sqrtf(97.0f);
    for (int x = 0; x < 3; x++) want_wrap[8 + x] = sqrtf(73.0f);
    want_wrap[11] = sqrtf(145.0f);
    {
        tsk_op rep = conv2d_op(3, 3, fx, fy, TSK_CONV_MAG, 0, TS_BORDER_REPLICATE, 0);
        tsk_op wrap = conv2d_op(3, 3, fx, fy, TSK_CONV_MAG, 0, TS_BORDER_WRAP, 0);
        ts_view src = tref_view(4, 3, 1, TS_F32, in), dst;
        dst = tref_apply_whole(&rep, &src);
        tref_expect(&dst, want_rep, 0, "gradient magnitude replicate f32");
        timg_free(&dst);
        dst = tref_apply_whole(&wrap, &src);
        tref_expect(&dst, want_wrap, 1e-5, "gradient magnitude wrap f32");
        timg_free(&dst);
        timg_free(&src);
    }
}

/* 16 bits near the top, and the sharpen weights: out = 1.5 p - 0.5 box.
 * Image 3x1 U16: 60000 65000 62000, 3-tap mean, replicate:
 *   box: (60000+60000+65000)/3 = 61666.67, (60000+65000+62000)/3 =
 *   62333.33, (65000+62000+62000)/3 = 63000;
 *   sharpen: 90000 - 30833.33 = 59166.67 -> 59167;
 *   97500 - 31166.67 = 66333.33 -> saturates 65535; 93000 - 31500 = 61500.
 * Then a float mean with a constant border. */
static void test_sharpen_u16_and_constant_f32(void)
{
    static const float third[3] = { 1.0f / 3, 1.0f / 3, 1.0f / 3 }, one[1] = { 1 };
    static const float in[3] = { 60000, 65000, 62000 }, want[3] = { 59167, 65535, 61500 };
    tsk_op op = sep_op(3, third, 1, one, TS_BORDER_REPLICATE, 0);
    ts_view src = tref_view(3, 1, 1, TS_U16, in), dst;
    op.u.sep.center_w = 1.5f;
    op.u.sep.conv_w = -0.5f;
    dst = tref_apply_whole(&op, &src);
    tref_expect(&dst, want, 0, "sharpen u16");
    timg_free(&dst);
    timg_free(&src);
    {
        /* Row 0.25 0.5 0.75 with constant 0.25 (every channel, alpha too):
         * x = 0: (0.25 + 0.25 + 0.5)/3 = 0.3333; x = 1: 1.5/3 = 0.5;
         * x = 2: (0.5 + 0.75 + 0.25)/3 = 0.5. Two channels carry the same. */
        static const float fin[6] = { 0.25f, 0.25f, 0.5f, 0.5f, 0.75f, 0.75f };
        static const float fwant[6] = { 1.0f / 3, 1.0f / 3, 0.5f, 0.5f, 0.5f, 0.5f };
        tsk_op fop = sep_op(3, third, 1, one, TS_BORDER_CONSTANT, 0.25f);
        ts_view fsrc = tref_view(3, 1, 2, TS_F32, fin), fdst;
        fdst = tref_apply_whole(&fop, &fsrc);
        tref_expect(&fdst, fwant, 1e-6, "mean constant border f32");
        timg_free(&fdst);
        timg_free(&fsrc);
    }
}

/* 1x1 taps of weight 1 copy any image exactly, with any border. */
static void test_identity_taps(void)
{
    static const float one[1] = { 1 };
    for (int round = 0; round < 12; round++) {
        ts_view src = timg_whole(tref_randint(1, 9), tref_randint(1, 9), tref_randint(1, 4), tref_randtype());
        tsk_op op = sep_op(1, one, 1, one, (ts_border)tref_randint(0, 4), 0.5f);
        tsk_op op2 = conv2d_op(1, 1, one, NULL, TSK_CONV_LINEAR, 0, (ts_border)tref_randint(0, 4), 0.5f);
        ts_view a, b;
        timg_random(&src);
        a = tref_apply_whole(&op, &src);
        b = tref_apply_whole(&op2, &src);
        CHECK_MSG(tref_same_bytes(&a, &src), "1x1 separable is not a copy");
        CHECK_MSG(tref_same_bytes(&b, &src), "1x1 2-D is not a copy");
        timg_free(&a);
        timg_free(&b);
        timg_free(&src);
    }
}

/* alpha_passthrough: alpha equals the input's, colour equals the filter
 * without it; c = 1 and 3 ignore the flag. */
static void test_alpha_passthrough(void)
{
    for (int c = 1; c <= 4; c++)
        for (int kind = 0; kind < 2; kind++) {
            float k[25], kx[5], ky[5];
            tsk_op op, op_pass;
            ts_view src = timg_whole(tref_randint(2, 12), tref_randint(2, 12), c, tref_randtype()), a, b;
            int alpha_same = 1, colour_same = 1;
            for (int i = 0; i < 5; i++) { kx[i] = tref_randf(-0.5f, 1); ky[i] = tref_randf(-0.5f, 1); }
            for (int i = 0; i < 25; i++) k[i] = tref_randf(-0.2f, 0.3f);
            op = kind ? conv2d_op(5, 5, k, NULL, TSK_CONV_LINEAR, 0.1f, TS_BORDER_REFLECT101, 0)
                      : sep_op(5, kx, 5, ky, TS_BORDER_REFLECT101, 0);
            op_pass = op;
            op_pass.alpha_passthrough = 1;
            timg_random(&src);
            a = tref_apply_whole(&op, &src);
            b = tref_apply_whole(&op_pass, &src);
            for (int y = 0; y < src.h; y++)
                for (int x = 0; x < src.w; x++)
                    for (int ch = 0; ch < c; ch++) {
                        int is_alpha = (c == 2 || c == 4) && ch == c - 1;
                        if (is_alpha) alpha_same &= timg_get(&b, x, y, ch) == timg_get(&src, x, y, ch);
                        else colour_same &= timg_get(&b, x, y, ch) == timg_get(&a, x, y, ch);
                    }
            CHECK_MSG(alpha_same, "c=%d kind %d: alpha not passed through", c, kind);
            CHECK_MSG(colour_same, "c=%d kind %d: colour changed by the alpha flag", c, kind);
            if (c == 1 || c == 3) CHECK_MSG(tref_same_bytes(&a, &b), "c=%d: flag changed the result", c);
            timg_free(&a);
            timg_free(&b);
            timg_free(&src);
        }
}

/* CONV_SEP against CONV_2D with k[j*kw+i] = ky[j]*kx[i] (and the centre
 * weight folded in), F32, every border, random odd sizes up to 15. */
static void test_sep_vs_outer_product(void)
{
    for (int round = 0; round < 60; round++) {
        int nx = tref_randodd(15), ny = tref_randodd(15);
        float kx[15], ky[15], k[225], sx = 0, sy = 0;
        ts_border b = (ts_border)(round % 5);
        float bv = tref_randf(0, 1), cw = round % 3 ? 0 : tref_randf(0.5f, 2), vw = round % 3 ? 1 : 1 - cw;
        ts_view src = timg_whole(tref_randint(1, 24), tref_randint(1, 24), tref_randint(1, 4), TS_F32), a, bview;
        tsk_op op, op2;
        for (int i = 0; i < nx; i++) { kx[i] = tref_randf(-1, 1); sx += fabsf(kx[i]); }
        for (int j = 0; j < ny; j++) { ky[j] = tref_randf(-1, 1); sy += fabsf(ky[j]); }
        for (int i = 0; i < nx; i++) kx[i] /= sx;
        for (int j = 0; j < ny; j++) ky[j] /= sy;
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++) k[j * nx + i] = vw * ky[j] * kx[i];
        k[(ny / 2) * nx + nx / 2] += cw;
        op = sep_op(nx, kx, ny, ky, b, bv);
        op.u.sep.center_w = cw;
        op.u.sep.conv_w = vw;
        op.alpha_passthrough = round & 1;
        op2 = conv2d_op(nx, ny, k, NULL, TSK_CONV_LINEAR, 0, b, bv);
        op2.alpha_passthrough = round & 1;
        timg_random(&src);
        a = tref_apply_whole(&op, &src);
        bview = tref_apply_whole(&op2, &src);
        {
            char name[96];
            double worst;
            snprintf(name, sizeof name, "sep %dx%d vs 2-D %s %dx%dx%d", nx, ny, tref_border_names[b], src.w,
                     src.h, src.c);
            worst = timg_compare(&a, &bview, 1e-4, name);
            CHECK_MSG(worst <= 1e-4, "%s: worst %g", name, worst);
        }
        timg_free(&a);
        timg_free(&bview);
        timg_free(&src);
    }
}

/* CONV_SEP against a naive double-precision convolution, with taps up to
 * 63 on images as small as 1x1, so the reflections fold many times. */
static void test_sep_vs_naive_large_radius(void)
{
    for (int round = 0; round < 30; round++) {
        int nx = tref_randodd(TSK_MAX_SEP_TAPS), ny = tref_randodd(TSK_MAX_SEP_TAPS);
        int w = tref_randint(1, 7), h = tref_randint(1, 7), c = tref_randint(1, 4);
        float kx[TSK_MAX_SEP_TAPS], ky[TSK_MAX_SEP_TAPS], sx = 0, sy = 0, bv = tref_randf(0, 1);
        ts_border b = (ts_border)(round % 5);
        ts_view src = timg_whole(w, h, c, TS_F32), got;
        int bad = 0;
        tsk_op op;
        for (int i = 0; i < nx; i++) { kx[i] = tref_randf(-1, 1); sx += fabsf(kx[i]); }
        for (int j = 0; j < ny; j++) { ky[j] = tref_randf(-1, 1); sy += fabsf(ky[j]); }
        for (int i = 0; i < nx; i++) kx[i] /= sx;
        for (int j = 0; j < ny; j++) ky[j] /= sy;
        op = sep_op(nx, kx, ny, ky, b, bv);
        timg_random(&src);
        got = tref_apply_whole(&op, &src);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int ch = 0; ch < c; ch++) {
                    double s = 0;
                    for (int j = 0; j < ny; j++)
                        for (int i = 0; i < nx; i++) {
                            int fx = tref_fold(x + i - nx / 2, w, b), fy = tref_fold(y + j - ny / 2, h, b);
                            double p = (fx < 0 || fy < 0) ? bv : timg_get(&src, fx, fy, ch);
                            s += (double)ky[j] * kx[i] * p;
                        }
                    if (fabs(s - timg_get(&got, x, y, ch)) > 2e-5 && bad++ < 4)
                        fprintf(stderr, "naive %dx%d %s on %dx%d: (%d,%d) %g vs %g\n", nx, ny,
                                tref_border_names[b], w, h, x, y, timg_get(&got, x, y, ch), s);
                }
        CHECK_MSG(bad == 0, "separable vs naive, %d taps x %d, %s", nx, ny, tref_border_names[b]);
        timg_free(&got);
        timg_free(&src);
    }
}

/* A tap of a float image through tref_fold, or the border value. */
static float tap(const ts_view *v, int x, int y, int ch, ts_border b, float bv)
{
    int fx = tref_fold(x, v->w, b), fy = tref_fold(y, v->h, b);
    return (fx < 0 || fy < 0) ? bv : timg_get(v, fx, fy, ch);
}

/* The evaluation order tsk.h fixes, written out here in float: the
 * reference must match it bit for bit (so may a GPU kernel that keeps it). */
static void test_order_bit_exact(void)
{
    for (int round = 0; round < 20; round++) {
        int nx = tref_randodd(15), ny = tref_randodd(15), w = tref_randint(1, 12), h = tref_randint(1, 12);
        int c = tref_randint(1, 4), bad_sep = 0, bad_2d = 0;
        ts_border b = (ts_border)(round % 5);
        float bv = tref_randf(0, 1), cw = tref_randf(-1, 2), vw = tref_randf(-1, 2), bias = tref_randf(-1, 1);
        float kx[15], ky[15], k[225], k2[225];
        ts_view src = timg_whole(w, h, c, TS_F32), a, m;
        tsk_op sep, lin, mag;
        for (int i = 0; i < nx; i++) kx[i] = tref_randf(-1, 1);
        for (int j = 0; j < ny; j++) ky[j] = tref_randf(-1, 1);
        for (int i = 0; i < nx * ny; i++) { k[i] = tref_randf(-1, 1); k2[i] = tref_randf(-1, 1); }
        sep = sep_op(nx, kx, ny, ky, b, bv);
        sep.u.sep.center_w = cw;
        sep.u.sep.conv_w = vw;
        lin = conv2d_op(nx, ny, k, k2, TSK_CONV_LINEAR, bias, b, bv);
        mag = conv2d_op(nx, ny, k, k2, TSK_CONV_MAG, bias, b, bv);
        timg_random(&src);
        a = tref_apply_whole(&sep, &src);
        m = tref_apply_whole(&mag, &src);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int ch = 0; ch < c; ch++) {
                    float t = 0, s = 0, s2 = 0, want_sep, want_mag;
                    for (int j = 0; j < ny; j++) {
                        float r = 0;
                        for (int i = 0; i < nx; i++) r += kx[i] * tap(&src, x + i - nx / 2, y + j - ny / 2, ch, b, bv);
                        t += ky[j] * r;
                    }
                    want_sep = cw * timg_get(&src, x, y, ch) + vw * t;
                    for (int j = 0; j < ny; j++)
                        for (int i = 0; i < nx; i++) {
                            float p = tap(&src, x + i - nx / 2, y + j - ny / 2, ch, b, bv);
                            s += k[j * nx + i] * p;
                            s2 += k2[j * nx + i] * p;
                        }
                    want_mag = sqrtf(s * s + s2 * s2);
                    bad_sep += memcmp(&want_sep, &((float *)(a.data + (size_t)y * a.pitch))[x * c + ch], 4) != 0;
                    bad_2d += memcmp(&want_mag, &((float *)(m.data + (size_t)y * m.pitch))[x * c + ch], 4) != 0;
                }
        CHECK_MSG(bad_sep == 0, "separable %dx%d %s: %d values not bit-exact", nx, ny, tref_border_names[b], bad_sep);
        CHECK_MSG(bad_2d == 0, "2-D magnitude %dx%d %s: %d values not bit-exact", nx, ny, tref_border_names[b], bad_2d);
        timg_free(&a);
        timg_free(&m);
        a = tref_apply_whole(&lin, &src);
        bad_2d = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int ch = 0; ch < c; ch++) {
                    float s = 0, want;
                    for (int j = 0; j < ny; j++)
                        for (int i = 0; i < nx; i++) s += k[j * nx + i] * tap(&src, x + i - nx / 2, y + j - ny / 2, ch, b, bv);
                    want = bias * 1.0f + s;
                    bad_2d += memcmp(&want, &((float *)(a.data + (size_t)y * a.pitch))[x * c + ch], 4) != 0;
                }
        CHECK_MSG(bad_2d == 0, "2-D linear %dx%d %s: %d values not bit-exact", nx, ny, tref_border_names[b], bad_2d);
        timg_free(&a);
        timg_free(&src);
    }
}

static void test_bad_parameters(void)
{
    static const float k3[3] = { 1, 1, 1 }, k9[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
    ts_view src = tref_view(4, 3, 1, TS_U8, box_in), dst = timg_whole(4, 3, 1, TS_U8);
    ts_err err;
    tsk_op op = sep_op(3, k3, 3, k3, TS_BORDER_REPLICATE, 0);
    op.u.sep.nx = 2;
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    op.u.sep.nx = 65;
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    op = sep_op(3, k3, 3, k3, (ts_border)7, 0);
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    op = conv2d_op(3, 3, k9, NULL, TSK_CONV_LINEAR, 0, TS_BORDER_WRAP, 0);
    op.u.conv2d.kh = 17;
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    op.u.conv2d.kh = 3;
    op.u.conv2d.mode = (tsk_conv_mode)5;
    CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
    CHECK(strstr(err.msg, "mode") != NULL);
    timg_free(&src);
    timg_free(&dst);
}

int main(void)
{
    check_seed();
    test_box_3x3_borders();
    test_row_5_taps();
    test_sobel_step();
    test_gradient_magnitude_f32();
    test_sharpen_u16_and_constant_f32();
    test_identity_taps();
    test_alpha_passthrough();
    test_sep_vs_outer_product();
    test_sep_vs_naive_large_radius();
    test_order_bit_exact();
    test_bad_parameters();
    return check_exit();
}

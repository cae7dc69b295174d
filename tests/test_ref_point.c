/* test_ref_point.c - the reference colour matrix, premultiply and
 * unpremultiply against values worked out by hand, in every type and
 * channel count, and their alpha rules on random images. */
#include "check.h"
#include "testimg.h"
#include "test_ref_util.h"

static tsk_op matrix_op(const float m[12])
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_MATRIX;
    memcpy(op.u.matrix.m, m, sizeof op.u.matrix.m);
    return op;
}

static tsk_op kind_op(tsk_kind k)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = k;
    return op;
}

/* One pixel through op; want has c values. */
static void expect_pixel(const tsk_op *op, int c, ts_type t, const float *in, const float *want, double tol,
                         const char *name)
{
    ts_view src = tref_view(1, 1, c, t, in);
    ts_view dst = tref_apply_whole(op, &src);
    tref_expect(&dst, want, tol, name);
    timg_free(&src);
    timg_free(&dst);
}

static void test_matrix_rgb_u8(void)
{
    /* Row 0 adds an offset: 10 + 0.1*255 = 10 + 25.5 = 35.5, an exact half,
     * rounds up to 36. Row 1: 2*20 + 1*255 = 295 saturates to 255. Row 2:
     * -30 + 0 saturates to 0. Alpha 77 is copied. */
    const float m[12] = { 1, 0, 0, 0.1f, 0, 2, 0, 1, 0, 0, -1, 0 };
    tsk_op op = matrix_op(m);
    const float in3[3] = { 10, 20, 30 }, want3[3] = { 36, 255, 0 };
    const float in4[4] = { 10, 20, 30, 77 }, want4[4] = { 36, 255, 0, 77 };
    expect_pixel(&op, 3, TS_U8, in3, want3, 0, "matrix rgb u8");
    expect_pixel(&op, 4, TS_U8, in4, want4, 0, "matrix rgba u8");
}

static void test_matrix_mixes_channels(void)
{
    /* Grey weights 0.25 R + 0.5 G + 0.25 B: 0.25*40 + 0.5*100 + 0.25*200 =
     * 10 + 50 + 50 = 110 in every row. U16 the same numbers: exact. */
    const float m[12] = { 0.25f, 0.5f, 0.25f, 0, 0.25f, 0.5f, 0.25f, 0, 0.25f, 0.5f, 0.25f, 0 };
    tsk_op op = matrix_op(m);
    const float in[4] = { 40, 100, 200, 9 }, want[4] = { 110, 110, 110, 9 };
    expect_pixel(&op, 4, TS_U8, in, want, 0, "matrix grey weights u8");
    expect_pixel(&op, 4, TS_U16, in, want, 0, "matrix grey weights u16");
}

static void test_matrix_halves_round_up(void)
{
    /* Grey (c = 1, 2): out = m[0]*v + m[3]*max. With m[0] = 0.5 the exact
     * halves 0.5, 1.5, 2.5, 127.5 round up to 1, 2, 3, 128 (round half to
     * even would give 0, 2, 2, 128). */
    const float m[12] = { 0.5f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    tsk_op op = matrix_op(m);
    const float in[4] = { 1, 3, 5, 255 }, want[4] = { 1, 2, 3, 128 };
    ts_view src = tref_view(4, 1, 1, TS_U8, in);
    ts_view dst = tref_apply_whole(&op, &src);
    tref_expect(&dst, want, 0, "matrix halves u8");
    timg_free(&src);
    timg_free(&dst);
    {
        /* c = 2: alpha copied; 16 bits: 0.5*65535 = 32767.5 -> 32768. */
        const float in2[2] = { 65535, 1234 }, want2[2] = { 32768, 1234 };
        expect_pixel(&op, 2, TS_U16, in2, want2, 0, "matrix halves u16 grey+alpha");
    }
}

static void test_matrix_grey_offset_u16(void)
{
    /* out = 1*v + (-0.25)*65535 = v - 16383.75: 20000 -> 3616.25 -> 3616;
     * 10000 -> -6383.75 saturates to 0. With +0.9: 10000 + 58981.5 =
     * 68981.5 saturates to 65535. */
    const float lo[12] = { 1, 0, 0, -0.25f, 0, 0, 0, 0, 0, 0, 0, 0 };
    const float hi[12] = { 1, 0, 0, 0.9f, 0, 0, 0, 0, 0, 0, 0, 0 };
    tsk_op op = matrix_op(lo);
    const float in[2] = { 20000, 10000 }, want[2] = { 3616, 0 };
    ts_view src = tref_view(2, 1, 1, TS_U16, in);
    ts_view dst = tref_apply_whole(&op, &src);
    tref_expect(&dst, want, 0, "matrix grey offset u16");
    timg_free(&dst);
    op = matrix_op(hi);
    dst = tref_apply_whole(&op, &src);
    {
        const float want_hi[2] = { 65535, 65535 };
        tref_expect(&dst, want_hi, 0, "matrix grey saturate u16");
    }
    timg_free(&src);
    timg_free(&dst);
}

static void test_matrix_f32_unclamped(void)
{
    /* F32: stored as computed, max = 1: 2*0.75 = 1.5 (no clamp), 0.5 - 1*1
     * = -0.5, and row 2: 0.25*0.5 + 0.125 = 0.25. */
    const float m[12] = { 2, 0, 0, 0, 0, 1, 0, -1, 0, 0, 0.25f, 0.125f };
    tsk_op op = matrix_op(m);
    const float in[4] = { 0.75f, 0.5f, 0.5f, 0.3f }, want[4] = { 1.5f, -0.5f, 0.25f, 0.3f };
    expect_pixel(&op, 4, TS_F32, in, want, 0, "matrix f32");
}

static void test_premul(void)
{
    /* U8 RGBA (200, 100, 50, 128): 200*128/255 = 100.39 -> 100,
     * 100*128/255 = 50.20 -> 50, 50*128/255 = 25.10 -> 25, alpha kept. */
    tsk_op op = kind_op(TSK_PREMUL);
    const float in4[4] = { 200, 100, 50, 128 }, want4[4] = { 100, 50, 25, 128 };
    expect_pixel(&op, 4, TS_U8, in4, want4, 0, "premul rgba u8");
    {
        /* Grey+alpha: 60*51/255 = 12 exactly; 255*255/255 = 255;
         * 17*0/255 = 0 (alpha 0 clears colour). */
        const float in[6] = { 60, 51, 255, 255, 17, 0 }, want[6] = { 12, 51, 255, 255, 0, 0 };
        ts_view src = tref_view(3, 1, 2, TS_U8, in);
        ts_view dst = tref_apply_whole(&op, &src);
        tref_expect(&dst, want, 0, "premul grey+alpha u8");
        timg_free(&src);
        timg_free(&dst);
    }
    {
        /* U16, alpha 32768: 40000*32768/65535 = 20000.31 -> 20000;
         * 1*32768/65535 = 0.500008 -> 1; 7*32768/65535 = 3.500053 -> 4. */
        const float in[4] = { 40000, 1, 7, 32768 }, want[4] = { 20000, 1, 4, 32768 };
        expect_pixel(&op, 4, TS_U16, in, want, 0, "premul rgba u16");
    }
    {
        /* The order is float32 colour*alpha first, then /max. (574, 37734):
         * 21659316 is exact in float, /65535 = 330.49997 -> 330 (dividing
         * first gives 330.5 -> 331). (911, 31041): 28278351 rounds to the
         * float 28278352, /65535 = 431.499992 rounds to the float 431.5 ->
         * 432 (the exact quotient 431.49998 would give 431, dividing first
         * 431.49997 -> 431): the rule is float32 maths, not exact maths. */
        const float in[4] = { 574, 37734, 911, 31041 }, want[4] = { 330, 37734, 432, 31041 };
        ts_view src = tref_view(2, 1, 2, TS_U16, in);
        ts_view dst = tref_apply_whole(&op, &src);
        tref_expect(&dst, want, 0, "premul order u16");
        timg_free(&src);
        timg_free(&dst);
    }
    {
        /* F32: 0.5*0.5 = 0.25, no rounding. */
        const float in[2] = { 0.5f, 0.5f }, want[2] = { 0.25f, 0.5f };
        expect_pixel(&op, 2, TS_F32, in, want, 0, "premul f32");
    }
}

static void test_unpremul(void)
{
    /* U8 (100, 50, 25, 128): 100*255/128 = 199.22 -> 199, 50*255/128 =
     * 99.61 -> 100, 25*255/128 = 49.80 -> 50. */
    tsk_op op = kind_op(TSK_UNPREMUL);
    const float in4[4] = { 100, 50, 25, 128 }, want4[4] = { 199, 100, 50, 128 };
    expect_pixel(&op, 4, TS_U8, in4, want4, 0, "unpremul rgba u8");
    {
        /* Grey+alpha: 12*255/51 = 60; alpha 0 gives colour 0;
         * 200*255/100 = 510 saturates to 255. */
        const float in[6] = { 12, 51, 90, 0, 200, 100 }, want[6] = { 60, 51, 0, 0, 255, 100 };
        ts_view src = tref_view(3, 1, 2, TS_U8, in);
        ts_view dst = tref_apply_whole(&op, &src);
        tref_expect(&dst, want, 0, "unpremul grey+alpha u8");
        timg_free(&src);
        timg_free(&dst);
    }
    {
        /* U16: 20000*65535/32768 = 39999.39 -> 39999; 3*65535/2 = 98302.5
         * saturates to 65535. */
        const float in[4] = { 20000, 20000, 20000, 32768 }, want[4] = { 39999, 39999, 39999, 32768 };
        const float in2[2] = { 3, 2 }, want2[2] = { 65535, 2 };
        expect_pixel(&op, 4, TS_U16, in, want, 0, "unpremul rgba u16");
        expect_pixel(&op, 2, TS_U16, in2, want2, 0, "unpremul saturate u16");
    }
    {
        /* F32: 0.25/0.5 = 0.5; 0.6/0.5 = 1.2, not clamped; alpha 0 -> 0. */
        const float in[6] = { 0.25f, 0.5f, 0.6f, 0.5f, 0.7f, 0 };
        const float want[6] = { 0.5f, 0.5f, 0.6f / 0.5f, 0.5f, 0, 0 };
        ts_view src = tref_view(3, 1, 2, TS_F32, in);
        ts_view dst = tref_apply_whole(&op, &src);
        tref_expect(&dst, want, 0, "unpremul f32");
        CHECK(timg_get(&dst, 1, 0, 0) > 1.0f);
        timg_free(&src);
        timg_free(&dst);
    }
}

/* Without alpha (c = 1 or 3) premultiply and unpremultiply copy; on random
 * images of every type. With alpha, alpha itself is always copied. */
static void test_alpha_rules_random(void)
{
    for (int t = 0; t < 3; t++)
        for (int c = 1; c <= 4; c++)
            for (int k = TSK_PREMUL; k <= TSK_UNPREMUL; k++) {
                static const ts_type types[3] = { TS_U8, TS_U16, TS_F32 };
                tsk_op op = kind_op((tsk_kind)k);
                int w = tref_randint(1, 17), h = tref_randint(1, 9);
                ts_view src = timg_whole(w, h, c, types[t]);
                ts_view dst;
                timg_random(&src);
                dst = tref_apply_whole(&op, &src);
                if (c == 1 || c == 3) {
                    CHECK_MSG(tref_same_bytes(&dst, &src), "%s c=%d: not a copy", tref_type_names[types[t]], c);
                } else {
                    int same_alpha = 1;
                    for (int y = 0; y < h; y++)
                        for (int x = 0; x < w; x++)
                            same_alpha &= timg_get(&dst, x, y, c - 1) == timg_get(&src, x, y, c - 1);
                    CHECK_MSG(same_alpha, "%s c=%d kind %d: alpha changed", tref_type_names[types[t]], c, k);
                }
                timg_free(&src);
                timg_free(&dst);
            }
}

/* Premultiply then unpremultiply gives the colour back within the
 * precision alpha leaves: |error| <= max/(2*alpha) + 0.5 for integers. */
static void test_premul_roundtrip_random(void)
{
    tsk_op pre = kind_op(TSK_PREMUL), un = kind_op(TSK_UNPREMUL);
    for (int t = 0; t < 2; t++) {
        ts_type type = t ? TS_U16 : TS_U8;
        double maxv = t ? 65535.0 : 255.0;
        ts_view src = timg_whole(23, 11, 4, type), mid, back;
        int bad = 0;
        timg_random(&src);
        mid = tref_apply_whole(&pre, &src);
        back = tref_apply_whole(&un, &mid);
        for (int y = 0; y < 11; y++)
            for (int x = 0; x < 23; x++) {
                double a = timg_get(&src, x, y, 3);
                if (a == 0) continue;
                for (int ch = 0; ch < 3; ch++) {
                    double d = fabs(timg_get(&back, x, y, ch) - timg_get(&src, x, y, ch));
                    if (d > maxv / (2 * a) + 1.0 && bad++ < 4)
                        fprintf(stderr, "roundtrip (%d,%d) ch %d: %g vs %g, alpha %g\n", x, y, ch,
                                timg_get(&back, x, y, ch), timg_get(&src, x, y, ch), a);
                }
            }
        CHECK_MSG(bad == 0, "premul/unpremul round trip %s", tref_type_names[type]);
        timg_free(&src);
        timg_free(&mid);
        timg_free(&back);
    }
}

int main(void)
{
    check_seed();
    test_matrix_rgb_u8();
    test_matrix_mixes_channels();
    test_matrix_halves_round_up();
    test_matrix_grey_offset_u16();
    test_matrix_f32_unclamped();
    test_premul();
    test_unpremul();
    test_alpha_rules_random();
    test_premul_roundtrip_random();
    return check_exit();
}

/* test_ref_orient.c - the eight EXIF orientations: a 3x2 image worked out
 * by hand, sizes, and compositions that must give known results (6 four
 * times is the identity, 5 twice too, 2 then 4 is 3, transpose then a flip
 * is a rotation) on random images of every type and channel count, and
 * an orientation carrying a colour matrix (a fused MATRIX). */
#include "check.h"
#include "testimg.h"
#include "test_ref_util.h"

static tsk_op orient_op(int code)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_ORIENT;
    op.u.orient.code = code;
    return op;
}

/* The input (3x2, W = 3, H = 2):
 *     1 2 3
 *     4 5 6
 * Each code's output, from its map in tsk.h (output (x, y) reads input
 * (sx, sy)):
 *   1 (x, y)             1 2 3 / 4 5 6
 *   2 (W-1-x, y)         3 2 1 / 6 5 4
 *   3 (W-1-x, H-1-y)     6 5 4 / 3 2 1
 *   4 (x, H-1-y)         4 5 6 / 1 2 3
 * codes 5..8 give a 2x3 image:
 *   5 (y, x)             row y reads input column y:  1 4 / 2 5 / 3 6
 *   6 (y, H-1-x)         4 1 / 5 2 / 6 3   (a quarter turn clockwise)
 *   7 (W-1-y, H-1-x)     6 3 / 5 2 / 4 1
 *   8 (W-1-y, x)         3 6 / 2 5 / 1 4   (a quarter turn anticlockwise) */
static void test_hand_3x2(void)
{
    static const float in[6] = { 1, 2, 3, 4, 5, 6 };
    static const float want[9][6] = {
        { 0 },
        { 1, 2, 3, 4, 5, 6 }, { 3, 2, 1, 6, 5, 4 }, { 6, 5, 4, 3, 2, 1 }, { 4, 5, 6, 1, 2, 3 },
        { 1, 4, 2, 5, 3, 6 }, { 4, 1, 5, 2, 6, 3 }, { 6, 3, 5, 2, 4, 1 }, { 3, 6, 2, 5, 1, 4 },
    };
    static const ts_type types[3] = { TS_U8, TS_U16, TS_F32 };
    for (int t = 0; t < 3; t++)
        for (int code = 1; code <= 8; code++) {
            tsk_op op = orient_op(code);
            ts_view src = tref_view(3, 2, 1, types[t], in), dst;
            char name[64];
            snprintf(name, sizeof name, "orient %d %s", code, tref_type_names[types[t]]);
            dst = tref_apply_whole(&op, &src);
            CHECK_EQ_INT(dst.w, code >= 5 ? 2 : 3);
            CHECK_EQ_INT(dst.h, code >= 5 ? 3 : 2);
            tref_expect(&dst, want[code], 0, name);
            timg_free(&src);
            timg_free(&dst);
        }
}

/* With 3 channels the whole pixel moves: channel ch of a pixel is its
 * value + 10*ch, so the hand table above still predicts every channel. */
static void test_hand_3x2_rgb(void)
{
    float in[18], want[18];
    static const float rot90[6] = { 4, 1, 5, 2, 6, 3 };
    tsk_op op = orient_op(6);
    ts_view src, dst;
    for (int i = 0; i < 6; i++)
        for (int ch = 0; ch < 3; ch++) {
            in[i * 3 + ch] = (float)(i + 1 + 10 * ch);
            want[i * 3 + ch] = rot90[i] + 10.0f * (float)ch;
        }
    src = tref_view(3, 2, 3, TS_U16, in);
    dst = tref_apply_whole(&op, &src);
    tref_expect(&dst, want, 0, "orient 6 rgb u16");
    timg_free(&src);
    timg_free(&dst);
}

/* Apply codes[0], codes[1], ... in turn to a copy of src. */
static ts_view apply_chain(const ts_view *src, const int *codes, int n)
{
    ts_view cur = tref_crop(src, (ts_rect){ 0, 0, src->w, src->h });
    for (int i = 0; i < n; i++) {
        tsk_op op = orient_op(codes[i]);
        ts_view next = tref_apply_whole(&op, &cur);
        timg_free(&cur);
        cur = next;
    }
    return cur;
}

static void expect_same_chain(const ts_view *src, const int *a, int na, const int *b, int nb, const char *name)
{
    ts_view x = apply_chain(src, a, na), y = apply_chain(src, b, nb);
    CHECK_MSG(tref_same_bytes(&x, &y), "%s on %dx%dx%d %s", name, src->w, src->h, src->c,
              tref_type_names[src->type]);
    timg_free(&x);
    timg_free(&y);
}

static void test_compositions_random(void)
{
    static const int id[1] = { 1 }, rot4[4] = { 6, 6, 6, 6 }, tt[2] = { 5, 5 }, fh_fv[2] = { 2, 4 };
    static const int r180[1] = { 3 }, t_fh[2] = { 5, 2 }, r90[1] = { 6 }, t_fv[2] = { 5, 4 }, r270[1] = { 8 };
    static const int t_r180[2] = { 5, 3 }, transv[1] = { 7 }, r90r90[2] = { 6, 6 }, r270x3[3] = { 8, 8, 8 };
    for (int round = 0; round < 24; round++) {
        int w = tref_randint(1, 13), h = tref_randint(1, 13);
        ts_view src = timg_whole(w, h, tref_randint(1, 4), tref_randtype());
        ts_view once;
        timg_random(&src);
        once = apply_chain(&src, id, 1);
        CHECK_MSG(tref_same_bytes(&once, &src), "code 1 is not a copy");
        timg_free(&once);
        expect_same_chain(&src, rot4, 4, id, 1, "6 four times = identity");
        expect_same_chain(&src, tt, 2, id, 1, "5 twice = identity");
        expect_same_chain(&src, fh_fv, 2, r180, 1, "2 then 4 = 3");
        expect_same_chain(&src, t_fh, 2, r90, 1, "5 then 2 = 6");
        expect_same_chain(&src, t_fv, 2, r270, 1, "5 then 4 = 8");
        expect_same_chain(&src, t_r180, 2, transv, 1, "5 then 3 = 7");
        expect_same_chain(&src, r90r90, 2, r180, 1, "6 twice = 3");
        expect_same_chain(&src, r270x3, 3, r90, 1, "8 three times = 6");
        timg_free(&src);
    }
}

/* An orientation carrying a matrix gives the bytes of the orientation and
 * then the matrix as two ops (both orders: the two commute), on every type
 * and channel count; and by hand: grey 0.5 v + 10 of 1 2 3 / 4 5 6, code 6. */
static void test_carried_matrix(void)
{
    for (int round = 0; round < 24; round++) {
        int w = tref_randint(1, 13), h = tref_randint(1, 13);
        ts_view src = timg_whole(w, h, tref_randint(1, 4), tref_randtype());
        timg_random(&src);
        tsk_op fused = orient_op(tref_randint(1, 8)), orient = fused, mat;
        memset(&mat, 0, sizeof mat);
        mat.kind = TSK_MATRIX;
        for (int i = 0; i < 12; i++) mat.u.matrix.m[i] = tref_randf(-0.6f, 1.2f);
        fused.u.orient.matrix = 1;
        memcpy(fused.u.orient.m, mat.u.matrix.m, sizeof mat.u.matrix.m);
        ts_view one = tref_apply_whole(&fused, &src);
        ts_view a = tref_apply_whole(&orient, &src), ab = tref_apply_whole(&mat, &a);
        ts_view b = tref_apply_whole(&mat, &src), ba = tref_apply_whole(&orient, &b);
        CHECK_MSG(tref_same_bytes(&one, &ab), "code %d + matrix != code, matrix on %dx%dx%d %s",
                  orient.u.orient.code, w, h, src.c, tref_type_names[src.type]);
        CHECK_MSG(tref_same_bytes(&one, &ba), "code %d + matrix != matrix, code on %dx%dx%d %s",
                  orient.u.orient.code, w, h, src.c, tref_type_names[src.type]);
        timg_free(&src);
        timg_free(&one);
        timg_free(&a);
        timg_free(&ab);
        timg_free(&b);
        timg_free(&ba);
    }
    static const float in[6] = { 1, 2, 3, 4, 5, 6 };
    static const float want[6] = { 12, 10.5f, 12.5f, 11, 13, 11.5f }; /* 0.5 * (4 1 / 5 2 / 6 3) + 10 */
    tsk_op op = orient_op(6);
    op.u.orient.matrix = 1;
    op.u.orient.m[0] = 0.5f;
    ts_view src = tref_view(3, 2, 1, TS_F32, in);
    op.u.orient.m[3] = 10.0f; /* F32: max is 1, so m[3] * max = 10 */
    ts_view dst = tref_apply_whole(&op, &src);
    tref_expect(&dst, want, 0, "orient 6 + matrix, grey f32");
    timg_free(&src);
    timg_free(&dst);
}

static void test_out_size_and_bad_code(void)
{
    int w, h;
    ts_err err;
    for (int code = 1; code <= 8; code++) {
        tsk_op op = orient_op(code);
        tsk_out_size(&op, 7, 4, &w, &h);
        CHECK_EQ_INT(w, code >= 5 ? 4 : 7);
        CHECK_EQ_INT(h, code >= 5 ? 7 : 4);
    }
    {
        static const float in[2] = { 5, 9 };
        tsk_op op = orient_op(9);
        ts_view src = tref_view(2, 1, 1, TS_U8, in), dst = timg_whole(2, 1, 1, TS_U8);
        CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
        op.u.orient.code = 0;
        CHECK_EQ_INT(tsk_ref_apply(&op, &src, &dst, &err), TS_E_ARG);
        timg_free(&src);
        timg_free(&dst);
    }
}

int main(void)
{
    check_seed();
    test_hand_3x2();
    test_hand_3x2_rgb();
    test_compositions_random();
    test_carried_matrix();
    test_out_size_and_bad_code();
    return check_exit();
}

/* test_gpu_orient.c - the orientation kernels (TSK_ORIENT, the eight EXIF
 * codes) against the CPU reference: every version, code, type and channel
 * count on fresh random inputs of several sizes, output tiles away from
 * the origin fed exactly tsk_need() of the input (or more), and rows that
 * are not 16-byte aligned; all of it again with a colour matrix carried
 * (as ts_plan_fuse makes them). Outputs are poisoned before each run; a
 * permutation of pixels, and the matrix's exact maths, must match exactly. */
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
#include <cuda_runtime_api.h>

static int quick; /* timg_quick() */

static const ts_type types[3] = { TS_U8, TS_U16, TS_F32 };

static int with_matrix; /* 1: the ops carry a colour matrix (a fused MATRIX) */

static tsk_op orient_op(int code)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_ORIENT;
    op.u.orient.code = code;
    if (with_matrix) {
        /* sepia-like gains above 1 and an offset: saturates at both ends */
        static const float m[12] = { 0.393f, 0.769f, 0.189f, 0.0f, 0.349f, 0.686f, 0.168f, 0.02f,
                                     0.272f, 0.534f, 0.131f, -0.1f };
        op.u.orient.matrix = 1;
        memcpy(op.u.orient.m, m, sizeof m);
    }
    return op;
}

/* Output region r of code applied to an in_w x in_h image; src holds
 * tsk_need(r) grown by `grow` pixels (clipped). The reference runs once;
 * versions v_first..v_last must match it. */
static void check_region(int code, ts_type t, int c, int in_w, int in_h, ts_rect r, int grow, size_t offset,
                         int v_first, int v_last)
{
    tsk_op op = orient_op(code);
    int out_w, out_h;
    tsk_out_size(&op, in_w, in_h, &out_w, &out_h);
    ts_rect n = tsk_need(&op, in_w, in_h, r);
    ts_rect s = timg_grow(n, grow, in_w, in_h);
    ts_view src = timg_alloc(s.x0, s.y0, s.w, s.h, in_w, in_h, c, t);
    ts_view want = timg_alloc(r.x0, r.y0, r.w, r.h, out_w, out_h, c, t);
    char tag[160];
    snprintf(tag, sizeof tag, "code %d%s %s c%d in %dx%d out region %d,%d %dx%d grow %d offset %zu", code,
             with_matrix ? "+matrix" : "", timg_type_name(t), c, in_w, in_h, r.x0, r.y0, r.w, r.h, grow, offset);
    timg_check_versions_exact(&op, &src, &want, offset, v_first, v_last, tag);
}

static void check_whole(int code, ts_type t, int c, int in_w, int in_h, int v_first, int v_last)
{
    tsk_op op = orient_op(code);
    ts_rect r = { 0, 0, 0, 0 };
    tsk_out_size(&op, in_w, in_h, &r.w, &r.h);
    check_region(code, t, c, in_w, in_h, r, 0, 0, v_first, v_last);
}

static void test_all_combinations(int versions)
{
    static const int sizes[3][2] = { { 1, 1 }, { 31, 33 }, { 1023, 769 } };
    for (int s = quick ? 1 : 0; s < (quick ? 2 : 3); s++)
        for (int code = 1; code <= 8; code++)
            for (int ti = 0; ti < 3; ti++)
                for (int c = 1; c <= 4; c++) check_whole(code, types[ti], c, sizes[s][0], sizes[s][1], 1, versions);
}

/* The large size: every code and version for RGBA8 (the common case),
 * and the transposes for two more pixel sizes. */
static void test_large(int versions)
{
    for (int code = 1; code <= 8; code++) check_whole(code, TS_U8, 4, 4097, 2161, 1, versions);
    check_whole(6, TS_F32, 1, 4097, 2161, 1, versions);
    check_whole(7, TS_U16, 4, 4097, 2161, 1, versions);
}

/* Output tiles away from the origin, src exactly tsk_need() or more, and
 * rows not 16-byte aligned. Region corners land on odd pixels so that the
 * 16-byte paths meet both aligned and unaligned sources. */
static void test_regions(int versions)
{
    const int in_w = 301, in_h = 203;
    for (int code = 1; code <= 8; code++)
        for (int ti = 0; ti < 3; ti++)
            for (int c = quick ? 4 : 1; c <= 4; c++) {
                tsk_op op = orient_op(code);
                int out_w, out_h;
                tsk_out_size(&op, in_w, in_h, &out_w, &out_h);
                ts_rect r;
                r.x0 = (int)(check_rand() % (unsigned)(out_w / 2));
                r.y0 = (int)(check_rand() % (unsigned)(out_h / 2));
                r.w = 1 + (int)(check_rand() % (unsigned)(out_w - r.x0));
                r.h = 1 + (int)(check_rand() % (unsigned)(out_h - r.y0));
                check_region(code, types[ti], c, in_w, in_h, r, 0, 0, 1, versions);
                check_region(code, types[ti], c, in_w, in_h, r, 5, (size_t)types[ti], 1, versions);
                /* a 64-aligned tile: the 16-byte paths take their vector route */
                ts_rect t = { 64, 64, out_w - 64 < 130 ? out_w - 64 : 130, out_h - 64 < 70 ? out_h - 64 : 70 };
                check_region(code, types[ti], c, in_w, in_h, t, 0, 0, 1, versions);
            }
}

/* A source that lacks what the output needs is refused, not read. */
static void test_refuses_short_source(void)
{
    tsk_op op = orient_op(6);
    ts_view src = timg_alloc(0, 0, 40, 30, 64, 48, 4, TS_U8);  /* the whole 64x48 input is needed */
    ts_view dst = timg_alloc(0, 0, 48, 64, 48, 64, 4, TS_U8);
    timg_dev_view ds, dd;
    ts_err err = { TS_OK, "" };
    timg_random(&src);
    CHECK(timg_dev_upload(&ds, &src, 0) && timg_dev_poisoned(&dd, &dst, 0));
    CHECK_EQ_INT(tsk_gpu_apply(&op, &ds.v, &dd.v, NULL, &err), TS_E_ARG);
    op.u.orient.code = 9;
    CHECK_EQ_INT(tsk_gpu_apply(&op, &ds.v, &dd.v, NULL, &err), TS_E_ARG);
    timg_dev_free(&ds);
    timg_dev_free(&dd);
    timg_free(&src);
    timg_free(&dst);
}

int main(void)
{
    check_seed();
    if (!timg_gpu_ready()) return 77;
    quick = timg_quick();
    int versions = timg_check_version_table(TSK_ORIENT);
    for (with_matrix = 0; with_matrix < 2; with_matrix++) {
        test_all_combinations(versions);
        test_regions(versions);
        if (!quick) test_large(versions);
    }
    with_matrix = 0;
    test_refuses_short_source();
    return check_exit();
}
#endif

/* test_gpu_point.c - the point kernels (MATRIX, PREMUL, UNPREMUL) against
 * the CPU reference: every version, type and channel count, on fresh
 * random inputs of several sizes, regions away from the origin, rows that
 * are not 16-byte aligned, and two streams using two coefficient banks at
 * once. Outputs are poisoned before each run; results must be identical
 * to the reference bit for bit. */
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
static const tsk_kind kinds[3] = { TSK_MATRIX, TSK_PREMUL, TSK_UNPREMUL };

/* Coefficients in [-0.75, 1.25]: results run below 0 and above max, so
 * saturation is exercised as well as rounding. */
static void random_matrix(float m[12])
{
    for (int i = 0; i < 12; i++) m[i] = (float)((check_rand() >> 40) * (2.0 / 16777216.0) - 0.75);
}

static tsk_op make_op(tsk_kind kind)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = kind;
    if (kind == TSK_MATRIX) random_matrix(op.u.matrix.m);
    return op;
}

/* One op on region r of a full_w x full_h image; src holds r grown by
 * `grow` pixels (clipped), as a planner may hand over more than needed.
 * The reference runs once; each listed version must match it. */
static void check_region(tsk_kind kind, ts_type t, int c, int full_w, int full_h, ts_rect r, int grow,
                         size_t offset, int v_first, int v_last)
{
    ts_rect s = timg_grow(r, grow, full_w, full_h);
    ts_view src = timg_alloc(s.x0, s.y0, s.w, s.h, full_w, full_h, c, t);
    ts_view want = timg_alloc(r.x0, r.y0, r.w, r.h, full_w, full_h, c, t);
    tsk_op op = make_op(kind);
    char tag[160];
    snprintf(tag, sizeof tag, "%s %s c%d %dx%d region %d,%d %dx%d grow %d offset %zu",
             kind == TSK_MATRIX ? "matrix" : kind == TSK_PREMUL ? "premul" : "unpremul", timg_type_name(t), c, full_w,
             full_h, r.x0, r.y0, r.w, r.h, grow, offset);
    timg_check_versions_exact(&op, &src, &want, offset, v_first, v_last, tag);
}

static void check_whole(tsk_kind kind, ts_type t, int c, int w, int h, int v_first, int v_last)
{
    ts_rect r = { 0, 0, w, h };
    check_region(kind, t, c, w, h, r, 0, 0, v_first, v_last);
}

/* Every version x op x type x channels at the small and middle sizes. */
static void test_all_combinations(int versions)
{
    static const int sizes[3][2] = { { 1, 1 }, { 31, 33 }, { 1023, 769 } };
    for (int s = 0; s < (quick ? 2 : 3); s++)
        for (int k = 0; k < 3; k++)
            for (int ti = 0; ti < 3; ti++)
                for (int c = 1; c <= 4; c++) check_whole(kinds[k], types[ti], c, sizes[s][0], sizes[s][1], 1, versions);
}

/* The large size, fewer combinations: it is the reference that is slow. */
static void test_large(int versions)
{
    check_whole(TSK_MATRIX, TS_U8, 4, 4097, 2161, 1, versions);
    check_whole(TSK_MATRIX, TS_F32, 3, 4097, 2161, 3, versions);
    check_whole(TSK_UNPREMUL, TS_U16, 2, 4097, 2161, 2, versions);
    check_whole(TSK_PREMUL, TS_U8, 3, 4097, 2161, versions, versions);
}

/* Tiles away from the origin, src larger than needed, unaligned rows. */
static void test_regions(int versions)
{
    for (int k = 0; k < 3; k++)
        for (int ti = 0; ti < 3; ti++)
            for (int c = 1; c <= 4; c++) {
                ts_rect r = { 1 + (int)(check_rand() % 200), 1 + (int)(check_rand() % 100),
                              1 + (int)(check_rand() % 300), 1 + (int)(check_rand() % 150) };
                size_t elem = (size_t)types[ti];
                if (quick) { r.w = r.w % 40 + 1; r.h = r.h % 20 + 1; }
                check_region(kinds[k], types[ti], c, 517, 263, r, 0, 0, 1, versions);
                check_region(kinds[k], types[ti], c, 517, 263, r, 7, elem, 1, versions);
            }
}

/* Two streams, each with its own bank and its own sequence of matrices,
 * launched alternately; every output must match its own matrix. Each
 * matrix is used twice in a row, so the upload cache both hits and misses. */
enum { STREAM_RUNS = 12 };
static void test_two_streams(int version)
{
    const int w = quick ? 61 : 1023, h = quick ? 37 : 769;
    cudaStream_t s[2];
    ts_view in[2];
    timg_dev_view din[2], dout[2][STREAM_RUNS];
    tsk_op ops[2][3];
    ts_err err = { TS_OK, "" };
    for (int k = 0; k < 2; k++) {
        CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking) == cudaSuccess);
        in[k] = timg_whole(w, h, 4, TS_U8);
        timg_random(&in[k]);
        CHECK(timg_dev_upload(&din[k], &in[k], 0));
        for (int m = 0; m < 3; m++) ops[k][m] = make_op(TSK_MATRIX);
        for (int i = 0; i < STREAM_RUNS; i++) CHECK(timg_dev_poisoned(&dout[k][i], &in[k], 0));
    }
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    for (int i = 0; i < STREAM_RUNS; i++)
        for (int k = 0; k < 2; k++) {
            tsk_launch l = { s[k], version, TS_PATH_GLOBAL, k };
            CHECK_MSG(tsk_gpu_apply(&ops[k][(i / 2) % 3], &din[k].v, &dout[k][i].v, &l, &err) == TS_OK, "%s", err.msg);
        }
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < STREAM_RUNS; i++) {
            ts_view want = timg_whole(w, h, 4, TS_U8), got = timg_whole(w, h, 4, TS_U8);
            char name[96];
            snprintf(name, sizeof name, "two streams v%d: stream %d run %d", version, k, i);
            CHECK(tsk_ref_apply(&ops[k][(i / 2) % 3], &in[k], &want, &err) == TS_OK);
            CHECK(timg_dev_download(&got, &dout[k][i]));
            CHECK_MSG(timg_views_equal(&got, &want, name), "%s", name);
            timg_free(&want);
            timg_free(&got);
            timg_dev_free(&dout[k][i]);
        }
        timg_dev_free(&din[k]);
        timg_free(&in[k]);
        cudaStreamDestroy(s[k]);
    }
}

/* A source that lacks part of the destination region is refused. */
static void test_refuses_short_source(void)
{
    ts_view src = timg_alloc(10, 10, 20, 20, 64, 64, 4, TS_U8);
    ts_view dst = timg_alloc(10, 10, 21, 20, 64, 64, 4, TS_U8);
    timg_dev_view ds, dd;
    tsk_op op = make_op(TSK_MATRIX);
    ts_err err = { TS_OK, "" };
    timg_random(&src);
    CHECK(timg_dev_upload(&ds, &src, 0) && timg_dev_poisoned(&dd, &dst, 0));
    CHECK_EQ_INT(tsk_gpu_apply(&op, &ds.v, &dd.v, NULL, &err), TS_E_ARG);
    CHECK(strstr(err.msg, "matrix") != NULL);
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
    int versions = timg_check_version_table(TSK_MATRIX);
    CHECK_EQ_INT(tsk_version_count(TSK_PREMUL), versions);
    test_all_combinations(versions);
    test_regions(versions);
    if (!quick) test_large(versions);
    for (int v = 1; v <= versions; v++) test_two_streams(v);
    test_refuses_short_source();
    return check_exit();
}
#endif

/* test_gpu_fuse.c - a separable convolution that writes its output
 * oriented (u.sep.then, what ts_plan_fuse makes of a convolution followed
 * by an orientation or a colour matrix) against the two ops it replaces:
 *   - on the GPU, byte for byte the convolution alone followed by the
 *     orientation (with its matrix), both on the GPU;
 *   - against tsk_ref_apply within the convolution's +-1, carried through
 *     the matrix (floor of its largest absolute row sum, plus 1);
 *   - nothing written outside the destination region (poisoned margins);
 * for every orientation code, with and without a matrix, 3 to 15 taps,
 * every border, odd sizes, regions away from the origin and unaligned
 * rows. Then the planner: which ops tsk_gpu_sep_fuses takes, and the chain
 * `gauss=sigma=2,matrix=sepia,transpose` on RGB(X)8 fused into one op. */
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
#include "plan.h"
#include "test_gpu_conv_util.h"

/* matrix 1: sepia with offsets (the general rule); matrix 2: the sepia
 * preset, coefficients >= 0 and no offsets (the kernels' plain rule, whose
 * red row saturates) */
static const float SEPIA[12] = { 0.393f, 0.769f, 0.189f, 0.0f, 0.349f, 0.686f, 0.168f, 0.02f,
                                 0.272f, 0.534f, 0.131f, -0.1f };
static const float SEPIA_PLAIN[12] = { 0.393f, 0.769f, 0.189f, 0.0f, 0.349f, 0.686f, 0.168f, 0.0f,
                                       0.272f, 0.534f, 0.131f, 0.0f };

/* Gauss-like (symmetric, positive, normalised) or box taps, N x N. */
static tsk_op smooth_op(int n, int box, ts_border b)
{
    tsk_op op;
    memset(&op, 0, sizeof op);
    op.kind = TSK_CONV_SEP;
    op.u.sep.nx = op.u.sep.ny = n;
    if (box) {
        for (int i = 0; i < n; i++) op.u.sep.kx[i] = op.u.sep.ky[i] = 1.0f / (float)n;
    } else {
        gc_random_taps(op.u.sep.kx, n, 1);
        for (int i = 0; i < n / 2; i++) op.u.sep.kx[n - 1 - i] = op.u.sep.kx[i];
        double s = 0;
        for (int i = 0; i < n; i++) s += op.u.sep.kx[i];
        for (int i = 0; i < n; i++) op.u.sep.ky[i] = op.u.sep.kx[i] = (float)(op.u.sep.kx[i] / s) * 0.9999f;
    }
    op.u.sep.conv_w = 1.0f;
    op.u.sep.border = b;
    op.u.sep.border_value = 77.0f;
    return op;
}

static tsk_op then_of(const tsk_op *conv, int code, int matrix)
{
    tsk_op op = *conv;
    op.u.sep.then.code = code;
    op.u.sep.then.matrix = matrix != 0;
    if (matrix) memcpy(op.u.sep.then.m, matrix == 2 ? SEPIA_PLAIN : SEPIA, sizeof SEPIA);
    return op;
}

/* How far a result may be from the reference: the convolution's 1, through
 * the matrix when there is one. */
static double tolerance(const tsk_op *fused)
{
    if (!fused->u.sep.then.matrix) return 1.0;
    double worst = 0;
    for (int i = 0; i < 3; i++) {
        double s = 0;
        for (int j = 0; j < 3; j++) s += fabs(fused->u.sep.then.m[4 * i + j]);
        if (s > worst) worst = s;
    }
    return floor(worst) + 1.0;
}

static ts_view download(const gc_dev *d, const ts_view *like, long *touched)
{
    ts_view v = timg_alloc(like->x0, like->y0, like->w, like->h, like->full_w, like->full_h, like->c, like->type);
    timg_poison(&v);
    *touched = gc_download(d, &v);
    return v;
}

/* The fused op over output region r of a W x H RGBA8 image. */
static void check_fused(const tsk_op *fused, int W, int H, ts_rect r, size_t shift, const char *what)
{
    char name[256];
    tsk_op conv, orient;
    CHECK(tsk_split_then(fused, &conv, &orient));
    int ow, oh;
    tsk_out_size(fused, W, H, &ow, &oh);
    snprintf(name, sizeof name, "%s %dx%d taps, code %d%s, %s border, %dx%d region %d,%d %dx%d shift %zu", what,
             fused->u.sep.nx, fused->u.sep.ny, fused->u.sep.then.code, fused->u.sep.then.matrix ? "+matrix" : "",
             gc_border_names[fused->u.sep.border], W, H, r.x0, r.y0, r.w, r.h, shift);

    ts_view img = timg_whole(W, H, 4, TS_U8);
    timg_random(&img);
    ts_view src = gc_crop(&img, tsk_need(fused, W, H, r));
    ts_rect m = tsk_need(&orient, W, H, r);
    ts_view mid_h = timg_alloc(m.x0, m.y0, m.w, m.h, W, H, 4, TS_U8);
    ts_view out_h = timg_alloc(r.x0, r.y0, r.w, r.h, ow, oh, 4, TS_U8);
    ts_view ref = timg_alloc(r.x0, r.y0, r.w, r.h, ow, oh, 4, TS_U8);
    ts_err err = { TS_OK, "" };
    timg_poison(&ref);
    CHECK_MSG(tsk_ref_apply(fused, &src, &ref, &err) == TS_OK, "%s: reference: %s", name, err.msg);

    /* the default version (what the planner fuses for) and each
     * tensor-core version by number: the orientation's kernel after the
     * convolution of that version */
    static const int versions[] = { 0, 13, 15, 16, 18, 19, 21, 23 };
    for (int vi = 0; vi < (int)(sizeof versions / sizeof versions[0]); vi++) {
        if (versions[vi] == 19 && fused->u.sep.nx < 7) continue; /* v19 runs the walk below 7 taps: no orientation */
        gc_dev dsrc, dmid, dtwo, dfused;
        CHECK(gc_upload(&dsrc, &src, shift) && gc_dev_alloc(&dmid, &mid_h, shift) &&
              gc_dev_alloc(&dtwo, &out_h, shift) && gc_dev_alloc(&dfused, &out_h, shift));
        tsk_launch l = { NULL, versions[vi], TS_PATH_GLOBAL, 0 }, lo = { NULL, 0, TS_PATH_GLOBAL, 0 };
        CHECK_MSG(tsk_gpu_apply(&conv, &dsrc.v, &dmid.v, &l, &err) == TS_OK, "%s v%d: convolution: %s", name,
                  versions[vi], err.msg);
        CHECK_MSG(tsk_gpu_apply(&orient, &dmid.v, &dtwo.v, &lo, &err) == TS_OK, "%s: orientation: %s", name, err.msg);
        CHECK_MSG(tsk_gpu_apply(fused, &dsrc.v, &dfused.v, &l, &err) == TS_OK, "%s v%d: fused: %s", name,
                  versions[vi], err.msg);
        CHECK_MSG(cudaDeviceSynchronize() == cudaSuccess, "%s v%d: kernel failed", name, versions[vi]);

        long touched_two = 0, touched = 0;
        ts_view two = download(&dtwo, &out_h, &touched_two), got = download(&dfused, &out_h, &touched);
        CHECK_MSG(touched == 0, "%s v%d: %ld bytes outside the destination region written", name, versions[vi],
                  touched);
        CHECK_MSG(touched_two == 0, "%s v%d: the two ops wrote %ld bytes outside their region", name, versions[vi],
                  touched_two);
        CHECK_MSG(timg_views_equal(&got, &two, name), "%s v%d: differs from the two ops on the GPU", name,
                  versions[vi]);
        const double tol = tolerance(fused);
        const double d = timg_compare(&got, &ref, tol, name);
        CHECK_MSG(d <= tol, "%s v%d: differs from the reference by %g (allowed %g)", name, versions[vi], d, tol);
        gc_dev_free(&dsrc);
        gc_dev_free(&dmid);
        gc_dev_free(&dtwo);
        gc_dev_free(&dfused);
        timg_free(&two);
        timg_free(&got);
    }

    timg_free(&img);
    timg_free(&src);
    timg_free(&mid_h);
    timg_free(&out_h);
    timg_free(&ref);
}

static ts_rect whole_out(const tsk_op *op, int W, int H)
{
    ts_rect r = { 0, 0, 0, 0 };
    tsk_out_size(op, W, H, &r.w, &r.h);
    return r;
}

/* A random region of the output, corners on odd pixels now and then. */
static ts_rect random_region(const tsk_op *op, int W, int H)
{
    ts_rect all = whole_out(op, W, H), r;
    r.x0 = (int)(check_rand() % (unsigned)(all.w / 2 + 1));
    r.y0 = (int)(check_rand() % (unsigned)(all.h / 2 + 1));
    r.w = 1 + (int)(check_rand() % (unsigned)(all.w - r.x0));
    r.h = 1 + (int)(check_rand() % (unsigned)(all.h - r.y0));
    return r;
}

static void test_codes(int quick)
{
    static const int taps[5] = { 3, 5, 7, 13, 15 };
    static const int sizes[3][2] = { { 37, 29 }, { 301, 203 }, { 1023, 769 } };
    int k = 0;
    for (int code = 1; code <= 8; code++)
        for (int matrix = 0; matrix < 3; matrix++)
            for (int s = 0; s < (quick ? 2 : 3); s++, k++) {
                const int n = taps[k % 5], W = sizes[s][0], H = sizes[s][1];
                const tsk_op conv = smooth_op(n, k % 4 == 3, (ts_border)(k % 5));
                tsk_op op = then_of(&conv, code, matrix);
                check_fused(&op, W, H, whole_out(&op, W, H), 0, "whole");
                check_fused(&op, W, H, random_region(&op, W, H), k % 2 ? 4 : 0, "region");
            }
}

/* An output region on the 64 x 32 tile grid, and one a pixel off it. */
static void test_tile_grid(void)
{
    const tsk_op conv = smooth_op(13, 0, TS_BORDER_REFLECT101);
    for (int code = 5; code <= 8; code++) {
        tsk_op op = then_of(&conv, code, code % 3);
        ts_rect on = { 64, 32, 128, 96 }, off = { 65, 33, 127, 95 };
        check_fused(&op, 700, 500, on, 0, "tile");
        check_fused(&op, 700, 500, off, 4, "tile");
    }
}

/* Versions other than the tensor-core one refuse an op with an
 * orientation after it, by name, and write nothing. */
static void test_other_versions_refuse(void)
{
    const tsk_op conv = smooth_op(7, 0, TS_BORDER_REPLICATE);
    tsk_op op = then_of(&conv, 6, 0);
    ts_view img = timg_whole(40, 30, 4, TS_U8), out = timg_whole(30, 40, 4, TS_U8);
    timg_random(&img);
    ts_view src = timg_to_device(&img), dst = timg_device_poisoned(&out);
    ts_err err = { TS_OK, "" };
    tsk_launch l = { NULL, 1, TS_PATH_GLOBAL, 0 };
    CHECK_EQ_INT(tsk_gpu_apply(&op, &src, &dst, &l, &err), TS_E_ARG);
    CHECK_MSG(strstr(err.msg, "orientation") != NULL, "message '%s'", err.msg);
    /* the destination must have the oriented size */
    ts_view same = timg_device_poisoned(&img);
    l.version = 0;
    CHECK_EQ_INT(tsk_gpu_apply(&op, &src, &same, &l, &err), TS_E_ARG);
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    timg_device_free(&src);
    timg_device_free(&dst);
    timg_device_free(&same);
    timg_free(&img);
    timg_free(&out);
}

/* What the planner may fuse: the tensor-core version's ops only. */
static void test_fuses(void)
{
    tsk_op op = smooth_op(13, 0, TS_BORDER_REPLICATE);
    CHECK(tsk_gpu_sep_fuses(&op, 4, TS_U8));
    CHECK(!tsk_gpu_sep_fuses(&op, 3, TS_U8));
    CHECK(!tsk_gpu_sep_fuses(&op, 4, TS_U16));
    CHECK(!tsk_gpu_sep_fuses(&op, 4, TS_F32));
    op.alpha_passthrough = 1;
    CHECK(!tsk_gpu_sep_fuses(&op, 4, TS_U8));
    op = smooth_op(3, 0, TS_BORDER_REPLICATE); /* the fewest taps the tensor cores take */
    CHECK(tsk_gpu_sep_fuses(&op, 4, TS_U8));
    op = smooth_op(5, 0, TS_BORDER_REPLICATE);
    CHECK(tsk_gpu_sep_fuses(&op, 4, TS_U8));
    op = smooth_op(17, 0, TS_BORDER_REPLICATE); /* past the tensor cores' 15 */
    CHECK(!tsk_gpu_sep_fuses(&op, 4, TS_U8));
    op = smooth_op(9, 0, TS_BORDER_REPLICATE);
    op.u.sep.center_w = 1.5f; /* an unsharp mask */
    op.u.sep.conv_w = -0.5f;
    CHECK(!tsk_gpu_sep_fuses(&op, 4, TS_U8));
    op = smooth_op(9, 0, TS_BORDER_REPLICATE);
    op.u.sep.ny = 7;
    CHECK(!tsk_gpu_sep_fuses(&op, 4, TS_U8));
}

static ts_plan plan_of(const char *text, int c)
{
    ts_plan p;
    ts_chain *chain = NULL;
    ts_err err = { TS_OK, "" };
    memset(&p, 0, sizeof p);
    CHECK_MSG(ts_chain_parse(text, &chain, &err) == TS_OK, "%s", err.msg);
    if (chain) CHECK_MSG(ts_plan_make(chain, 640, 480, c, TS_U8, &p, &err) == TS_OK, "%s", err.msg);
    ts_chain_free(chain);
    return p;
}

/* The chain users run: one op on the device (RGB travels as RGBX, c 4). */
static void test_plan(void)
{
    ts_plan p = plan_of("gauss=sigma=2,matrix=sepia,transpose", 3);
    CHECK_EQ_INT(p.n, 3);
    CHECK_EQ_INT(ts_plan_fuse(&p, 4), 2);
    CHECK_EQ_INT(p.n, 1);
    if (p.n == 1) {
        const tsk_orient *t = &p.ops[0].u.sep.then;
        CHECK(p.ops[0].kind == TSK_CONV_SEP && t->code == 5 && t->matrix);
        CHECK(p.w[1] == 480 && p.h[1] == 640);
    }
    ts_plan_free(&p);
    p = plan_of("gauss=sigma=2,matrix=sepia", 3); /* a matrix alone rides as the identity orientation */
    CHECK_EQ_INT(ts_plan_fuse(&p, 4), 1);
    CHECK(p.n == 1 && p.ops[0].u.sep.then.code == 1 && p.ops[0].u.sep.then.matrix);
    ts_plan_free(&p);
    p = plan_of("gauss=sigma=2,rot90,matrix=grey", 3);
    CHECK_EQ_INT(ts_plan_fuse(&p, 4), 2);
    CHECK(p.n == 1 && p.ops[0].u.sep.then.code == 6 && p.ops[0].u.sep.then.matrix);
    ts_plan_free(&p);
    p = plan_of("gauss=sigma=0.6,transpose", 3); /* 5 taps fuse too */
    CHECK_EQ_INT(ts_plan_fuse(&p, 4), 1);
    CHECK(p.n == 1 && p.ops[0].u.sep.then.code == 5 && !p.ops[0].u.sep.then.matrix);
    ts_plan_free(&p);
    p = plan_of("gauss=sigma=2,transpose", 4); /* alpha: premultiplied between, nothing beside the convolution */
    CHECK_EQ_INT(ts_plan_fuse(&p, 4), 0);
    ts_plan_free(&p);
}

int main(void)
{
    check_seed();
    if (!timg_gpu_ready()) return 77;
    int major = 0, dev = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    if (major < 8) {
        fprintf(stderr, "compute capability %d: no tensor-core version, nothing fuses: skipping\n", major);
        return 77;
    }
    const int quick = timg_quick() || gc_env("TS_CONV_SMALL");
    test_fuses();
    test_plan();
    test_other_versions_refuse();
    test_codes(quick);
    test_tile_grid();
    return check_exit();
}
#endif

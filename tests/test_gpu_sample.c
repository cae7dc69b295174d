/* test_gpu_sample.c - TSK_SAMPLE on the GPU against the CPU reference:
 * every version x path (global, texture), every interpolation, every
 * border mode, U8/U16/F32, 1-4 channels, random transforms (identity,
 * exact 2x and 0.5x, scale up and down, rotation, shear) on fresh random
 * inputs of 1x1, 31x33, 1023x769 and 4097x2161 (fewer combinations at the
 * larger sizes). Output regions sit away from the origin and the source is
 * the rect tsk_need gives, either in its own allocation (the texture path
 * takes it) or cut out of a whole-image buffer (misaligned for the texture
 * unit: the launch falls back to the global path). Outputs are poisoned
 * and framed by a guard of poisoned pixels that must survive.
 *
 * Expected differences from the reference:
 *   global path, both filters   none (the kernels repeat its float maths
 *                               operation by operation, unfused)
 *   texture path, nearest       none (the tap is chosen by hand)
 *   texture path, bilinear      within tex_bound[] below: the filter weights
 *                               have 8 bits of fraction in hardware.
 *   area, bicubic, v1-v4        none on either path (one exact kernel; the
 *                               texture path point-samples each tap)
 *   texture path v5, v6         a different filter (a mipmapped texture read
 *                               trilinear / anisotropic): not compared value
 *                               by value on random data; test_mip_zoneplate
 *                               holds it to mip_bound[] and to a PSNR against
 *                               the double-precision Lanczos-3 ideal
 *                               (tests/quality_ref.h).
 *
 * TS_SAMPLE_TIMING=1 times each version and path instead on 7680x4320
 * RGBA8 resized 2x up and 0.5x down, against a device-to-device copy
 * measured in the same run; TS_SAMPLE_SMALL=1 runs a third of the
 * combinations at the two small sizes only (for compute-sanitizer). */
#include "check.h"
#include "testimg.h"
#include "tsk.h"
#include "quality_ref.h"

#ifndef TS_HAVE_CUDA
int main(void)
{
    fprintf(stderr, "built without CUDA: skipping\n");
    return 77;
}
#else
#include <cuda_runtime_api.h>

static const ts_type types[3] = { TS_U8, TS_U16, TS_F32 };
static const char *const border_names[5] = { "replicate", "reflect101", "reflect", "wrap", "constant" };
static const char *const interp_names[TSK_INTERP_COUNT] = { "nearest", "bilinear", "area", "bicubic" };

static int is_filtered(tsk_interp i) { return i == TSK_AREA || i == TSK_BICUBIC; }
/* Versions that read a mipmapped texture for area and bicubic. */
static int is_mip(int version, int path, tsk_interp i) { return path && (version == 5 || version == 6) && is_filtered(i); }
/* v8 and v10 return the texture unit's RGBA8 results as halves: other
 * bytes than the texture path's other versions, within the same bound. */
static int is_half(int version, int path, tsk_interp i)
{
    return path && (version == 8 || version == 10) && i == TSK_BILINEAR;
}

/* Largest |texture - reference| of bilinear, per type (U8, U16, F32 on
 * values in 0..1). Measured on an H200 over this test's inputs in two runs
 * (up to 180 million U8, 35 million U16 and 45 million F32 values, every
 * border the hardware takes): 2, 443 and 0.0055. The texture unit's weights
 * carry 8 bits of fraction, so each axis can be off by up to 1/256 of the
 * range: the bounds are that, 2 * max / 256 (U8 results then round to
 * within 2, which the measurement reaches), with U16 and F32 above what
 * was measured. */
static const double tex_bound[3] = { 2.0, 512.0, 0.008 };
static double tex_worst[3][5];      /* per type and border, measured in this run */
static double half_worst;           /* v8's and v10's U8 RGBA results (is_half), every border */
static long long half_values, half_differ;
static long long tex_values[3][5], tex_differ[3][5];

static int type_index(ts_type t) { return t == TS_U8 ? 0 : t == TS_U16 ? 1 : 2; }
static const char *type_name(ts_type t) { return t == TS_U8 ? "u8" : t == TS_U16 ? "u16" : "f32"; }
static size_t pixel_bytes(const ts_view *v) { return (size_t)v->c * (size_t)v->type; }
static size_t row_bytes(const ts_view *v) { return (size_t)v->w * pixel_bytes(v); }
static double urand(void) { return (double)(check_rand() >> 11) * (1.0 / 9007199254740992.0); }

/* ------------------------------------------------------------ transforms */

typedef enum xf_kind { XF_IDENTITY, XF_DOUBLE, XF_HALF, XF_UP, XF_DOWN, XF_ROTATE, XF_SHEAR, XF_KINDS } xf_kind;
static const char *const xf_names[XF_KINDS] = { "identity", "2x", "0.5x", "up", "down", "rotate", "shear" };

/* Output size of forward map (a b; c d) applied to a w x h image: its
 * bounding box, capped at cap times the input per axis. */
static void bbox_size(double a, double b, double c, double d, int w, int h, double cap, int *ow, int *oh)
{
    double xs[4] = { 0, a * w, b * h, a * w + b * h }, ys[4] = { 0, c * w, d * h, c * w + d * h };
    double x0 = xs[0], x1 = xs[0], y0 = ys[0], y1 = ys[0];
    for (int i = 1; i < 4; i++) {
        x0 = fmin(x0, xs[i]); x1 = fmax(x1, xs[i]);
        y0 = fmin(y0, ys[i]); y1 = fmax(y1, ys[i]);
    }
    *ow = (int)ceil(fmin(x1 - x0, cap * w));
    *oh = (int)ceil(fmin(y1 - y0, cap * h));
    if (*ow < 1) *ow = 1;
    if (*oh < 1) *oh = 1;
}

/* A SAMPLE op of kind k for a w x h input. The inverse maps the output's
 * centre near the input's (a few pixels off, so taps cross the borders);
 * max_up bounds the scale factors. */
static tsk_op make_sample(xf_kind k, int w, int h, double max_up, tsk_interp interp, ts_border border, float bv)
{
    tsk_op op;
    double a = 1, b = 0, c = 0, d = 1, s, th;
    int ow = w, oh = h;
    memset(&op, 0, sizeof op);
    op.kind = TSK_SAMPLE;
    op.u.sample.interp = interp;
    op.u.sample.border = border;
    op.u.sample.border_value = bv;
    switch (k) {
    case XF_IDENTITY: case XF_DOUBLE: case XF_HALF:
        s = k == XF_IDENTITY ? 1.0 : k == XF_DOUBLE ? 2.0 : 0.5;
        ow = (int)(w * s) > 0 ? (int)(w * s) : 1;
        oh = (int)(h * s) > 0 ? (int)(h * s) : 1;
        op.u.sample.inv[0] = op.u.sample.inv[4] = (float)(1.0 / s);
        op.u.sample.out_w = ow;
        op.u.sample.out_h = oh;
        return op;
    case XF_UP: a = 1.1 + urand() * (max_up - 1.1); d = a * (0.8 + 0.4 * urand()); break;
    case XF_DOWN: a = 0.2 + 0.7 * urand(); d = a * (0.8 + 0.4 * urand()); break;
    case XF_ROTATE:
        th = urand() * 6.283185307179586;
        s = 0.6 + urand() * (max_up - 0.6);
        a = s * cos(th); b = -s * sin(th); c = s * sin(th); d = s * cos(th);
        break;
    default: /* shear, with a little scale */
        b = urand() - 0.5; c = 0.4 * (urand() - 0.5);
        a = 0.7 + 0.5 * urand(); d = 0.7 + 0.5 * urand();
        break;
    }
    bbox_size(a, b, c, d, w, h, max_up * 1.5, &ow, &oh);
    double det = a * d - b * c, ia = d / det, ib = -b / det, ic = -c / det, id = a / det;
    op.u.sample.inv[0] = (float)ia;
    op.u.sample.inv[1] = (float)ib;
    op.u.sample.inv[3] = (float)ic;
    op.u.sample.inv[4] = (float)id;
    op.u.sample.inv[2] = (float)(w / 2.0 - (ia * ow / 2.0 + ib * oh / 2.0) + 6.0 * (urand() - 0.5));
    op.u.sample.inv[5] = (float)(h / 2.0 - (ic * ow / 2.0 + id * oh / 2.0) + 6.0 * (urand() - 0.5));
    op.u.sample.out_w = ow;
    op.u.sample.out_h = oh;
    return op;
}

/* A random rect of an n_w x n_h image, usually away from the origin;
 * whole (1 in 4) when asked or when the image is one pixel wide. */
static ts_rect random_region(int n_w, int n_h, int whole)
{
    ts_rect r = { 0, 0, n_w, n_h };
    if (whole || check_rand() % 4 == 0) return r;
    if (n_w > 1) {
        r.x0 = 1 + (int)(check_rand() % (unsigned)(n_w / 3 + 1));
        if (r.x0 >= n_w) r.x0 = n_w - 1;
        r.w = 1 + (int)(check_rand() % (unsigned)(n_w - r.x0));
    }
    if (n_h > 1) {
        r.y0 = 1 + (int)(check_rand() % (unsigned)(n_h / 3 + 1));
        if (r.y0 >= n_h) r.y0 = n_h - 1;
        r.h = 1 + (int)(check_rand() % (unsigned)(n_h - r.y0));
    }
    return r;
}

static float random_border_value(ts_type t)
{
    if (check_rand() % 3 == 0) return 0.0f;
    if (t == TS_F32) return (float)urand();
    return (float)(check_rand() % (t == TS_U8 ? 256u : 65536u));
}

/* ------------------------------------------------------------ device views */

/* A device buffer for a view: its own pitched allocation, or (cut = 1) the
 * view's rect inside a device copy of the whole image. */
typedef struct dev_view {
    ts_view v;
    unsigned char *base;
} dev_view;

static int dev_own(dev_view *d, const ts_view *h)
{
    size_t pitch = 0, rb = row_bytes(h);
    d->v = *h;
    if (cudaMallocPitch((void **)&d->base, &pitch, rb ? rb : 1, (size_t)(h->h > 0 ? h->h : 1)) != cudaSuccess)
        return 0;
    d->v.data = d->base;
    d->v.pitch = pitch;
    if (rb && h->h > 0 &&
        cudaMemcpy2D(d->v.data, pitch, h->data, h->pitch, rb, (size_t)h->h, cudaMemcpyHostToDevice) != cudaSuccess)
        return 0;
    return 1;
}

/* r of the whole host image `whole`, pointing into a device copy of it. */
static int dev_cut(dev_view *d, const ts_view *whole, ts_rect r)
{
    if (!dev_own(d, whole)) return 0;
    d->v.x0 = r.x0; d->v.y0 = r.y0; d->v.w = r.w; d->v.h = r.h;
    d->v.data = d->base + (size_t)r.y0 * d->v.pitch + (size_t)r.x0 * pixel_bytes(whole);
    return 1;
}

static void dev_free(dev_view *d) { cudaFree(d->base); d->base = NULL; }

/* The destination region framed by one poisoned pixel on every side. */
typedef struct dev_out {
    dev_view d;
    size_t frame_pitch;
} dev_out;

static int out_alloc(dev_out *o, const ts_view *want)
{
    size_t pb = pixel_bytes(want), pitch = 0;
    o->d.v = *want;
    if (cudaMallocPitch((void **)&o->d.base, &pitch, (size_t)(want->w + 2) * pb, (size_t)want->h + 2) != cudaSuccess)
        return 0;
    o->frame_pitch = pitch;
    o->d.v.pitch = pitch;
    o->d.v.data = o->d.base + pitch + pb;
    return 1;
}

static int out_poison(dev_out *o)
{
    size_t pb = pixel_bytes(&o->d.v);
    return cudaMemset2D(o->d.base, o->frame_pitch, 0xA5, (size_t)(o->d.v.w + 2) * pb, (size_t)o->d.v.h + 2) ==
           cudaSuccess;
}

/* Download the region into got; 1 when the frame is still poison. */
static int out_download(const dev_out *o, ts_view *got)
{
    size_t pb = pixel_bytes(got), fb = (size_t)(got->w + 2) * pb;
    unsigned char *frame = (unsigned char *)malloc(fb * (size_t)(got->h + 2));
    int intact = 1;
    if (!frame) return 0;
    cudaMemcpy2D(frame, fb, o->d.base, o->frame_pitch, fb, (size_t)got->h + 2, cudaMemcpyDeviceToHost);
    for (int y = 0; y < got->h + 2; y++) {
        const unsigned char *row = frame + (size_t)y * fb;
        for (size_t i = 0; i < fb; i++) {
            int inside = y > 0 && y <= got->h && i >= pb && i < fb - pb;
            if (!inside && row[i] != 0xA5) intact = 0;
        }
        if (y > 0 && y <= got->h) memcpy(got->data + (size_t)(y - 1) * got->pitch, row + pb, row_bytes(got));
    }
    free(frame);
    return intact;
}

/* ------------------------------------------------------------ comparing */

/* Largest |got - want| over the region; counts values that differ. */
static double max_diff(const ts_view *got, const ts_view *want, long long *differ)
{
    double worst = 0;
    for (int y = 0; y < got->h; y++) {
        const unsigned char *g = got->data + (size_t)y * got->pitch, *w = want->data + (size_t)y * want->pitch;
        int n = got->w * got->c;
        if (!memcmp(g, w, row_bytes(got))) continue;
        for (int i = 0; i < n; i++) {
            double a, b;
            if (got->type == TS_U8) { a = g[i]; b = w[i]; }
            else if (got->type == TS_U16) { a = ((const uint16_t *)g)[i]; b = ((const uint16_t *)w)[i]; }
            else { a = ((const float *)g)[i]; b = ((const float *)w)[i]; }
            double d = a == b ? 0 : (a != a || b != b) ? INFINITY : fabs(a - b);
            if (d > 0) (*differ)++;
            if (d > worst) worst = d;
        }
    }
    return worst;
}

/* ------------------------------------------------------------ one case */

typedef struct sample_case {
    ts_type t;
    int c;
    tsk_interp interp;
    ts_border border;
    xf_kind xf;
    int in_w, in_h;
    double max_up;
    int whole_out;  /* the whole output image, not a random region */
    int cut;        /* src cut out of a whole-image device buffer */
} sample_case;

/* Run every version x path of op on one region and compare with want. */
static void run_all(const tsk_op *op, const sample_case *k, const ts_view *host_whole, ts_rect need,
                    const ts_view *want, const char *tag)
{
    dev_view ds;
    dev_out o;
    ts_view got = timg_alloc(want->x0, want->y0, want->w, want->h, want->full_w, want->full_h, want->c, want->type);
    int ok = k->cut ? dev_cut(&ds, host_whole, need) : 1;
    if (!k->cut) {
        ts_view hs = *host_whole;
        hs.x0 = need.x0; hs.y0 = need.y0; hs.w = need.w; hs.h = need.h;
        hs.data = host_whole->data + (size_t)need.y0 * host_whole->pitch + (size_t)need.x0 * pixel_bytes(host_whole);
        ok = dev_own(&ds, &hs);
    }
    CHECK_MSG(ok && out_alloc(&o, want), "%s: device buffers", tag);
    for (int path = 0; path <= 1; path++)
        for (int v = 1; v <= tsk_version_count(TSK_SAMPLE); v++) {
            tsk_launch l = { 0, v, path ? TS_PATH_TEXTURE : TS_PATH_GLOBAL, (int)(check_rand() % TSK_SLOTS) };
            ts_err err = { TS_OK, "" };
            long long differ = 0;
            CHECK(out_poison(&o));
            ts_status st = tsk_gpu_apply(op, &ds.v, &o.d.v, &l, &err);
            CHECK_MSG(st == TS_OK, "%s %s v%d: %s", tag, path ? "texture" : "global", v, err.msg);
            CHECK_MSG(cudaDeviceSynchronize() == cudaSuccess, "%s %s v%d: kernel failed", tag,
                      path ? "texture" : "global", v);
            timg_poison(&got);
            CHECK_MSG(out_download(&o, &got), "%s %s v%d: wrote outside its region", tag, path ? "texture" : "global", v);
            double d = max_diff(&got, want, &differ);
            double tol = path && k->interp == TSK_BILINEAR ? tex_bound[type_index(k->t)] : 0.0;
            if (is_mip(v, path, k->interp)) tol = INFINITY;  /* another filter: test_mip_zoneplate */
            if (path && k->interp == TSK_BILINEAR) {
                int ti = type_index(k->t), b = (int)k->border;
                if (d > tex_worst[ti][b]) tex_worst[ti][b] = d;
                tex_values[ti][b] += (long long)want->w * want->h * want->c;
                tex_differ[ti][b] += differ;
                if (is_half(v, path, k->interp) && k->t == TS_U8 && k->c == 4) {
                    if (d > half_worst) half_worst = d;
                    half_values += (long long)want->w * want->h * want->c;
                    half_differ += differ;
                }
            }
            if (d > tol) timg_compare(&got, want, tol, tag);
            CHECK_MSG(d <= tol, "%s %s v%d: max |diff| %g > %g (%lld values differ)", tag,
                      path ? "texture" : "global", v, d, tol, differ);
        }
    dev_free(&ds);
    dev_free(&o.d);
    timg_free(&got);
}

static void check_case(const sample_case *k)
{
    ts_view whole = timg_whole(k->in_w, k->in_h, k->c, k->t);
    tsk_op op = make_sample(k->xf, k->in_w, k->in_h, k->max_up, k->interp, k->border, random_border_value(k->t));
    int ow = op.u.sample.out_w, oh = op.u.sample.out_h;
    ts_rect r = random_region(ow, oh, k->whole_out);
    ts_rect need = tsk_need(&op, k->in_w, k->in_h, r);
    ts_view want = timg_alloc(r.x0, r.y0, r.w, r.h, ow, oh, k->c, k->t);
    ts_view src = whole;
    ts_err err = { TS_OK, "" };
    char tag[300];
    snprintf(tag, sizeof tag,
             "%s c%d %s %s %s %dx%d -> %dx%d region %d,%d %dx%d src %d,%d %dx%d%s inv %g %g %g %g %g %g bv %g",
             type_name(k->t), k->c, interp_names[k->interp], border_names[k->border],
             xf_names[k->xf], k->in_w, k->in_h, ow, oh, r.x0, r.y0, r.w, r.h, need.x0, need.y0, need.w, need.h,
             k->cut ? " (cut)" : "", op.u.sample.inv[0], op.u.sample.inv[1], op.u.sample.inv[2], op.u.sample.inv[3],
             op.u.sample.inv[4], op.u.sample.inv[5], op.u.sample.border_value);
    timg_random(&whole);
    src.x0 = need.x0; src.y0 = need.y0; src.w = need.w; src.h = need.h;
    src.data = whole.data + (size_t)need.y0 * whole.pitch + (size_t)need.x0 * pixel_bytes(&whole);
    timg_poison(&want);
    CHECK_MSG(tsk_ref_apply(&op, &src, &want, &err) == TS_OK, "%s: reference: %s", tag, err.msg);
    run_all(&op, k, &whole, need, &want, tag);
    timg_free(&whole);
    timg_free(&want);
}

/* ------------------------------------------------------------ suites */

/* 1x1 and 31x33: every type x channels x filter x border, the transform
 * and the kind of source cycling through their choices. */
static void test_small(int every)
{
    static const int sizes[2][2] = { { 1, 1 }, { 31, 33 } };
    int n = 0;
    for (int s = 0; s < 2; s++)
        for (int ti = 0; ti < 3; ti++)
            for (int c = 1; c <= 4; c++)
                for (int interp = 0; interp < TSK_INTERP_COUNT; interp++)
                    for (int b = 0; b <= TS_BORDER_CONSTANT; b++, n++) {
                        sample_case k = { types[ti], c, (tsk_interp)interp, (ts_border)b, (xf_kind)(n % XF_KINDS),
                                          sizes[s][0], sizes[s][1], 3.0, 0, (n / XF_KINDS) % 3 == 2 };
                        if (n % every == 0) check_case(&k);
                    }
}

/* 1023x769: random combinations, every border and transform covered. */
static void test_medium(void)
{
    for (int n = 0; n < 20; n++) {
        sample_case k = { types[check_rand() % 3], 1 + (int)(check_rand() % 4), (tsk_interp)(check_rand() % 4),
                          (ts_border)(n % 5), (xf_kind)(n % XF_KINDS), 1023, 769, 1.5, 0, n % 4 == 3 };
        check_case(&k);
    }
}

/* Bilinear on every type x border with the transforms that leave whole
 * pixels least often: what the texture bound is measured on. */
static void test_bilinear_borders(void)
{
    static const xf_kind xfs[4] = { XF_ROTATE, XF_UP, XF_DOWN, XF_SHEAR };
    for (int ti = 0; ti < 3; ti++)
        for (int b = 0; b <= TS_BORDER_CONSTANT; b++)
            for (int i = 0; i < 2; i++) {
                sample_case k = { types[ti], i ? 4 : 1, TSK_BILINEAR, (ts_border)b, xfs[(b + 2 * i) % 4],
                                  257, 193, 2.0, 0, 0 };
                check_case(&k);
            }
}

/* 4097x2161: a few combinations; the CPU reference is the slow part. */
static void test_large(void)
{
    sample_case ks[6] = {
        { TS_U8, 4, TSK_BILINEAR, TS_BORDER_REPLICATE, XF_HALF, 4097, 2161, 1.3, 1, 0 },
        { TS_U16, 1, TSK_BILINEAR, TS_BORDER_REFLECT, XF_ROTATE, 4097, 2161, 1.0, 0, 0 },
        { TS_F32, 2, TSK_NEAREST, TS_BORDER_WRAP, XF_UP, 4097, 2161, 1.3, 0, 0 },
        { TS_U8, 3, TSK_BILINEAR, TS_BORDER_CONSTANT, XF_SHEAR, 4097, 2161, 1.0, 0, 1 },
        { TS_U8, 4, TSK_AREA, TS_BORDER_REPLICATE, XF_HALF, 4097, 2161, 1.0, 1, 0 },
        { TS_U16, 3, TSK_BICUBIC, TS_BORDER_CONSTANT, XF_DOWN, 4097, 2161, 1.0, 0, 0 },
    };
    for (int i = 0; i < 6; i++) check_case(&ks[i]);
}

/* The texture ring: more texture launches than its entries, on two
 * streams and two slots, all queued before one synchronisation; every
 * output must match the reference. */
enum { RING_RUNS = 24 };
static void test_texture_ring(void)
{
    const int w = 257, h = 129;
    cudaStream_t s[2];
    ts_view in = timg_whole(w, h, 4, TS_U8);
    tsk_op ops[RING_RUNS];
    dev_view din;
    dev_out out[RING_RUNS];
    ts_err err = { TS_OK, "" };
    timg_random(&in);
    CHECK(dev_own(&din, &in));
    for (int k = 0; k < 2; k++) CHECK(cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking) == cudaSuccess);
    for (int i = 0; i < RING_RUNS; i++) {
        ops[i] = make_sample((xf_kind)(XF_UP + i % 4), w, h, 1.5, TSK_BILINEAR, TS_BORDER_REPLICATE, 0.0f);
        ts_view like = timg_whole(ops[i].u.sample.out_w, ops[i].u.sample.out_h, 4, TS_U8);
        CHECK(out_alloc(&out[i], &like) && out_poison(&out[i]));
        timg_free(&like);
    }
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    for (int i = 0; i < RING_RUNS; i++) {
        tsk_launch l = { s[i % 2], 2, TS_PATH_TEXTURE, i % 2 };
        CHECK_MSG(tsk_gpu_apply(&ops[i], &din.v, &out[i].d.v, &l, &err) == TS_OK, "ring run %d: %s", i, err.msg);
    }
    CHECK(cudaDeviceSynchronize() == cudaSuccess);
    for (int i = 0; i < RING_RUNS; i++) {
        ts_view want = timg_whole(ops[i].u.sample.out_w, ops[i].u.sample.out_h, 4, TS_U8);
        ts_view got = timg_whole(want.w, want.h, 4, TS_U8);
        long long differ = 0;
        CHECK(tsk_ref_apply(&ops[i], &in, &want, &err) == TS_OK);
        CHECK_MSG(out_download(&out[i], &got), "ring run %d wrote outside its region", i);
        double d = max_diff(&got, &want, &differ);
        CHECK_MSG(d <= tex_bound[0], "ring run %d: max |diff| %g", i, d);
        timg_free(&want);
        timg_free(&got);
        dev_free(&out[i].d);
    }
    for (int k = 0; k < 2; k++) cudaStreamDestroy(s[k]);
    dev_free(&din);
    timg_free(&in);
}

/* A source short of tsk_need is refused, naming the op. */
static void test_refuses_short_source(void)
{
    tsk_op op = make_sample(XF_UP, 64, 64, 2.0, TSK_BILINEAR, TS_BORDER_REPLICATE, 0.0f);
    ts_rect r = { 8, 8, 16, 16 };
    ts_rect need = tsk_need(&op, 64, 64, r);
    ts_view src = timg_alloc(need.x0, need.y0, need.w - 1, need.h, 64, 64, 4, TS_U8);
    ts_view dst = timg_alloc(r.x0, r.y0, r.w, r.h, op.u.sample.out_w, op.u.sample.out_h, 4, TS_U8);
    dev_view ds;
    dev_out dd;
    ts_err err = { TS_OK, "" };
    timg_random(&src);
    CHECK(dev_own(&ds, &src) && out_alloc(&dd, &dst));
    for (int path = 0; path <= 1; path++) {
        tsk_launch l = { 0, 0, path ? TS_PATH_TEXTURE : TS_PATH_GLOBAL, 0 };
        CHECK_EQ_INT(tsk_gpu_apply(&op, &ds.v, &dd.d.v, &l, &err), TS_E_ARG);
        CHECK(strstr(err.msg, "sample") != NULL);
    }
    dev_free(&ds);
    dev_free(&dd.d);
    timg_free(&src);
    timg_free(&dst);
}

/* ------------------------------------------------------------ mipmaps */

/* A zone plate: cos(pi r^2 / n) rises in frequency from the centre to the
 * Nyquist limit at the edge, so any shrink has detail to alias. */
static ts_view zone_plate(int n, int c, ts_type t)
{
    ts_view v = timg_whole(n, n, c, t);
    double maxv = ts_type_max(t);
    for (int y = 0; y < n; y++)
        for (int x = 0; x < n; x++) {
            double dx = x + 0.5 - n / 2.0, dy = y + 0.5 - n / 2.0;
            double g = 0.5 + 0.5 * cos(M_PI * (dx * dx + dy * dy) / n);
            for (int ch = 0; ch < c; ch++) {
                double val = ch == 3 ? maxv : g * maxv;
                timg_set(&v, x, y, ch, (float)(t == TS_F32 ? val : floor(val + 0.5)));
            }
        }
    return v;
}

static double *view_doubles(const ts_view *v)
{
    double *d = (double *)malloc(sizeof(double) * (size_t)v->w * v->h * v->c);
    for (int y = 0; d && y < v->h; y++)
        for (int x = 0; x < v->w; x++)
            for (int ch = 0; ch < v->c; ch++) d[((size_t)y * v->w + x) * v->c + ch] = timg_get(v, x, y, ch);
    return d;
}

/* Largest |mip - area reference| at an exact 1/4 shrink (a power of two:
 * the footprint 4 is level 2 of the pyramid, whose texels the sample points
 * hit at their centres, so only the pyramid's two roundings differ from the
 * exact 4x4 mean), per type U8, U16, F32. Not yet measured: a prediction
 * (two roundings of half a step each, then the store's rounding). */
static const double mip_bound[3] = { 2.0, 2.0, 1e-5 };

/* v5 and v6 against the exact area kernel (v3 global) and against the
 * double-precision ideal, on a 1024 zone plate shrunk by 1/4 (whole image,
 * replicate: the mipmap versions take it) and by 0.3 (a fractional level of
 * detail, trilinear blending two levels). Prints every figure; asserts
 * mip_bound at 1/4 and, at both factors, that the mipmap is at least 3 dB
 * closer to the ideal than bilinear (its aliasing gone) - a prediction too. */
static void test_mip_zoneplate(void)
{
    static const double factors[2] = { 0.25, 0.3 };
    static const ts_type ts_[3] = { TS_U8, TS_U16, TS_F32 };
    const int n = 1024;
    for (int ti = 0; ti < 3; ti++)
        for (int fi = 0; fi < 2; fi++) {
            int c = ti == 0 ? 4 : 1, ow = (int)floor(n * factors[fi] + 0.5);
            ts_view in = zone_plate(n, c, ts_[ti]);
            double *src = view_doubles(&in), *ideal = src ? qref_downscale(src, n, n, c, ow, ow) : NULL;
            double maxv = ts_type_max(ts_[ti]), psnr[4] = { 0, 0, 0, 0 }, worst[4] = { 0, 0, 0, 0 };
            static const char *const names[4] = { "bilinear v3 global", "area v3 global", "mip v5 texture",
                                                  "mip v6 texture" };
            ts_view area = timg_whole(ow, ow, c, ts_[ti]), got = timg_whole(ow, ow, c, ts_[ti]);
            dev_view din;
            dev_out o;
            memset(&din, 0, sizeof din);
            memset(&o, 0, sizeof o);
            CHECK(ideal && dev_own(&din, &in) && out_alloc(&o, &got));
            for (int run = 0; run < 4 && ideal; run++) {
                tsk_op op;
                memset(&op, 0, sizeof op);
                op.kind = TSK_SAMPLE;
                op.u.sample.inv[0] = op.u.sample.inv[4] = (float)((double)n / ow);
                op.u.sample.out_w = op.u.sample.out_h = ow;
                op.u.sample.interp = run == 0 ? TSK_BILINEAR : TSK_AREA;
                op.u.sample.border = TS_BORDER_REPLICATE;
                tsk_launch l = { 0, run < 2 ? 3 : run + 3, run < 2 ? TS_PATH_GLOBAL : TS_PATH_TEXTURE, 0 };
                ts_err err = { TS_OK, "" };
                long long differ = 0;
                CHECK(out_poison(&o));
                CHECK_MSG(tsk_gpu_apply(&op, &din.v, &o.d.v, &l, &err) == TS_OK, "%s: %s", names[run], err.msg);
                CHECK(cudaDeviceSynchronize() == cudaSuccess);
                CHECK_MSG(out_download(&o, run == 1 ? &area : &got), "%s wrote outside its region", names[run]);
                double *g = view_doubles(run == 1 ? &area : &got);
                if (g) psnr[run] = qref_psnr(g, ideal, (size_t)ow * ow * c, maxv);
                free(g);
                if (run >= 2) worst[run] = max_diff(&got, &area, &differ);
            }
            printf("zone plate %d %s c%d x%.2f, PSNR vs ideal: bilinear %.2f, area %.2f, mip v5 %.2f (max |diff| vs "
                   "area %g), mip v6 %.2f (%g)\n", n, type_name(ts_[ti]), c, factors[fi], psnr[0], psnr[1], psnr[2],
                   worst[2], psnr[3], worst[3]);
            if (fi == 0) CHECK_MSG(worst[2] <= mip_bound[ti], "mip v5 vs area at 1/4: %g > %g", worst[2], mip_bound[ti]);
            CHECK_MSG(psnr[2] >= psnr[0] + 3 && psnr[3] >= psnr[0] + 3, "mip PSNR %.2f / %.2f vs bilinear %.2f",
                      psnr[2], psnr[3], psnr[0]);
            dev_free(&din);
            dev_free(&o.d);
            timg_free(&in);
            timg_free(&area);
            timg_free(&got);
            free(src);
            free(ideal);
        }
}

/* ------------------------------------------------------------ timing */

typedef struct timer { cudaEvent_t a, b; } timer;

static double time_copy(void *dst, const void *src, size_t bytes, int reps)
{
    timer t;
    float ms = 0;
    cudaEventCreate(&t.a);
    cudaEventCreate(&t.b);
    cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(t.a, 0);
    for (int i = 0; i < reps; i++) cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(t.b, 0);
    cudaEventSynchronize(t.b);
    cudaEventElapsedTime(&ms, t.a, t.b);
    cudaEventDestroy(t.a);
    cudaEventDestroy(t.b);
    return ms / reps;
}

static double time_memset(void *dst, size_t bytes, int reps)
{
    timer t;
    float ms = 0;
    cudaEventCreate(&t.a);
    cudaEventCreate(&t.b);
    cudaMemset(dst, 0x5A, bytes);
    cudaEventRecord(t.a, 0);
    for (int i = 0; i < reps; i++) cudaMemsetAsync(dst, i & 255, bytes, 0);
    cudaEventRecord(t.b, 0);
    cudaEventSynchronize(t.b);
    cudaEventElapsedTime(&ms, t.a, t.b);
    cudaEventDestroy(t.a);
    cudaEventDestroy(t.b);
    return ms / reps;
}

static double time_sample(const tsk_op *op, const ts_view *src, ts_view *dst, int version, ts_path path, int reps)
{
    tsk_launch l = { 0, version, path, 0 };
    ts_err err = { TS_OK, "" };
    timer t;
    float ms = 0;
    CHECK_MSG(tsk_gpu_apply(op, src, dst, &l, &err) == TS_OK, "%s", err.msg);
    cudaEventCreate(&t.a);
    cudaEventCreate(&t.b);
    cudaEventRecord(t.a, 0);
    for (int i = 0; i < reps; i++) tsk_gpu_apply(op, src, dst, &l, &err);
    cudaEventRecord(t.b, 0);
    cudaEventSynchronize(t.b);
    cudaEventElapsedTime(&ms, t.a, t.b);
    cudaEventDestroy(t.a);
    cudaEventDestroy(t.b);
    return ms / reps;
}

/* 7680x4320 RGBA8, 2x up and 0.5x down: each version and path, in ms, in
 * GB/s (input read once plus output written once) and as a fraction of a
 * device-to-device copy's GB/s (bytes read plus written). Outputs of the
 * versions of one path must agree bit for bit (but for the mipmap
 * versions and v8's half returns). */
static int timing(void)
{
    const int w = 7680, h = 4320, reps = 20;
    ts_view in = timg_whole(w, h, 4, TS_U8);
    dev_view din;
    size_t in_bytes = (size_t)w * h * 4;
    void *copy_dst = NULL;
    timg_random(&in);
    CHECK(dev_own(&din, &in));
    CHECK(cudaMalloc(&copy_dst, in_bytes) == cudaSuccess);
    double copy_ms = time_copy(copy_dst, din.v.data, in_bytes, reps);
    double copy_gbs = 2.0 * (double)in_bytes / (copy_ms * 1e6);
    printf("device copy %dx%d RGBA8: %.3f ms, %.0f GB/s (read + write)\n", w, h, copy_ms, copy_gbs);
    cudaFree(copy_dst);
    /* 2x up mostly writes: what writing its output alone costs. */
    void *big = NULL;
    size_t big_bytes = in_bytes * 4;
    if (cudaMalloc(&big, big_bytes) == cudaSuccess) {
        double ms = time_memset(big, big_bytes, reps);
        printf("device memset %zu MB (the 2x output): %.3f ms, %.0f GB/s (write only)\n", big_bytes >> 20, ms,
               (double)big_bytes / (ms * 1e6));
        cudaFree(big);
    }
    /* 2x up and 0.5x down with nearest and bilinear, then the shrinking
     * filters at 0.5x and 0.25x (quarter = 1). */
    static const struct { int up, quarter; tsk_interp interp; } lines[8] = {
        { 1, 0, TSK_BILINEAR }, { 1, 0, TSK_NEAREST }, { 0, 0, TSK_BILINEAR }, { 0, 0, TSK_NEAREST },
        { 0, 0, TSK_AREA }, { 0, 0, TSK_BICUBIC }, { 0, 1, TSK_AREA }, { 0, 1, TSK_BILINEAR },
    };
    for (int li = 0; li < 8; li++) {
        int up = lines[li].up;
        tsk_interp interp = lines[li].interp;
        {
            tsk_op op = make_sample(up ? XF_DOUBLE : XF_HALF, w, h, 2.0, interp, TS_BORDER_REPLICATE, 0);
            if (lines[li].quarter) {
                op.u.sample.inv[0] = op.u.sample.inv[4] = 4.0f;
                op.u.sample.out_w = w / 4;
                op.u.sample.out_h = h / 4;
            }
            ts_view like = timg_whole(op.u.sample.out_w, op.u.sample.out_h, 4, TS_U8);
            size_t out_bytes = row_bytes(&like) * (size_t)like.h;
            dev_out o;
            unsigned char *first = (unsigned char *)malloc(out_bytes), *now = (unsigned char *)malloc(out_bytes);
            CHECK(out_alloc(&o, &like) && first && now);
            for (int path = 0; path <= 1; path++)
                for (int v = 1; v <= tsk_version_count(TSK_SAMPLE); v++) {
                    double ms = time_sample(&op, &din.v, &o.d.v, v, path ? TS_PATH_TEXTURE : TS_PATH_GLOBAL, reps);
                    double gbs = (double)(in_bytes + out_bytes) / (ms * 1e6);
                    printf("sample %s %-8s %-7s v%d: %7.3f ms %6.0f GB/s %.2f of copy\n",
                           up ? "2x up   " : lines[li].quarter ? "0.25x dn" : "0.5x dn ", interp_names[interp],
                           path ? "texture" : "global", v, ms, gbs, gbs / copy_gbs);
                    CHECK(cudaMemcpy2D(v == 1 ? first : now, row_bytes(&like), o.d.v.data, o.d.v.pitch,
                                       row_bytes(&like), (size_t)like.h, cudaMemcpyDeviceToHost) == cudaSuccess);
                    if (v > 1 && !is_mip(v, path, interp) && !is_half(v, path, interp))
                        CHECK_MSG(!memcmp(first, now, out_bytes), "v%d differs from v1 (%s)", v,
                                  path ? "texture" : "global");
                }
            fflush(stdout);
            free(first);
            free(now);
            dev_free(&o.d);
            timg_free(&like);
        }
    }
    dev_free(&din);
    timg_free(&in);
    return check_exit();
}

int main(void)
{
    check_seed();
    if (!timg_gpu_ready()) return 77;
    int versions = tsk_version_count(TSK_SAMPLE);
    CHECK(versions >= 3);
    CHECK(tsk_default_version(TSK_SAMPLE) >= 1 && tsk_default_version(TSK_SAMPLE) <= versions);
    for (int v = 1; v <= versions; v++) CHECK(strncmp(tsk_version_name(TSK_SAMPLE, v), "v", 1) == 0);
    if (getenv("TS_SAMPLE_TIMING") && atoi(getenv("TS_SAMPLE_TIMING"))) return timing();
    int small_only = getenv("TS_SAMPLE_SMALL") && atoi(getenv("TS_SAMPLE_SMALL"));
    test_refuses_short_source();
    test_small(small_only ? 3 : 1);
    test_texture_ring();
    test_mip_zoneplate();
    if (!small_only) {
        test_bilinear_borders();
        test_medium();
        test_large();
    }
    for (int i = 0; i < 3; i++)
        for (int b = 0; b < 5; b++)
            fprintf(stderr, "texture bilinear vs reference, %s %-10s: max |diff| %g, %lld of %lld values differ"
                    " (bound %g)\n", type_name(types[i]), border_names[b], tex_worst[i][b], tex_differ[i][b],
                    tex_values[i][b], tex_bound[i]);
    fprintf(stderr, "texture bilinear vs reference, v8 (half returns) u8 RGBA: max |diff| %g, %lld of %lld values"
            " differ (bound %g)\n", half_worst, half_differ, half_values, tex_bound[0]);
    return check_exit();
}
#endif

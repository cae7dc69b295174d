/* plan.c - lower a parsed chain to kernel ops for one image, and walk
 * output tiles back through the ops to the regions they need. */
#include "plan.h"
#include "chain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef struct op_list {
    tsk_op *ops;
    int n, cap;
} op_list;

static tsk_op *push(op_list *l)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        tsk_op *ops = realloc(l->ops, sizeof *ops * (size_t)cap);
        if (!ops) return NULL;
        l->ops = ops;
        l->cap = cap;
    }
    tsk_op *op = &l->ops[l->n++];
    memset(op, 0, sizeof *op);
    return op;
}

/* ------------------------------------------------------------ matrices */

static const float LUMA[3] = { 0.299f, 0.587f, 0.114f };

static void mat_identity(float m[12])
{
    memset(m, 0, sizeof(float) * 12);
    m[0] = m[5] = m[10] = 1;
}

/* a = b * a (apply a first, then b); both 3x4 with the offset column. */
static void mat_then(float a[12], const float b[12])
{
    float r[12];
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            r[4 * i + j] = b[4 * i] * a[j] + b[4 * i + 1] * a[4 + j] + b[4 * i + 2] * a[8 + j];
        r[4 * i + 3] = b[4 * i] * a[3] + b[4 * i + 1] * a[7] + b[4 * i + 2] * a[11] + b[4 * i + 3];
    }
    memcpy(a, r, sizeof r);
}

static void matrix_of(const ts_user_op *op, float m[12])
{
    char buf[16];
    const char *preset = ts_op_enum(op, "preset", buf, sizeof buf);
    mat_identity(m);
    if (op->v[4].given) {
        for (int i = 0; i < 12; i++) m[i] = (float)op->v[4].list[i];
    } else if (strcmp(preset, "grey") == 0) {
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) m[4 * i + j] = LUMA[j];
    } else if (strcmp(preset, "sepia") == 0) {
        static const float sepia[12] = { 0.393f, 0.769f, 0.189f, 0, 0.349f, 0.686f, 0.168f, 0,
                                         0.272f, 0.534f, 0.131f, 0 };
        memcpy(m, sepia, sizeof sepia);
    } else if (strcmp(preset, "invert") == 0) {
        m[0] = m[5] = m[10] = -1;
        m[3] = m[7] = m[11] = 1;
    }
    float s = (float)ts_op_num(op, "saturation"), c = (float)ts_op_num(op, "contrast"),
          b = (float)ts_op_num(op, "brightness");
    if (s != 1) { /* s * I + (1 - s) * grey */
        float sat[12];
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++) sat[4 * i + j] = (1 - s) * LUMA[j] + (i == j ? s : 0);
            sat[4 * i + 3] = 0;
        }
        mat_then(m, sat);
    }
    if (c != 1 || b != 0) { /* (x - 0.5) * c + 0.5 + b, in full-scale units */
        float cb[12];
        mat_identity(cb);
        cb[0] = cb[5] = cb[10] = c;
        cb[3] = cb[7] = cb[11] = 0.5f * (1 - c) + b;
        mat_then(m, cb);
    }
}

/* For grey images the matrix sees (v, v, v) and the result is the luma of
 * its output: fold that into out = m[0] v + m[3] max. */
static void matrix_for_grey(float m[12])
{
    float gain = 0, off = 0;
    for (int i = 0; i < 3; i++) {
        gain += LUMA[i] * (m[4 * i] + m[4 * i + 1] + m[4 * i + 2]);
        off += LUMA[i] * m[4 * i + 3];
    }
    memset(m, 0, sizeof(float) * 12);
    m[0] = gain;
    m[3] = off;
}

/* ------------------------------------------------------------ orientations */

/* Where output (x, y) reads from, for EXIF code k, input w x h. */
static void orient_src(int k, int w, int h, int x, int y, int *sx, int *sy)
{
    switch (k) {
    case 2: *sx = w - 1 - x; *sy = y; break;
    case 3: *sx = w - 1 - x; *sy = h - 1 - y; break;
    case 4: *sx = x; *sy = h - 1 - y; break;
    case 5: *sx = y; *sy = x; break;
    case 6: *sx = y; *sy = h - 1 - x; break;
    case 7: *sx = w - 1 - y; *sy = h - 1 - x; break;
    case 8: *sx = w - 1 - y; *sy = x; break;
    default: *sx = x; *sy = y; break;
    }
}

/* The single code equal to applying a, then b (checked on a 2x3 image). */
static int orient_compose(int a, int b)
{
    const int w = 2, h = 3;
    int aw = a >= 5 ? h : w, ah = a >= 5 ? w : h;          /* size after a */
    int bw = b >= 5 ? ah : aw, bh = b >= 5 ? aw : ah;      /* size after b */
    for (int k = 1; k <= 8; k++) {
        int kw = k >= 5 ? h : w, kh = k >= 5 ? w : h, same = kw == bw && kh == bh;
        for (int y = 0; same && y < bh; y++)
            for (int x = 0; same && x < bw; x++) {
                int mx, my, sx, sy, kx, ky;
                orient_src(b, aw, ah, x, y, &mx, &my);
                orient_src(a, w, h, mx, my, &sx, &sy);
                orient_src(k, w, h, x, y, &kx, &ky);
                same = kx == sx && ky == sy;
            }
        if (same) return k;
    }
    return 1; /* unreachable: the eight codes form a group */
}

static int orient_code_of(const ts_user_op *op)
{
    const char *n = op->def->name;
    char buf[8];
    if (strcmp(n, "transpose") == 0) return 5;
    if (strcmp(n, "rot90") == 0) return 6;
    if (strcmp(n, "rot180") == 0) return 3;
    if (strcmp(n, "rot270") == 0) return 8;
    if (strcmp(n, "flip") == 0) return strcmp(ts_op_enum(op, "dir", buf, sizeof buf), "h") == 0 ? 2 : 4;
    if (strcmp(n, "orient") == 0) return (int)ts_op_num(op, "code");
    return 0;
}

/* ------------------------------------------------------------ convolutions */

static ts_border border_of(const ts_user_op *op)
{
    int i = ts_op_param_index(op->def, "border");
    return i < 0 ? TS_BORDER_REPLICATE : (ts_border)(int)op->v[i].num;
}

static int gauss_taps(double sigma, int radius, float *k)
{
    if (radius <= 0) radius = (int)ceil(3 * sigma);
    if (radius > (TSK_MAX_SEP_TAPS - 1) / 2) radius = (TSK_MAX_SEP_TAPS - 1) / 2;
    double sum = 0, w[TSK_MAX_SEP_TAPS];
    for (int i = -radius; i <= radius; i++) sum += w[i + radius] = exp(-0.5 * i * i / (sigma * sigma));
    for (int i = 0; i < 2 * radius + 1; i++) k[i] = (float)(w[i] / sum);
    return 2 * radius + 1;
}

static void lower_sep(const ts_user_op *op, tsk_op *k)
{
    const char *n = op->def->name;
    k->kind = TSK_CONV_SEP;
    k->u.sep.border = border_of(op);
    k->u.sep.center_w = 0;
    k->u.sep.conv_w = 1;
    if (strcmp(n, "box") == 0) {
        int r = (int)ts_op_num(op, "radius");
        k->u.sep.nx = k->u.sep.ny = 2 * r + 1;
        for (int i = 0; i < 2 * r + 1; i++) k->u.sep.kx[i] = k->u.sep.ky[i] = 1.0f / (float)(2 * r + 1);
        return;
    }
    int taps = gauss_taps(ts_op_num(op, "sigma"), (int)ts_op_num(op, "radius"), k->u.sep.kx);
    k->u.sep.nx = k->u.sep.ny = taps;
    memcpy(k->u.sep.ky, k->u.sep.kx, sizeof(float) * (size_t)taps);
    if (strcmp(n, "sharpen") == 0) {
        float a = (float)ts_op_num(op, "amount");
        k->u.sep.center_w = 1 + a;
        k->u.sep.conv_w = -a;
        k->alpha_passthrough = 1;
    }
}

static void lower_2d(const ts_user_op *op, tsk_op *k)
{
    const char *n = op->def->name;
    char buf[8];
    k->kind = TSK_CONV_2D;
    k->u.conv2d.border = border_of(op);
    k->alpha_passthrough = 1;
    if (strcmp(n, "sobel") == 0) {
        static const float sx[9] = { -1, 0, 1, -2, 0, 2, -1, 0, 1 };
        static const float sy[9] = { -1, -2, -1, 0, 0, 0, 1, 2, 1 };
        float s = (float)ts_op_num(op, "scale");
        const char *dir = ts_op_enum(op, "dir", buf, sizeof buf);
        k->u.conv2d.kw = k->u.conv2d.kh = 3;
        for (int i = 0; i < 9; i++) {
            k->u.conv2d.k[i] = s * (dir[0] == 'y' ? sy[i] : sx[i]);
            k->u.conv2d.k2[i] = s * sy[i];
        }
        k->u.conv2d.mode = dir[0] == 'm' ? TSK_CONV_MAG : TSK_CONV_ABS;
        return;
    }
    if (strcmp(n, "emboss") == 0) {
        float s = (float)ts_op_num(op, "strength");
        const float e[9] = { -2 * s, -s, 0, -s, 1, s, 0, s, 2 * s };
        k->u.conv2d.kw = k->u.conv2d.kh = 3;
        memcpy(k->u.conv2d.k, e, sizeof e);
        k->u.conv2d.mode = TSK_CONV_LINEAR;
        return;
    }
    /* conv */
    int nt = op->v[0].n, kw = (int)ts_op_num(op, "w"), kh = (int)ts_op_num(op, "h");
    if (kw == 0 && kh == 0) kw = kh = (int)lround(sqrt((double)nt));
    else if (kw == 0) kw = nt / kh;
    else if (kh == 0) kh = nt / kw;
    double sum = 0, div = ts_op_num(op, "divisor");
    int negative = 0;
    for (int i = 0; i < nt; i++) {
        sum += op->v[0].list[i];
        negative |= op->v[0].list[i] < 0;
    }
    if (div == 0) div = fabs(sum) > 1e-12 ? sum : 1;
    k->u.conv2d.kw = kw;
    k->u.conv2d.kh = kh;
    for (int i = 0; i < nt; i++) k->u.conv2d.k[i] = (float)(op->v[0].list[i] / div);
    k->u.conv2d.bias = (float)ts_op_num(op, "bias");
    k->u.conv2d.mode = TSK_CONV_LINEAR;
    k->alpha_passthrough = negative; /* all taps >= 0: a smoothing filter, alpha filtered too */
}

/* ------------------------------------------------------------ sampling */

/* Set the inverse map from a forward map out = A in + t (pixel-continuous
 * coordinates). Returns 0 if A is singular. */
static int set_inverse(tsk_op *k, double a, double b, double c, double d, double e, double f)
{
    double det = a * e - b * d;
    if (fabs(det) < 1e-12) return 0;
    double ia = e / det, ib = -b / det, id = -d / det, ie = a / det;
    k->u.sample.inv[0] = (float)ia;
    k->u.sample.inv[1] = (float)ib;
    k->u.sample.inv[2] = (float)(-(ia * c + ib * f));
    k->u.sample.inv[3] = (float)id;
    k->u.sample.inv[4] = (float)ie;
    k->u.sample.inv[5] = (float)(-(id * c + ie * f));
    return 1;
}

/* interp= as a kernel interpolation; auto looks at the footprint: area
 * where the map shrinks either axis, bilinear where it does not. */
static tsk_interp interp_of(const ts_user_op *op, const tsk_op *k)
{
    char buf[16];
    const char *name = ts_op_enum(op, "interp", buf, sizeof buf);
    float kx, ky;
    if (strcmp(name, "nearest") == 0) return TSK_NEAREST;
    if (strcmp(name, "bilinear") == 0) return TSK_BILINEAR;
    if (strcmp(name, "area") == 0) return TSK_AREA;
    if (strcmp(name, "bicubic") == 0) return TSK_BICUBIC;
    tsk_sample_footprint(k, &kx, &ky);
    return kx > 1.0f || ky > 1.0f ? TSK_AREA : TSK_BILINEAR;
}

static ts_status lower_sample(const ts_user_op *op, int w, int h, tsk_op *k, ts_err *err)
{
    const char *n = op->def->name;
    char buf[16];
    k->kind = TSK_SAMPLE;
    k->u.sample.border = border_of(op);
    double a = 1, b = 0, c = 0, d = 0, e = 1, f = 0;
    int ow = w, oh = h;
    if (strcmp(n, "resize") == 0 || strcmp(n, "scale") == 0) {
        if (n[0] == 'r') {
            double rw = ts_op_num(op, "w"), rh = ts_op_num(op, "h");
            ow = rw > 0 ? (int)rw : (int)lround((double)w * rh / h);
            oh = rh > 0 ? (int)rh : (int)lround((double)h * rw / w);
        } else {
            double fx = ts_op_num(op, "sx"), fy = ts_op_num(op, "sy"), ff = ts_op_num(op, "f");
            if (fx == 0) fx = ff;
            if (fy == 0) fy = ff;
            ow = (int)lround(w * fx);
            oh = (int)lround(h * fy);
        }
        if (ow < 1) ow = 1;
        if (oh < 1) oh = 1;
        a = (double)ow / w;
        e = (double)oh / h;
    } else if (strcmp(n, "rotate") == 0) {
        double t = ts_op_num(op, "deg") * M_PI / 180.0, ct = cos(t), st = sin(t);
        if (!(ts_op_num(op, "crop") > 0)) {
            ow = (int)ceil(fabs(w * ct) + fabs(h * st) - 1e-6);
            oh = (int)ceil(fabs(w * st) + fabs(h * ct) - 1e-6);
        }
        /* clockwise on screen (y down): x' = ct x - st y, y' = st x + ct y,
         * about the centres of input and output */
        a = ct; b = -st; d = st; e = ct;
        c = ow / 2.0 - (ct * w / 2.0 - st * h / 2.0);
        f = oh / 2.0 - (st * w / 2.0 + ct * h / 2.0);
        k->u.sample.border = TS_BORDER_CONSTANT;
        k->u.sample.border_value = (float)ts_op_num(op, "fill");
    } else { /* affine */
        a = ts_op_num(op, "a"); b = ts_op_num(op, "b"); c = ts_op_num(op, "c");
        d = ts_op_num(op, "d"); e = ts_op_num(op, "e"); f = ts_op_num(op, "f");
        if (ts_op_num(op, "w") > 0) ow = (int)ts_op_num(op, "w");
        if (ts_op_num(op, "h") > 0) oh = (int)ts_op_num(op, "h");
        k->u.sample.border = TS_BORDER_CONSTANT;
    }
    if (!set_inverse(k, a, b, c, d, e, f))
        return ts_err_set(err, TS_E_ARG, "%s: the transform is singular (not invertible)", n);
    if ((uint64_t)ow * (uint64_t)oh > ((uint64_t)1 << 32))
        return ts_err_set(err, TS_E_LIMIT, "%s: output %d x %d is too large", n, ow, oh);
    k->u.sample.out_w = ow;
    k->u.sample.out_h = oh;
    k->u.sample.interp = interp_of(op, k);
    (void)buf;
    return TS_OK;
}

/* ------------------------------------------------------------ lowering */

static int is_smoothing(const tsk_op *k)
{
    return (k->kind == TSK_CONV_SEP || k->kind == TSK_CONV_2D || k->kind == TSK_SAMPLE) &&
           !k->alpha_passthrough;
}

/* Scale the constant border values from full-scale units to channel units. */
static void scale_border_value(tsk_op *k, ts_type t)
{
    float maxv = (float)ts_type_max(t);
    if (k->kind == TSK_SAMPLE) k->u.sample.border_value *= maxv;
}

ts_status ts_plan_make(const ts_chain *chain, int w, int h, int c, ts_type type,
                       ts_plan *plan, ts_err *err)
{
    op_list raw = { 0 }, out = { 0 };
    int cw = w, ch = h, has_alpha = c == 2 || c == 4;
    ts_status st = TS_OK;
    memset(plan, 0, sizeof *plan);

    /* 1: user ops -> kernel ops, folding adjacent matrices and orientations */
    for (int i = 0; i < chain->n && st == TS_OK; i++) {
        const ts_user_op *op = &chain->ops[i];
        const char *n = op->def->name;
        tsk_op *prev = raw.n ? &raw.ops[raw.n - 1] : NULL;
        int code = orient_code_of(op);
        if (code) {
            if (prev && prev->kind == TSK_ORIENT) prev->u.orient.code = orient_compose(prev->u.orient.code, code);
            else if (!(prev = push(&raw))) st = TS_E_NOMEM;
            else { prev->kind = TSK_ORIENT; prev->u.orient.code = code; }
            if (code >= 5) { int t = cw; cw = ch; ch = t; }  /* axes swap */
            continue;
        }
        if (strcmp(n, "matrix") == 0) {
            float m[12];
            matrix_of(op, m);
            if (prev && prev->kind == TSK_MATRIX) mat_then(prev->u.matrix.m, m);
            else if (!(prev = push(&raw))) st = TS_E_NOMEM;
            else { prev->kind = TSK_MATRIX; memcpy(prev->u.matrix.m, m, sizeof m); }
            continue;
        }
        tsk_op *k = push(&raw);
        if (!k) { st = TS_E_NOMEM; break; }
        if (!strcmp(n, "gauss") || !strcmp(n, "box") || !strcmp(n, "sharpen")) lower_sep(op, k);
        else if (!strcmp(n, "sobel") || !strcmp(n, "emboss") || !strcmp(n, "conv")) lower_2d(op, k);
        else st = lower_sample(op, cw, ch, k, err);
        if (st != TS_OK) break;
        scale_border_value(k, type);
        tsk_out_size(k, cw, ch, &cw, &ch);
    }

    /* 2: drop identities, fold grey matrices, wrap smoothing runs in premultiply */
    for (int i = 0; i < raw.n && st == TS_OK; i++) {
        tsk_op *k = &raw.ops[i];
        if (k->kind == TSK_ORIENT && k->u.orient.code == 1) continue;
        if (k->kind == TSK_MATRIX && c <= 2) matrix_for_grey(k->u.matrix.m);
        if (!has_alpha) k->alpha_passthrough = 0;
        int smooth = has_alpha && is_smoothing(k);
        int prev_smooth = i > 0 && has_alpha && is_smoothing(&raw.ops[i - 1]);
        tsk_op *o;
        if (smooth && !prev_smooth) {
            if (!(o = push(&out))) { st = TS_E_NOMEM; break; }
            o->kind = TSK_PREMUL;
        }
        if (!(o = push(&out))) { st = TS_E_NOMEM; break; }
        *o = *k;
        int next_smooth = i + 1 < raw.n && is_smoothing(&raw.ops[i + 1]);
        if (smooth && !next_smooth) {
            if (!(o = push(&out))) { st = TS_E_NOMEM; break; }
            o->kind = TSK_UNPREMUL;
        }
    }
    free(raw.ops);
    if (st == TS_E_NOMEM) ts_err_set(err, st, "out of memory planning the op chain");
    if (st != TS_OK) { free(out.ops); return st; }

    plan->n = out.n;
    plan->ops = out.ops;
    plan->c = c;
    plan->type = type;
    plan->w = malloc(sizeof(int) * (size_t)(out.n + 1));
    plan->h = malloc(sizeof(int) * (size_t)(out.n + 1));
    if (!plan->w || !plan->h) {
        ts_plan_free(plan);
        return ts_err_set(err, TS_E_NOMEM, "out of memory planning the op chain");
    }
    plan->w[0] = w;
    plan->h[0] = h;
    for (int i = 0; i < out.n; i++) tsk_out_size(&out.ops[i], plan->w[i], plan->h[i], &plan->w[i + 1], &plan->h[i + 1]);
    return TS_OK;
}

void ts_plan_free(ts_plan *plan)
{
    free(plan->ops);
    free(plan->w);
    free(plan->h);
    memset(plan, 0, sizeof *plan);
}

void ts_plan_regions(const ts_plan *plan, ts_rect out, ts_rect *r)
{
    r[plan->n] = out;
    for (int k = plan->n - 1; k >= 0; k--) r[k] = tsk_need(&plan->ops[k], plan->w[k], plan->h[k], r[k + 1]);
}

void ts_plan_max_regions(const ts_plan *plan, int tile_w, int tile_h,
                         size_t *max_in_px, size_t *max_stage_px)
{
    int ow = plan->w[plan->n], oh = plan->h[plan->n];
    if (tile_w <= 0 || tile_w > ow) tile_w = ow;
    if (tile_h <= 0 || tile_h > oh) tile_h = oh;
    ts_rect r[64], *rr = plan->n + 1 <= 64 ? r : malloc(sizeof(ts_rect) * (size_t)(plan->n + 1));
    size_t in_px = 0, stage_px = 0;
    for (int y = 0; rr && y < oh; y += tile_h)
        for (int x = 0; x < ow; x += tile_w) {
            ts_rect t = { x, y, x + tile_w <= ow ? tile_w : ow - x, y + tile_h <= oh ? tile_h : oh - y };
            ts_plan_regions(plan, t, rr);
            size_t p0 = (size_t)rr[0].w * (size_t)rr[0].h;
            if (p0 > in_px) in_px = p0;
            for (int k = 0; k <= plan->n; k++) {
                size_t pk = (size_t)rr[k].w * (size_t)rr[k].h;
                if (pk > stage_px) stage_px = pk;
            }
        }
    if (rr != r) free(rr);
    *max_in_px = in_px;
    *max_stage_px = stage_px;
}

/* ref_internal.h - (internal) what the plain-C reference ops share: the
 * checks tsk_ref_apply makes (ref.c, also run by the fast CPU ops), typed
 * pixel loads and stores, reads in global coordinates that notice when src
 * does not hold the pixel, and border taps. The rest is inline: the
 * families (kernels/<family>/ref_*.c) depend on this header, not on ref.c;
 * their entry points are in kind_parts.h. */
#ifndef TSK_REF_INTERNAL_H
#define TSK_REF_INTERNAL_H

#include "tsk.h"
#include "ts_pixel.h"

#include <stdint.h>

/* The checks tsk_ref_apply makes before it runs an op: the parameters,
 * both views, and that they are two stages of op. (The fast CPU ops in
 * cpu.c make the same checks.) */
ts_status tsk_ref_check(const tsk_op *op, const ts_view *src, const ts_view *dst, ts_err *err);

/* The colour matrix on one pixel of c channels, in float (ref_point.c):
 * MATRIX's maths, and ORIENT's when it carries a matrix. */
void tsk_ref_matrix_pixel(const float *m, int c, float maxv, const float *in, float *out);

/* The taps of one axis of a filtered sample (AREA, BICUBIC): pixels i0 ..
 * i0 + n - 1 with their weights and the weights' sum (ref_sample.c). */
enum { REF_AXIS_TAPS_MAX = 4 * (int)TSK_MAX_FOOTPRINT };
typedef struct ref_axis_taps {
    int i0, n;
    float w[REF_AXIS_TAPS_MAX];
    float sum;
} ref_axis_taps;

/* tsk.h's rule for the taps of sample coordinate s along an axis of
 * footprint k, the weights summed in order. */
void ref_axis_weights(tsk_interp interp, float k, float s, ref_axis_taps *t);

/* The largest channel value of a type, as the numeric rule uses it. */
static inline float ref_type_max(ts_type t)
{
    return t == TS_U8 ? 255.0f : t == TS_U16 ? 65535.0f : 1.0f;
}

/* Channel ch of the pixel at local (lx, ly) of v. */
static inline float ref_load(const ts_view *v, int lx, int ly, int ch)
{
    const unsigned char *row = v->data + (size_t)ly * v->pitch;
    size_t i = (size_t)lx * (size_t)v->c + (size_t)ch;
    switch (v->type) {
    case TS_U8: return (float)row[i];
    case TS_U16: return (float)((const uint16_t *)row)[i];
    default: return ((const float *)row)[i];
    }
}

/* Store a computed value: integers round half up and saturate, F32 as is. */
static inline void ref_store(ts_view *v, int lx, int ly, int ch, float val)
{
    unsigned char *row = v->data + (size_t)ly * v->pitch;
    size_t i = (size_t)lx * (size_t)v->c + (size_t)ch;
    switch (v->type) {
    case TS_U8: row[i] = (unsigned char)ts_round_sat(val, 255.0f); break;
    case TS_U16: ((uint16_t *)row)[i] = (uint16_t)ts_round_sat(val, 65535.0f); break;
    default: ((float *)row)[i] = val; break;
    }
}

/* Reads from src in global coordinates. A pixel that src does not hold is
 * a caller error (src is smaller than tsk_need): it reads as 0 and is
 * remembered, and the op then fails with TS_E_ARG instead of reading
 * memory it does not own. */
typedef struct ref_reader {
    const ts_view *v;
    int missing;        /* set once a read fell outside v */
    int miss_x, miss_y; /* the first such pixel, global coordinates */
} ref_reader;

static inline ref_reader ref_reader_of(const ts_view *v)
{
    ref_reader r = { v, 0, 0, 0 };
    return r;
}

/* All c channels of image pixel (gx, gy) into px. */
static inline void ref_read(ref_reader *r, int gx, int gy, float *px)
{
    const ts_view *v = r->v;
    int lx = gx - v->x0, ly = gy - v->y0;
    if (lx < 0 || ly < 0 || lx >= v->w || ly >= v->h) {
        if (!r->missing) { r->missing = 1; r->miss_x = gx; r->miss_y = gy; }
        for (int ch = 0; ch < v->c; ch++) px[ch] = 0.0f;
        return;
    }
    for (int ch = 0; ch < v->c; ch++) px[ch] = ref_load(v, lx, ly, ch);
}

/* The tap at (gx, gy), which may lie outside the image, through the border
 * mode: each axis maps on its own; -1 on either means border_value. */
static inline void ref_read_border(ref_reader *r, int gx, int gy, ts_border border,
                                   float border_value, float *px)
{
    int bx = ts_border_map(gx, r->v->full_w, (int)border);
    int by = ts_border_map(gy, r->v->full_h, (int)border);
    if (bx < 0 || by < 0) {
        for (int ch = 0; ch < r->v->c; ch++) px[ch] = border_value;
        return;
    }
    ref_read(r, bx, by, px);
}

/* TS_OK, or TS_E_ARG naming the first pixel src lacked (what names the op). */
static inline ts_status tsk_ref_reader_status(const ref_reader *r, const char *what, ts_err *err)
{
    const ts_view *v = r->v;
    if (!r->missing) return TS_OK;
    return ts_err_set(err, TS_E_ARG,
                      "reference %s: source region %d,%d %dx%d lacks pixel (%d, %d) it needs",
                      what, v->x0, v->y0, v->w, v->h, r->miss_x, r->miss_y);
}

#endif

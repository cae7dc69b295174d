/* ref_point.c - the per-pixel reference ops: colour matrix, premultiply
 * and unpremultiply. Each output pixel depends on the same input pixel
 * only, so src holds the dst region itself. */
#include "kind_parts.h"
#include "ref_internal.h"

/* out[i] = ((m[4i]*R + m[4i+1]*G) + m[4i+2]*B) + m[4i+3]*max; grey uses
 * row 0 as m[0]*v + m[3]*max. Alpha (the last of 2 or 4) is copied. */
void tsk_ref_matrix_pixel(const float *m, int c, float maxv, const float *in, float *out)
{
    if (c >= 3) {
        for (int i = 0; i < 3; i++)
            out[i] = m[4 * i] * in[0] + m[4 * i + 1] * in[1] + m[4 * i + 2] * in[2] + m[4 * i + 3] * maxv;
    } else {
        out[0] = m[0] * in[0] + m[3] * maxv;
    }
    if (c == 2 || c == 4) out[c - 1] = in[c - 1];
}

/* colour * alpha / max. Without alpha (c = 1 or 3) a copy. */
static void premul_pixel(int c, float maxv, const float *in, float *out)
{
    int has_alpha = c == 2 || c == 4;
    int colours = has_alpha ? c - 1 : c;
    for (int ch = 0; ch < colours; ch++)
        out[ch] = has_alpha ? in[ch] * in[c - 1] / maxv : in[ch];
    if (has_alpha) out[c - 1] = in[c - 1];
}

/* colour * max / alpha, and 0 where alpha is 0 (nothing to recover).
 * Without alpha a copy. */
static void unpremul_pixel(int c, float maxv, const float *in, float *out)
{
    int has_alpha = c == 2 || c == 4;
    int colours = has_alpha ? c - 1 : c;
    for (int ch = 0; ch < colours; ch++) {
        if (!has_alpha) out[ch] = in[ch];
        else out[ch] = in[c - 1] == 0.0f ? 0.0f : in[ch] * maxv / in[c - 1];
    }
    if (has_alpha) out[c - 1] = in[c - 1];
}

ts_status tsk_ref_point(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ref_reader rd = ref_reader_of(src);
    float maxv = ref_type_max(dst->type);
    float in[4], out[4];
    for (int ly = 0; ly < dst->h; ly++)
        for (int lx = 0; lx < dst->w; lx++) {
            ref_read(&rd, dst->x0 + lx, dst->y0 + ly, in);
            if (op->kind == TSK_MATRIX) tsk_ref_matrix_pixel(op->u.matrix.m, dst->c, maxv, in, out);
            else if (op->kind == TSK_PREMUL) premul_pixel(dst->c, maxv, in, out);
            else unpremul_pixel(dst->c, maxv, in, out);
            for (int ch = 0; ch < dst->c; ch++) ref_store(dst, lx, ly, ch, out[ch]);
        }
    return tsk_ref_reader_status(&rd, op->kind == TSK_MATRIX ? "matrix"
                                      : op->kind == TSK_PREMUL ? "premultiply" : "unpremultiply", err);
}

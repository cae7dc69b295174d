/* ref_orient.c - the reference for the eight EXIF orientations: every
 * output pixel copies the input pixel ts_orient_src() names, through the
 * op's colour matrix when it carries one. */
#include "kind_parts.h"
#include "ref_internal.h"
#include "ts_orient.h"

ts_status tsk_ref_orient(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ref_reader rd = ref_reader_of(src);
    float maxv = ref_type_max(dst->type);
    float px[4], out[4];
    for (int ly = 0; ly < dst->h; ly++)
        for (int lx = 0; lx < dst->w; lx++) {
            int sx = 0, sy = 0;  /* the code is 1..8 (checked), so always set */
            ts_orient_src(op->u.orient.code, dst->x0 + lx, dst->y0 + ly, src->full_w, src->full_h, &sx, &sy);
            ref_read(&rd, sx, sy, px);
            const float *v = px;
            if (op->u.orient.matrix) {
                tsk_ref_matrix_pixel(op->u.orient.m, dst->c, maxv, px, out);
                v = out;
            }
            for (int ch = 0; ch < dst->c; ch++) ref_store(dst, lx, ly, ch, v[ch]);
        }
    return tsk_ref_reader_status(&rd, "orient", err);
}

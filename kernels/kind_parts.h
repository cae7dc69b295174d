/* kind_parts.h - (internal) the per-kind pieces the kind table (kinds.c)
 * points to: output sizes and needs (geometry.c), parameter checks (ref.c),
 * which sampling ops have a fast CPU version (cpu.c), and each op family's
 * reference and fast CPU entry points (kernels/<family>/ref_*.c and
 * cpu_*.c), which tsk_ref_apply and tsk_cpu_apply dispatch to. */
#ifndef TSK_KIND_PARTS_H
#define TSK_KIND_PARTS_H

#include "tsk.h"

void tsk_size_same(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h);
void tsk_size_orient(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h);
void tsk_size_sep(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h);
void tsk_size_sample(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h);

ts_rect tsk_need_point(const tsk_op *op, int in_w, int in_h, ts_rect out);
ts_rect tsk_need_orient(const tsk_op *op, int in_w, int in_h, ts_rect out);
ts_rect tsk_need_sep(const tsk_op *op, int in_w, int in_h, ts_rect out);
ts_rect tsk_need_2d(const tsk_op *op, int in_w, int in_h, ts_rect out);
ts_rect tsk_need_sample(const tsk_op *op, int in_w, int in_h, ts_rect out);

ts_status tsk_check_point(const tsk_op *op, const char *what, ts_err *err);
ts_status tsk_check_orient(const tsk_op *op, const char *what, ts_err *err);
ts_status tsk_check_sep(const tsk_op *op, const char *what, ts_err *err);
ts_status tsk_check_2d(const tsk_op *op, const char *what, ts_err *err);
ts_status tsk_check_sample(const tsk_op *op, const char *what, ts_err *err);

int tsk_cpu_sample_has_fast(const tsk_op *op);

/* A CONV_SEP carrying an orientation (tsk_split_then): *done = 1, and the
 * two steps run by apply through a temporary of the region between them
 * (ref.c; the reference and the fast CPU ops share it). Other ops: *done =
 * 0, nothing run. */
typedef ts_status (*tsk_apply_fn)(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_apply_split(tsk_apply_fn apply, const tsk_op *op, const ts_view *src, ts_view *dst, int *done,
                          ts_err *err);

/* The reference families (ref_point.c, ref_orient.c, ref_conv.c,
 * ref_sample.c); tsk_ref_apply has checked the views and parameters. */
ts_status tsk_ref_point(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_ref_orient(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_ref_conv_sep(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_ref_conv2d(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_ref_sample(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);

/* The fast CPU families (cpu_point.c, cpu_orient.c, cpu_conv.c,
 * cpu_sample.c); views checked, src known to hold what dst needs. They
 * return TS_E_NOMEM at worst. */
ts_status tsk_cpu_point(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_cpu_orient(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_cpu_conv_sep(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_cpu_conv2d(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_cpu_sample(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);

#endif

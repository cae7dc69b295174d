/* ref_families.h - (internal) the reference's entry points below
 * tsk_ref_apply: the checks it makes (ref.c, also run by the fast CPU ops)
 * and one function per op family (ref_*.c), which ref.c dispatches to. */
#ifndef TSK_REF_FAMILIES_H
#define TSK_REF_FAMILIES_H

#include "tsk.h"

/* The checks tsk_ref_apply makes before it runs an op: the parameters,
 * both views, and that they are two stages of op. (The fast CPU ops in
 * cpu_*.c make the same checks.) */
ts_status tsk_ref_check(const tsk_op *op, const ts_view *src, const ts_view *dst, ts_err *err);

/* The op families; tsk_ref_apply has checked the views and parameters. */
ts_status tsk_ref_point(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_ref_orient(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_ref_conv_sep(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_ref_conv2d(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
ts_status tsk_ref_sample(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);

#endif

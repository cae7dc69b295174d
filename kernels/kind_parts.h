/* kind_parts.h - (internal) the per-kind pieces the kind table (kinds.c)
 * points to: output sizes and needs (geometry.c), parameter checks (ref.c)
 * and which sampling ops have a fast CPU version (cpu.c). The reference and
 * fast CPU families are declared in ref_families.h and cpu_internal.h. */
#ifndef TSK_KIND_PARTS_H
#define TSK_KIND_PARTS_H

#include "tsk.h"

void tsk_size_same(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h);
void tsk_size_orient(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h);
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

#endif

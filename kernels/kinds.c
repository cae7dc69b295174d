/* kinds.c - the kind table (tsk.h): one row per kernel kind. Adding a kind
 * is a row here, a row in gpu.cu's family table, and the kind's own files
 * (its family folder, kernels/<family>/). */
#include "kind_parts.h"

#include <string.h>

static const tsk_kind_info kinds[TSK_KIND_COUNT] = {
    [TSK_MATRIX] = { "matrix", "matrix", 0, tsk_size_same, tsk_need_point, tsk_check_point,
                     tsk_ref_point, tsk_cpu_point, NULL },
    [TSK_PREMUL] = { "premultiply", "premul", 0, tsk_size_same, tsk_need_point, tsk_check_point,
                     tsk_ref_point, tsk_cpu_point, NULL },
    [TSK_UNPREMUL] = { "unpremultiply", "unpremul", 0, tsk_size_same, tsk_need_point, tsk_check_point,
                       tsk_ref_point, tsk_cpu_point, NULL },
    [TSK_ORIENT] = { "orient", "orient", 0, tsk_size_orient, tsk_need_orient, tsk_check_orient,
                     tsk_ref_orient, tsk_cpu_orient, NULL },
    [TSK_CONV_SEP] = { "separable convolution", "conv_sep", 0, tsk_size_sep, tsk_need_sep, tsk_check_sep,
                       tsk_ref_conv_sep, tsk_cpu_conv_sep, NULL },
    [TSK_CONV_2D] = { "2-D convolution", "conv2d", 0, tsk_size_same, tsk_need_2d, tsk_check_2d,
                      tsk_ref_conv2d, tsk_cpu_conv2d, NULL },
    [TSK_SAMPLE] = { "sample", "sample", 1, tsk_size_sample, tsk_need_sample, tsk_check_sample,
                     tsk_ref_sample, tsk_cpu_sample, tsk_cpu_sample_has_fast },
};

const tsk_kind_info *tsk_kind_info_of(tsk_kind kind)
{
    if ((int)kind < 0 || kind >= TSK_KIND_COUNT) return NULL;
    return &kinds[kind];
}

int tsk_rows_to_rows(const tsk_op *op)
{
    return op->kind == TSK_MATRIX || op->kind == TSK_PREMUL || op->kind == TSK_UNPREMUL ||
           (op->kind == TSK_ORIENT && op->u.orient.code >= 1 && op->u.orient.code <= 4);
}

tsk_op tsk_orient_matrix_op(const tsk_op *orient)
{
    tsk_op mat;
    memset(&mat, 0, sizeof mat);
    mat.kind = TSK_MATRIX;
    memcpy(mat.u.matrix.m, orient->u.orient.m, sizeof mat.u.matrix.m);
    return mat;
}

int tsk_split_then(const tsk_op *op, tsk_op *conv, tsk_op *orient)
{
    if (op->kind != TSK_CONV_SEP || op->u.sep.then.code == 0) return 0;
    *conv = *op;
    memset(&conv->u.sep.then, 0, sizeof conv->u.sep.then);
    memset(orient, 0, sizeof *orient);
    orient->kind = TSK_ORIENT;
    orient->u.orient = op->u.sep.then;
    return 1;
}

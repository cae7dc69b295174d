/* ops.h - (internal) the op registry: one row per user op in ts_ops[]
 * (ops.c), naming its parameters, and the functions that validate and
 * lower it (ops_lower.c).
 *
 * Parameters are read by index, never by name: each op has an enum of its
 * parameters in the order of its row, and ops.c fills the row with
 * designated initialisers ([P_GAUSS_SIGMA] = ...), so a misspelt name does
 * not compile and a row cannot disagree with its enum. Only the parser
 * (chain.c) looks names up, to read the chain text. */
#ifndef TS_OPS_H
#define TS_OPS_H

#include "chain.h"
#include "tsk.h"

/* The user ops, in the order `tilestream ops` lists them. */
typedef enum ts_op_id {
    TS_OP_MATRIX, TS_OP_TRANSPOSE, TS_OP_ROT90, TS_OP_ROT180, TS_OP_ROT270, TS_OP_FLIP,
    TS_OP_ORIENT, TS_OP_GAUSS, TS_OP_BOX, TS_OP_SHARPEN, TS_OP_SOBEL, TS_OP_EMBOSS,
    TS_OP_CONV, TS_OP_RESIZE, TS_OP_SCALE, TS_OP_ROTATE, TS_OP_AFFINE, TS_OP_CROP, TS_OP_PAD,
    TS_OP_COUNT
} ts_op_id;

extern const ts_op_def ts_ops[TS_OP_COUNT];

/* Each op's parameters, in the order of its row. */
enum { P_MATRIX_PRESET, P_MATRIX_SATURATION, P_MATRIX_CONTRAST, P_MATRIX_BRIGHTNESS, P_MATRIX_M };
enum { P_FLIP_DIR };
enum { P_ORIENT_CODE };
enum { P_GAUSS_SIGMA, P_GAUSS_RADIUS, P_GAUSS_BORDER };
enum { P_BOX_RADIUS, P_BOX_BORDER };
enum { P_SHARPEN_AMOUNT, P_SHARPEN_SIGMA, P_SHARPEN_RADIUS, P_SHARPEN_BORDER };
enum { P_SOBEL_DIR, P_SOBEL_SCALE, P_SOBEL_BORDER };
enum { P_EMBOSS_STRENGTH, P_EMBOSS_BORDER };
enum { P_CONV_K, P_CONV_W, P_CONV_H, P_CONV_DIVISOR, P_CONV_BIAS, P_CONV_BORDER };
enum { P_RESIZE_W, P_RESIZE_H, P_RESIZE_INTERP, P_RESIZE_BORDER, P_RESIZE_FIT, P_RESIZE_GRAVITY, P_RESIZE_FILL };
enum { P_SCALE_F, P_SCALE_SX, P_SCALE_SY, P_SCALE_INTERP, P_SCALE_BORDER };
enum { P_ROTATE_DEG, P_ROTATE_FILL, P_ROTATE_CROP, P_ROTATE_INTERP };
enum { P_AFFINE_A, P_AFFINE_B, P_AFFINE_C, P_AFFINE_D, P_AFFINE_E, P_AFFINE_F, P_AFFINE_W,
       P_AFFINE_H, P_AFFINE_INTERP };
enum { P_CROP_W, P_CROP_H, P_CROP_X, P_CROP_Y, P_CROP_GRAVITY };
enum { P_PAD_W, P_PAD_H, P_PAD_GRAVITY, P_PAD_FILL };

/* Enum parameters: the index of each choice in its '|' list (ops.c). */
enum { MATRIX_IDENTITY, MATRIX_GREY, MATRIX_SEPIA, MATRIX_INVERT };
enum { FLIP_H, FLIP_V };
enum { SOBEL_MAG, SOBEL_X, SOBEL_Y };
enum { INTERP_AUTO, INTERP_BILINEAR, INTERP_NEAREST, INTERP_AREA, INTERP_BICUBIC };
enum { FIT_INSIDE, FIT_COVER, FIT_PAD, FIT_STRETCH };
enum { GRAVITY_CENTRE, GRAVITY_NORTH, GRAVITY_SOUTH, GRAVITY_EAST, GRAVITY_WEST, GRAVITY_NORTHWEST,
       GRAVITY_NORTHEAST, GRAVITY_SOUTHWEST, GRAVITY_SOUTHEAST };
/* border= lists the modes in ts_border's order: the index is the mode. */

/* The value of parameter i of op: a number, or an enum's choice index. */
static inline double ts_op_num(const ts_user_op *op, int i) { return op->v[i].num; }
static inline int ts_op_choice(const ts_user_op *op, int i) { return (int)op->v[i].num; }

/* --------------------------------------------------------------- lowering
 * The planner (plan.c) hands each user op's lower function the image as it
 * enters the op; lower emits kernel ops through ts_lower_emit, which folds
 * adjacent matrices and orientations into one, scales constant borders to
 * channel units and advances the stage size. */
typedef struct ts_lowering ts_lowering;
int ts_lowering_w(const ts_lowering *lw);
int ts_lowering_h(const ts_lowering *lw);
ts_status ts_lower_emit(ts_lowering *lw, const tsk_op *k, ts_err *err);

/* The luma weights the grey matrices use (ops_lower.c; plan.c folds grey
 * images' matrices with them), and a = b * a for two 3x4 colour matrices
 * (apply a, then b), which the planner folds adjacent matrices with. */
extern const float ts_luma[3];
void ts_matrix_then(float a[12], const float b[12]);

/* Checks that need several parameters at once; text is the chain, for the
 * message. */
ts_status ts_validate_matrix(const ts_user_op *op, const char *text, ts_err *err);
ts_status ts_validate_conv(const ts_user_op *op, const char *text, ts_err *err);
ts_status ts_validate_resize(const ts_user_op *op, const char *text, ts_err *err);
ts_status ts_validate_crop(const ts_user_op *op, const char *text, ts_err *err);

/* One lower function per user op. */
ts_status ts_lower_matrix(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_transpose(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_rot90(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_rot180(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_rot270(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_flip(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_orient(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_gauss(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_box(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_sharpen(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_sobel(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_emboss(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_conv(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_resize(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_scale(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_rotate(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_affine(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_crop(const ts_user_op *op, ts_lowering *lw, ts_err *err);
ts_status ts_lower_pad(const ts_user_op *op, ts_lowering *lw, ts_err *err);

#endif

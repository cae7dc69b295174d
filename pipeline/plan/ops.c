/* ops.c - the op registry: one row per user op, in the order `tilestream
 * ops` lists them: name, help, parameters (type, default, choices, range,
 * help), and the functions that validate and lower it (ops_lower.c).
 * Parameter rows are indexed by the op's enum in ops.h. */
#include "ops.h"

#define BORDER_PARAM(defmode) \
    { "border", TS_P_ENUM, defmode, "replicate|reflect101|reflect|wrap|constant", 0, 0, \
      "what taps outside the image read" }
/* choices in the order of ops.h's INTERP_* */
#define INTERP_PARAM { "interp", TS_P_ENUM, "auto", "auto|bilinear|nearest|area|bicubic", 0, 0, \
                       "sampling; auto = area when shrinking, bilinear otherwise" }
/* choices in the order of ops.h's GRAVITY_* */
#define GRAVITY_PARAM { "gravity", TS_P_ENUM, "centre", \
                        "centre|north|south|east|west|northwest|northeast|southwest|southeast", 0, 0, \
                        "where the kept part sits (cover, crop) or the image sits (pad)" }

const ts_op_def ts_ops[TS_OP_COUNT] = {
    [TS_OP_MATRIX] = { "matrix", "3x4 colour matrix from __constant__ memory: preset, then saturation, contrast, brightness",
      1, {
        [P_MATRIX_PRESET] = { "preset", TS_P_ENUM, "identity", "identity|grey|sepia|invert", 0, 0, "starting matrix" },
        [P_MATRIX_SATURATION] = { "saturation", TS_P_NUM, "1", NULL, 0, 10, "0 = grey, 1 = unchanged" },
        [P_MATRIX_CONTRAST] = { "contrast", TS_P_NUM, "1", NULL, 0, 10, "scale about mid-grey" },
        [P_MATRIX_BRIGHTNESS] = { "brightness", TS_P_NUM, "0", NULL, -1, 1, "offset, in units of full scale" },
        [P_MATRIX_M] = { "m", TS_P_LIST, "", NULL, 0, 0, "12 numbers r0 r1 r2 off0 g0 .. (replaces the preset)" },
      }, ts_validate_matrix, ts_lower_matrix },
    [TS_OP_TRANSPOSE] = { "transpose", "swap x and y (padded shared-memory tiles)", 0, { { 0 } },
      NULL, ts_lower_transpose },
    [TS_OP_ROT90] = { "rot90", "rotate 90 degrees clockwise", 0, { { 0 } }, NULL, ts_lower_rot90 },
    [TS_OP_ROT180] = { "rot180", "rotate 180 degrees", 0, { { 0 } }, NULL, ts_lower_rot180 },
    [TS_OP_ROT270] = { "rot270", "rotate 270 degrees clockwise (90 counter-clockwise)", 0, { { 0 } },
      NULL, ts_lower_rot270 },
    [TS_OP_FLIP] = { "flip", "mirror: h = left-right, v = top-bottom", 1, {
        [P_FLIP_DIR] = { "dir", TS_P_ENUM, "h", "h|v", 0, 0, "direction" } }, NULL, ts_lower_flip },
    [TS_OP_ORIENT] = { "orient", "apply an EXIF orientation code (1 = none .. 8)", 1, {
        [P_ORIENT_CODE] = { "code", TS_P_NUM, "1", NULL, 1, 8, "EXIF orientation" } }, NULL, ts_lower_orient },
    [TS_OP_GAUSS] = { "gauss", "separable Gaussian blur", 1, {
        [P_GAUSS_SIGMA] = { "sigma", TS_P_NUM, "1", NULL, 0.05, 10, "standard deviation in pixels" },
        [P_GAUSS_RADIUS] = { "radius", TS_P_NUM, "0", NULL, 0, 31, "taps each side; 0 = ceil(3 sigma)" },
        [P_GAUSS_BORDER] = BORDER_PARAM("reflect101") }, NULL, ts_lower_gauss },
    [TS_OP_BOX] = { "box", "separable box (mean) filter", 1, {
        [P_BOX_RADIUS] = { "radius", TS_P_NUM, "1", NULL, 1, 31, "taps each side" },
        [P_BOX_BORDER] = BORDER_PARAM("reflect101") }, NULL, ts_lower_box },
    [TS_OP_SHARPEN] = { "sharpen", "unsharp mask: x + amount * (x - gauss(x))", 1, {
        [P_SHARPEN_AMOUNT] = { "amount", TS_P_NUM, "0.6", NULL, 0, 10, "strength" },
        [P_SHARPEN_SIGMA] = { "sigma", TS_P_NUM, "1", NULL, 0.05, 10, "blur sigma" },
        [P_SHARPEN_RADIUS] = { "radius", TS_P_NUM, "0", NULL, 0, 31, "0 = ceil(3 sigma)" },
        [P_SHARPEN_BORDER] = BORDER_PARAM("reflect101") }, NULL, ts_lower_sharpen },
    [TS_OP_SOBEL] = { "sobel", "Sobel edges: gradient magnitude, or |x| / |y| derivative", 1, {
        [P_SOBEL_DIR] = { "dir", TS_P_ENUM, "mag", "mag|x|y", 0, 0, "what to output" },
        [P_SOBEL_SCALE] = { "scale", TS_P_NUM, "1", NULL, 0, 100, "multiplies the result" },
        [P_SOBEL_BORDER] = BORDER_PARAM("replicate") }, NULL, ts_lower_sobel },
    [TS_OP_EMBOSS] = { "emboss", "3x3 emboss (keeps brightness)", 1, {
        [P_EMBOSS_STRENGTH] = { "strength", TS_P_NUM, "1", NULL, 0, 10, "relief strength" },
        [P_EMBOSS_BORDER] = BORDER_PARAM("replicate") }, NULL, ts_lower_emboss },
    [TS_OP_CONV] = { "conv", "2-D convolution with custom taps (up to 15x15)", 1, {
        [P_CONV_K] = { "k", TS_P_LIST, "", NULL, 0, 0, "n*n taps, row by row (n odd), or w*h with w= h=" },
        [P_CONV_W] = { "w", TS_P_NUM, "0", NULL, 0, 15, "kernel width (0 = square)" },
        [P_CONV_H] = { "h", TS_P_NUM, "0", NULL, 0, 15, "kernel height (0 = square)" },
        [P_CONV_DIVISOR] = { "divisor", TS_P_NUM, "0", NULL, -1e9, 1e9, "taps are divided by this; 0 = their sum (1 if the sum is 0)" },
        [P_CONV_BIAS] = { "bias", TS_P_NUM, "0", NULL, -1, 1, "added, in units of full scale" },
        [P_CONV_BORDER] = BORDER_PARAM("reflect101") }, ts_validate_conv, ts_lower_conv },
    [TS_OP_RESIZE] = { "resize", "resample to fit w x h, keeping the aspect ratio unless fit=stretch", 2, {
        [P_RESIZE_W] = { "w", TS_P_NUM, "-1", NULL, -1, 1 << 20, "width, or a percentage of it; -1 = from h", 1 },
        [P_RESIZE_H] = { "h", TS_P_NUM, "-1", NULL, -1, 1 << 20, "height, or a percentage of it; -1 = from w", 1 },
        [P_RESIZE_INTERP] = INTERP_PARAM, [P_RESIZE_BORDER] = BORDER_PARAM("replicate"),
        [P_RESIZE_FIT] = { "fit", TS_P_ENUM, "inside", "inside|cover|pad|stretch", 0, 0,
                           "with w and h: inside the box, cover it (then crop), pad to it, or stretch to it" },
        [P_RESIZE_GRAVITY] = GRAVITY_PARAM,
        [P_RESIZE_FILL] = { "fill", TS_P_NUM, "0", NULL, 0, 1, "fit=pad: the margins' value, in units of full scale" } },
      ts_validate_resize, ts_lower_resize },
    [TS_OP_SCALE] = { "scale", "resample by a factor", 1, {
        [P_SCALE_F] = { "f", TS_P_NUM, "1", NULL, 1e-4, 1e4, "factor for both axes (0.5 or 50%)", 1 },
        [P_SCALE_SX] = { "sx", TS_P_NUM, "0", NULL, 0, 1e4, "x factor (0 = f)", 1 },
        [P_SCALE_SY] = { "sy", TS_P_NUM, "0", NULL, 0, 1e4, "y factor (0 = f)", 1 },
        [P_SCALE_INTERP] = INTERP_PARAM, [P_SCALE_BORDER] = BORDER_PARAM("replicate") }, NULL, ts_lower_scale },
    [TS_OP_ROTATE] = { "rotate", "rotate clockwise by deg about the centre; the output holds the whole rotated image", 1, {
        [P_ROTATE_DEG] = { "deg", TS_P_NUM, "0", NULL, -3600, 3600, "degrees, clockwise" },
        [P_ROTATE_FILL] = { "fill", TS_P_NUM, "0", NULL, 0, 1, "value outside the image, in units of full scale" },
        [P_ROTATE_CROP] = { "crop", TS_P_NUM, "0", NULL, 0, 1, "1 = keep the input size instead of the bounding box" },
        [P_ROTATE_INTERP] = INTERP_PARAM }, NULL, ts_lower_rotate },
    [TS_OP_AFFINE] = { "affine", "forward affine map x' = a x + b y + c, y' = d x + e y + f", 0, {
        [P_AFFINE_A] = { "a", TS_P_NUM, "1", NULL, -1e4, 1e4, "" },
        [P_AFFINE_B] = { "b", TS_P_NUM, "0", NULL, -1e4, 1e4, "" },
        [P_AFFINE_C] = { "c", TS_P_NUM, "0", NULL, -1e6, 1e6, "" },
        [P_AFFINE_D] = { "d", TS_P_NUM, "0", NULL, -1e4, 1e4, "" },
        [P_AFFINE_E] = { "e", TS_P_NUM, "1", NULL, -1e4, 1e4, "" },
        [P_AFFINE_F] = { "f", TS_P_NUM, "0", NULL, -1e6, 1e6, "" },
        [P_AFFINE_W] = { "w", TS_P_NUM, "0", NULL, 0, 1 << 20, "output width (0 = input)" },
        [P_AFFINE_H] = { "h", TS_P_NUM, "0", NULL, 0, 1 << 20, "output height (0 = input)" },
        [P_AFFINE_INTERP] = INTERP_PARAM }, NULL, ts_lower_affine },
    [TS_OP_CROP] = { "crop", "keep a w x h rectangle: at x,y, or placed by gravity", 2, {
        [P_CROP_W] = { "w", TS_P_NUM, "-1", NULL, -1, 1 << 20, "width, or a percentage of it; -1 = all", 1 },
        [P_CROP_H] = { "h", TS_P_NUM, "-1", NULL, -1, 1 << 20, "height, or a percentage of it; -1 = all", 1 },
        [P_CROP_X] = { "x", TS_P_NUM, "-1", NULL, -1, 1 << 20, "left edge; -1 = by gravity" },
        [P_CROP_Y] = { "y", TS_P_NUM, "-1", NULL, -1, 1 << 20, "top edge; -1 = by gravity" },
        [P_CROP_GRAVITY] = GRAVITY_PARAM }, ts_validate_crop, ts_lower_crop },
    [TS_OP_PAD] = { "pad", "place the image on a w x h canvas of the fill value (never shrinks it)", 2, {
        [P_PAD_W] = { "w", TS_P_NUM, "-1", NULL, -1, 1 << 20, "canvas width; -1 = the image's", 1 },
        [P_PAD_H] = { "h", TS_P_NUM, "-1", NULL, -1, 1 << 20, "canvas height; -1 = the image's", 1 },
        [P_PAD_GRAVITY] = GRAVITY_PARAM,
        [P_PAD_FILL] = { "fill", TS_P_NUM, "0", NULL, 0, 1, "the canvas value, in units of full scale" } },
      NULL, ts_lower_pad },
};

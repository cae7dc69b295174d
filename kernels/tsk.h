/* tsk.h - the kernel-level ops: one descriptor type, a plain-C reference
 * implementation (the oracle) and CUDA implementations with numbered
 * versions, all behind this C header. Each op family keeps its reference,
 * fast CPU version and CUDA versions in one folder (kernels/point,
 * kernels/orient, kernels/conv, kernels/sample); what they share, and the
 * dispatch over kinds, stays at the top of kernels/.
 *
 * The op-chain parser (pipeline/) lowers user ops (gauss, sharpen, rot90,
 * resize, ...) into these few kernel ops. Every kernel op maps a region of
 * its input image to a region of its output image:
 *
 *   dst region (dst->x0, dst->y0, dst->w, dst->h) of the output image is
 *   computed from src, which holds the region need(dst region) of the input
 *   image (src->x0 .. src->x0 + src->w etc.). Coordinates are global (whole
 *   image), so a tile gives exactly the pixels the whole image would.
 *
 * Numeric rule (the CPU reference defines it, the GPU follows it): maths in
 * float32; integer results are rounded by ts_round_sat() (round half up,
 * saturate to 0..max); F32 results are stored as computed.
 *
 * Sums are evaluated left to right in the order the formulas below are
 * written (the reference does exactly that), e.g. MATRIX is
 * ((m0*R + m1*G) + m2*B) + m3*max, and max is 255, 65535 or 1.0.
 * Borders: ts_border_map() maps x and y separately; a tap for which either
 * gives -1 (constant border) reads border_value in every channel, alpha
 * included.
 */
#ifndef TSK_H
#define TSK_H

#include "ts_base.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ts_border {
    TS_BORDER_REPLICATE = 0,  /* aaa|abcd|ddd */
    TS_BORDER_REFLECT101,     /* cb|abcd|cb   (OpenCV's default) */
    TS_BORDER_REFLECT,        /* ba|abcd|dc */
    TS_BORDER_WRAP,           /* cd|abcd|ab */
    TS_BORDER_CONSTANT        /* vv|abcd|vv  (border_value, in channel units) */
} ts_border;

/* A rectangle of pixels of one image stage held in memory (host or device). */
typedef struct ts_view {
    unsigned char *data;  /* pixel (x0, y0) */
    size_t pitch;         /* bytes between rows */
    int x0, y0, w, h;     /* the region of the whole image held here */
    int full_w, full_h;   /* size of the whole image at this stage */
    int c;                /* channels stored per pixel: 1, 2, 3 or 4 */
    ts_type type;
} ts_view;

typedef enum tsk_kind {
    TSK_MATRIX = 0,   /* per-pixel 3x4 colour matrix (grey: 1x2) */
    TSK_PREMUL,       /* colour *= alpha / max            (c = 2 or 4) */
    TSK_UNPREMUL,     /* colour *= max / alpha, 0 if alpha == 0 */
    TSK_ORIENT,       /* one of the 8 EXIF orientations (transpose family) */
    TSK_CONV_SEP,     /* separable convolution, row taps x column taps */
    TSK_CONV_2D,      /* 2-D convolution up to 15x15, linear / abs / magnitude */
    TSK_SAMPLE,       /* inverse-affine resampling: nearest, bilinear, area, bicubic */
    TSK_KIND_COUNT
} tsk_kind;

#define TSK_MAX_SEP_TAPS 63      /* separable: up to radius 31 */
/* Normalised Gaussian taps exp(-x^2 / 2 sigma^2) / sum for x in
 * -radius..radius (radius <= 0: ceil(3 sigma); at most TSK_MAX_SEP_TAPS
 * taps) into k, summed in double; returns how many (kernels/conv/ref_conv.c).
 * The gauss op, the benches and the tests share it. */
int tsk_gauss_taps(double sigma, int radius, float *k);
#define TSK_MAX_2D 15            /* 2-D: up to 15 x 15 */

typedef enum tsk_conv_mode {
    TSK_CONV_LINEAR = 0,  /* bias + sum(k * p)                  (conv, emboss) */
    TSK_CONV_ABS,         /* |sum(k * p)|                         (sobel=dir=x) */
    TSK_CONV_MAG          /* sqrt(sum(k*p)^2 + sum(k2*p)^2)        (sobel) */
} tsk_conv_mode;

typedef enum tsk_interp {
    TSK_NEAREST = 0,
    TSK_BILINEAR,
    TSK_AREA,       /* box prefilter whose width follows the map's scale */
    TSK_BICUBIC,    /* Catmull-Rom (Keys a = -0.5), widened likewise */
    TSK_INTERP_COUNT
} tsk_interp;

/* Filtered sampling (AREA, BICUBIC) never widens past this many input
 * pixels per output pixel on one axis: a shrink by more than 64x in one op
 * is filtered 64 wide (chain two ops to go further without aliasing). */
#define TSK_MAX_FOOTPRINT 64.0f

/* An orientation and the colour matrix it may carry: ORIENT's parameters,
 * and what a separable convolution may carry after it (u.sep.then). */
typedef struct tsk_orient {
    int code;     /* EXIF orientation 1..8 (ORIENT's rule below); in u.sep.then 0 = none */
    int matrix;   /* 1: the pixels also go through m, as MATRIX's rule */
    float m[12];
} tsk_orient;

typedef struct tsk_op {
    tsk_kind kind;
    /* For c = 2 or 4: 1 = the last channel (alpha) is copied from the
     * centre pixel and not filtered. Set by the planner for derivative
     * filters (sharpen, sobel, emboss, conv with a negative tap); smoothing
     * filters filter alpha too and run between PREMUL and UNPREMUL.
     * Only CONV_SEP and CONV_2D read it: MATRIX, PREMUL and UNPREMUL keep
     * alpha by their own rule, ORIENT moves it and SAMPLE samples it like
     * colour. */
    int alpha_passthrough;
    union {
        /* out[i] = m[4i]*R + m[4i+1]*G + m[4i+2]*B + m[4i+3]*max, i = 0..2,
         * alpha unchanged. Grey images (c = 1, 2): out = m[0]*v + m[3]*max.
         * PREMUL: colour = colour*alpha/max, UNPREMUL: colour = alpha == 0 ?
         * 0 : colour*max/alpha (products first); c = 1 or 3: a copy. */
        struct { float m[12]; } matrix;

        /* EXIF orientation code; output (x, y) reads input (sx, sy), with
         * W, H the input size:
         *   1 identity (sx=x, sy=y)         2 flip h   (W-1-x, y)
         *   3 rot180   (W-1-x, H-1-y)       4 flip v   (x, H-1-y)
         *   5 transpose (y, x)              6 rot90 cw (y, H-1-x)
         *   7 transverse (W-1-y, H-1-x)     8 rot270 cw (W-1-y, x)
         * Codes 5..8 swap width and height; other codes are TS_E_ARG.
         * matrix = 1: every pixel also goes through the colour matrix m,
         * exactly as a MATRIX op after it would (same maths, one rounding).
         * An orientation only moves pixels, so the two commute; the planner
         * fuses a MATRIX next to an ORIENT into it (ts_plan_fuse) so that
         * the pair costs the GPU one pass through memory, not two. */
        tsk_orient orient;

        /* Two passes in float, rx = (nx-1)/2, ry = (ny-1)/2 (nx, ny odd):
         *   row pass    r(x,y') = sum_i kx[i] * p(x + i - rx, y')
         *   column pass t(x,y)  = sum_j ky[j] * r(x, y + j - ry)
         *   out = center_w * p(x,y) + conv_w * t(x,y).
         * Order: r = 0; for i { r += kx[i]*p }, then t = 0; for j
         * { t += ky[j]*r }: nx + ny products per output, not nx * ny.
         * gauss/box: center_w 0, conv_w 1; sharpen: 1+amount, -amount.
         * then.code 1..8: the result also goes through the orientation
         * `then` (and its matrix), exactly as an ORIENT op after it would:
         * the output image is the oriented one (sizes swapped for 5..8).
         * Only ts_plan_fuse sets it, where the GPU runs the three in one
         * pass (tsk_gpu_sep_fuses); every backend runs such an op. */
        struct {
            int nx, ny;
            float kx[TSK_MAX_SEP_TAPS], ky[TSK_MAX_SEP_TAPS];
            float center_w, conv_w;
            ts_border border;
            float border_value;
            tsk_orient then;
        } sep;

        /* s = sum_{j,i} k[j*kw + i] * p(x + i - kw/2, y + j - kh/2),
         * s2 likewise with k2 (MAG only); kw, kh odd, <= 15.
         * LINEAR: bias*max + s; ABS: |s|; MAG: sqrt(s*s + s2*s2).
         * Order: s = 0; for j { for i { s += k[j*kw+i]*p } }. */
        struct {
            int kw, kh;
            float k[TSK_MAX_2D * TSK_MAX_2D];
            float k2[TSK_MAX_2D * TSK_MAX_2D];
            tsk_conv_mode mode;
            float bias;
            ts_border border;
            float border_value;
        } conv2d;

        /* Output pixel (x, y) samples the input at the continuous point
         *   sx = inv[0]*(x+0.5) + inv[1]*(y+0.5) + inv[2]
         *   sy = inv[3]*(x+0.5) + inv[4]*(y+0.5) + inv[5]
         * (pixel i covers [i, i+1)). NEAREST: pixel (floor(sx), floor(sy)).
         * BILINEAR: px = sx-0.5, x0 = floor(px), fx = px-x0 (same for y);
         * (1-fx)(1-fy)p00 + fx(1-fy)p10 + (1-fx)fy p01 + fx fy p11.
         * Taps outside the image go through the border mode. sx and sy go
         * through ts_coord_clamp() before the -0.5 and the floor (so NaN and
         * far-away points are defined). Weights multiply as written,
         * ((1-fx)*(1-fy))*p00 etc., summed in the order above; all four taps
         * are read even when a weight is 0.
         *
         * AREA and BICUBIC filter along the input's axes with a footprint
         * that follows the map (tsk_sample_footprint): kx = |(inv[0], inv[1])|
         * (input pixels crossed per output pixel, along x), clamped to
         * TSK_MAX_FOOTPRINT, and 1 below 1.001 (enlarging, the rounding of
         * a pure rotation's cos and sin, NaN); ky from inv[3], inv[4]. Per axis,
         * with p = sx - 0.5 and the tap count n (tsk_sample_taps), taps are
         * i = floor(p - r) + 1 .. + n - 1 (r the filter's half-width) and
         * d = (float)i - p. Weights:
         *   AREA:    r = kx/2 + 1/2, n = ceil(2r); w = max(0, min(d + 0.5,
         *            kx/2) - max(d - 0.5, -kx/2)), the overlap of pixel i
         *            with the output pixel's box (kx = 1: bilinear's tent);
         *   BICUBIC: r = 2 kx, n = ceil(4 kx); t = |d| / kx, w = ((1.5t -
         *            2.5) t) t + 1 for t < 1, ((-0.5t + 2.5) t - 4) t + 2
         *            for t < 2, else 0.
         * out = (sum_j wy_j * (sum_i wx_i * p(i, j))) / (Wx * Wy), sums left
         * to right and top to bottom, Wx = sum_i wx_i (same order). */
        struct {
            float inv[6];
            int out_w, out_h;
            tsk_interp interp;
            ts_border border;
            float border_value;
        } sample;
    } u;
} tsk_op;

/* ------------------------------------------------------------ geometry
 * (kernels/geometry.c) Output size of one op, and the input region that an
 * output region needs (clipped to the input image; whole rows or columns
 * when a wrap border needs them). The rect is the bounding box of the
 * pixels the border mode maps the taps to. SAMPLE adds one pixel of slack
 * on every side beyond its taps (implementations whose coordinate rounding
 * differs a little, such as texture hardware, stay inside), and takes the
 * whole axis when a coordinate could exceed 2^28. The rect may be empty (w = 0
 * or h = 0) when no pixel is read (a constant border region wholly
 * outside); tsk_ref_apply accepts such an empty src. */
typedef struct ts_rect { int x0, y0, w, h; } ts_rect;
void tsk_out_size(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h);
/* SAMPLE: the footprint scales kx, ky (tsk.h's rule above), and the taps
 * per axis and half-width of interp for footprint k (NEAREST 1 and 0.5,
 * BILINEAR 2 and 1). The reference, the GPU and tsk_need all use these. */
void tsk_sample_footprint(const tsk_op *op, float *kx, float *ky);
int tsk_sample_taps(tsk_interp interp, float k);
float tsk_sample_radius(tsk_interp interp, float k);
ts_rect tsk_need(const tsk_op *op, int in_w, int in_h, ts_rect out);

/* The MATRIX op an ORIENT carries (u.orient.m): what both backends run
 * after moving the pixels when they do not fuse it (kernels/kinds.c). */
tsk_op tsk_orient_matrix_op(const tsk_op *orient);

/* A CONV_SEP carrying an orientation (u.sep.then) as its two steps: the
 * convolution alone into *conv, the ORIENT op into *orient; returns 1. Any
 * other op: 0, nothing written (kernels/kinds.c). */
int tsk_split_then(const tsk_op *op, tsk_op *conv, tsk_op *orient);

/* 1 when op maps each row of its input to one row of its output and needs
 * no neighbours: per-pixel ops, flips, rot180 (kernels/kinds.c). */
int tsk_rows_to_rows(const tsk_op *op);

/* ------------------------------------------------------------ kind table
 * (kernels/kinds.c) One row per kernel kind: what every dispatcher over
 * kinds reads (the reference, the fast CPU ops, geometry, the engine's
 * stage names). The CUDA launchers are the family table in gpu.cu, one
 * line per kind there, since a build without CUDA has none. */
typedef struct tsk_kind_info {
    const char *name;      /* in the reference's messages: "separable convolution" */
    const char *stage;     /* in the stage table and traces: "conv_sep" */
    int has_texture_path;  /* tsk_launch.path chooses global memory or a texture */
    void (*out_size)(const tsk_op *op, int in_w, int in_h, int *out_w, int *out_h);
    ts_rect (*need)(const tsk_op *op, int in_w, int in_h, ts_rect out);  /* out, input not empty */
    /* The op's parameters; what names the op in the message. */
    ts_status (*check)(const tsk_op *op, const char *what, ts_err *err);
    ts_status (*ref)(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
    ts_status (*cpu)(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);
    int (*cpu_has_fast)(const tsk_op *op);  /* NULL: cpu handles every such op */
} tsk_kind_info;
/* The row of kind, or NULL for a value outside tsk_kind. */
const tsk_kind_info *tsk_kind_info_of(tsk_kind kind);

/* -------------------------------------------------------- CPU reference
 * (kernels/ref.c, kernels/<family>/ref_*.c) Plain C written for clarity,
 * not speed: the oracle.
 * src and dst must agree in c and type; src must hold tsk_need(dst).
 * A read outside src, a bad size or a bad parameter is TS_E_ARG. */
ts_status tsk_ref_apply(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);

/* ------------------------------------------------------------ CUDA side
 * (kernels/gpu.cu, kernels/<family>/ *.cu) Views hold device pointers.
 * Available only when built with CUDA (TS_HAVE_CUDA); otherwise these
 * return TS_E_DEVICE. */

enum { TSK_SLOTS = 16 };  /* constant-memory coefficient banks, one per stream */

typedef struct tsk_launch {
    void *stream;   /* cudaStream_t */
    int version;    /* 0 = the default (fastest) version, else 1..count; others are TS_E_ARG */
    ts_path path;   /* TSK_SAMPLE only: global memory or texture object */
    int slot;       /* 0..TSK_SLOTS-1: coefficient bank owned by this stream */
} tsk_launch;

int tsk_version_count(tsk_kind kind);
const char *tsk_version_name(tsk_kind kind, int version);  /* "v3 padded smem tile" */
int tsk_default_version(tsk_kind kind);
/* 1 when the version fuses multiply-add, so that integer results may be 1
 * off the reference's; 0 when it matches the reference bit for bit. */
int tsk_version_fma(tsk_kind kind, int version);

/* Enqueue op on l->stream. Returns TS_OK or a launch error (in err); a
 * version outside 0..tsk_version_count(op->kind) is TS_E_ARG, before any
 * work. */
ts_status tsk_gpu_apply(const tsk_op *op, const ts_view *src, ts_view *dst,
                        const tsk_launch *l, ts_err *err);

/* 1 when the default CONV_SEP version runs op followed by orientation
 * `then` in one pass for a c-channel image of type t on the current device
 * (the tensor-core version: RGBA8 gauss or box of 7..15 taps), so that the
 * planner may fuse the two (ts_plan_fuse); 0 otherwise, and without CUDA. */
int tsk_gpu_sep_fuses(const tsk_op *op, int c, ts_type t);

/* Device-side channel expansion: RGB (3 bytes) crosses PCIe packed and the
 * device works on RGBX; alpha/X is set to max. And back. */
ts_status tsk_gpu_expand3to4(const ts_view *src3, ts_view *dst4, void *stream, ts_err *err);
ts_status tsk_gpu_pack4to3(const ts_view *src4, ts_view *dst3, void *stream, ts_err *err);

#ifdef __cplusplus
}
#endif
#endif /* TSK_H */

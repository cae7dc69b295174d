/* ref_conv.c - the reference convolutions: separable (a row pass into a
 * float buffer, then a column pass over it) and 2-D (linear, absolute
 * value, gradient magnitude). Every tap goes through the border mode on
 * its own. */
#include "kind_parts.h"
#include "ref_internal.h"

#include <math.h>
#include <stdlib.h>

/* The last channel of c = 2 or 4 is alpha. */
static int has_alpha(int c) { return c == 2 || c == 4; }

/* Row pass of CONV_SEP for image row gy (which may lie outside the image):
 * out[lx*c + ch] = sum_i kx[i] * p(x0 + lx + i - rx, gy), summed with i
 * going up, as tsk.h orders it. */
static void sep_row_pass(const tsk_op *op, ref_reader *rd, int x0, int w, int gy, float *out)
{
    int c = rd->v->c, rx = (op->u.sep.nx - 1) / 2;
    float p[4];
    for (int lx = 0; lx < w; lx++) {
        float row[4] = { 0, 0, 0, 0 };
        for (int i = 0; i < op->u.sep.nx; i++) {
            ref_read_border(rd, x0 + lx + i - rx, gy, op->u.sep.border, op->u.sep.border_value, p);
            for (int ch = 0; ch < c; ch++) row[ch] += op->u.sep.kx[i] * p[ch];
        }
        for (int ch = 0; ch < c; ch++) out[(size_t)lx * c + ch] = row[ch];
    }
}

/* Column pass for output pixel (x0 + lx, gy): rows[k] holds the row pass of
 * image row dst->y0 - ry + k. t = sum_j ky[j] * row sum at gy + j - ry, j
 * going up; then the centre weight and the alpha rule. */
static void sep_col_pixel(const tsk_op *op, ref_reader *rd, const float *rows, size_t row_len, int ly,
                          int lx, int gx, int gy, float *out)
{
    int c = rd->v->c;
    float t[4] = { 0, 0, 0, 0 }, centre[4];
    for (int j = 0; j < op->u.sep.ny; j++) {
        const float *r = rows + (size_t)(ly + j) * row_len + (size_t)lx * c;
        for (int ch = 0; ch < c; ch++) t[ch] += op->u.sep.ky[j] * r[ch];
    }
    ref_read(rd, gx, gy, centre);
    for (int ch = 0; ch < c; ch++) out[ch] = op->u.sep.center_w * centre[ch] + op->u.sep.conv_w * t[ch];
    if (op->alpha_passthrough && has_alpha(c)) out[c - 1] = centre[c - 1];
}

ts_status tsk_ref_conv_sep(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ref_reader rd = ref_reader_of(src);
    int ry = (op->u.sep.ny - 1) / 2, nrows = dst->h + op->u.sep.ny - 1;
    size_t row_len = (size_t)dst->w * (size_t)dst->c;
    float *rows = malloc(sizeof(float) * row_len * (size_t)nrows), out[4];
    if (!rows)
        return ts_err_set(err, TS_E_NOMEM, "reference separable convolution: no memory for %d rows of %d pixels",
                          nrows, dst->w);
    for (int k = 0; k < nrows; k++)
        sep_row_pass(op, &rd, dst->x0, dst->w, dst->y0 - ry + k, rows + (size_t)k * row_len);
    for (int ly = 0; ly < dst->h; ly++)
        for (int lx = 0; lx < dst->w; lx++) {
            sep_col_pixel(op, &rd, rows, row_len, ly, lx, dst->x0 + lx, dst->y0 + ly, out);
            for (int ch = 0; ch < dst->c; ch++) ref_store(dst, lx, ly, ch, out[ch]);
        }
    free(rows);
    return tsk_ref_reader_status(&rd, "separable convolution", err);
}

/* One output pixel of CONV_2D at global (x, y): s (and s2 for MAG) summed
 * with j outer, i inner, then the mode. */
static void conv2d_pixel(const tsk_op *op, ref_reader *rd, int x, int y, float maxv, float *out)
{
    int c = rd->v->c, kw = op->u.conv2d.kw, kh = op->u.conv2d.kh;
    int mag = op->u.conv2d.mode == TSK_CONV_MAG;  /* k2 is read only then */
    float s[4] = { 0, 0, 0, 0 }, s2[4] = { 0, 0, 0, 0 }, centre[4], p[4];
    for (int j = 0; j < kh; j++)
        for (int i = 0; i < kw; i++) {
            ref_read_border(rd, x + i - kw / 2, y + j - kh / 2, op->u.conv2d.border, op->u.conv2d.border_value, p);
            for (int ch = 0; ch < c; ch++) {
                s[ch] += op->u.conv2d.k[j * kw + i] * p[ch];
                if (mag) s2[ch] += op->u.conv2d.k2[j * kw + i] * p[ch];
            }
        }
    for (int ch = 0; ch < c; ch++) {
        switch (op->u.conv2d.mode) {
        case TSK_CONV_LINEAR: out[ch] = op->u.conv2d.bias * maxv + s[ch]; break;
        case TSK_CONV_ABS: out[ch] = fabsf(s[ch]); break;
        default: out[ch] = sqrtf(s[ch] * s[ch] + s2[ch] * s2[ch]); break;
        }
    }
    if (op->alpha_passthrough && has_alpha(c)) {
        ref_read(rd, x, y, centre);
        out[c - 1] = centre[c - 1];
    }
}

ts_status tsk_ref_conv2d(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ref_reader rd = ref_reader_of(src);
    float maxv = ref_type_max(dst->type), out[4];
    for (int ly = 0; ly < dst->h; ly++)
        for (int lx = 0; lx < dst->w; lx++) {
            conv2d_pixel(op, &rd, dst->x0 + lx, dst->y0 + ly, maxv, out);
            for (int ch = 0; ch < dst->c; ch++) ref_store(dst, lx, ly, ch, out[ch]);
        }
    return tsk_ref_reader_status(&rd, "2-D convolution", err);
}

int tsk_gauss_taps(double sigma, int radius, float *k)
{
    if (radius <= 0) radius = (int)ceil(3 * sigma);
    if (radius > (TSK_MAX_SEP_TAPS - 1) / 2) radius = (TSK_MAX_SEP_TAPS - 1) / 2;
    double sum = 0, w[TSK_MAX_SEP_TAPS];
    for (int i = -radius; i <= radius; i++) sum += w[i + radius] = exp(-0.5 * i * i / (sigma * sigma));
    for (int i = 0; i < 2 * radius + 1; i++) k[i] = (float)(w[i] / sum);
    return 2 * radius + 1;
}

/* quality_ref.h - the ideal that shrinking is scored against: a downscale
 * computed in double precision with Lanczos-3 stretched by the shrink
 * factor (ImageMagick's and libvips' default kind of filter), output pixel
 * centre x + 0.5 mapping to (x + 0.5) * n_in / n_out, replicate at the
 * edges, weights normalised, rows then columns; and PSNR against it.
 * scripts/quality_opencv.py computes the same reference in numpy. */
#ifndef TS_QUALITY_REF_H
#define TS_QUALITY_REF_H

#include <math.h>
#include <stdlib.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static inline double qref_lanczos3(double t)
{
    t = fabs(t);
    if (t < 1e-12) return 1.0;
    if (t >= 3.0) return 0.0;
    return 3.0 * sin(M_PI * t) * sin(M_PI * t / 3.0) / (M_PI * M_PI * t * t);
}

/* One axis: n_in values at stride in_step into n_out at stride out_step. */
static inline void qref_axis(const double *in, int n_in, size_t in_step, double *out, int n_out, size_t out_step)
{
    double scale = (double)n_in / n_out, k = scale > 1 ? scale : 1, support = 3 * k;
    for (int x = 0; x < n_out; x++) {
        double centre = (x + 0.5) * scale, sum = 0, wsum = 0;
        for (int i = (int)floor(centre - support) - 1; i <= (int)ceil(centre + support) + 1; i++) {
            double w = qref_lanczos3((i + 0.5 - centre) / k);
            int j = i < 0 ? 0 : i >= n_in ? n_in - 1 : i;
            if (w == 0) continue;
            sum += w * in[(size_t)j * in_step];
            wsum += w;
        }
        out[(size_t)x * out_step] = sum / wsum;
    }
}

/* src: w x h x c doubles, row-major, channels interleaved. Returns a
 * malloc'd ow x oh x c result (unrounded, unclamped), or NULL. */
static inline double *qref_downscale(const double *src, int w, int h, int c, int ow, int oh)
{
    double *mid = (double *)malloc(sizeof(double) * (size_t)ow * h * c);
    double *out = (double *)malloc(sizeof(double) * (size_t)ow * oh * c);
    if (!mid || !out) { free(mid); free(out); return NULL; }
    for (int y = 0; y < h; y++)
        for (int ch = 0; ch < c; ch++)
            qref_axis(src + (size_t)y * w * c + ch, w, (size_t)c, mid + (size_t)y * ow * c + ch, ow, (size_t)c);
    for (int x = 0; x < ow; x++)
        for (int ch = 0; ch < c; ch++)
            qref_axis(mid + (size_t)x * c + ch, h, (size_t)ow * c, out + (size_t)x * c + ch, oh, (size_t)ow * c);
    free(mid);
    return out;
}

/* PSNR in dB of n values got[] against ref[], full scale maxv. */
static inline double qref_psnr(const double *got, const double *ref, size_t n, double maxv)
{
    double sq = 0;
    for (size_t i = 0; i < n; i++) sq += (got[i] - ref[i]) * (got[i] - ref[i]);
    return sq > 0 ? 10 * log10(maxv * maxv / (sq / (double)n)) : INFINITY;
}

#endif

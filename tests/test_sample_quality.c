/* test_sample_quality.c - how well each interpolation shrinks: the zone
 * plate and three sample photos through `scale=F:interp=X` on the CPU
 * backend, against a reference downscale computed in double precision with
 * a wide filter (Lanczos-3 stretched by the shrink factor, as ImageMagick's
 * and libvips' defaults are), PSNR in dB over every channel. Aliasing
 * (detail above the output's Nyquist folding into moire) is what pulls a
 * result away from that reference, and the zone plate is made of nothing
 * else. Asserts that area and bicubic beat bilinear by clear margins (the
 * margins are about half of what was measured when this test was written;
 * the figures are printed on every run and stated in the README).
 *
 * The same figures for OpenCV's INTER_AREA come from
 * scripts/quality_opencv.py (same reference, same PSNR). */
#include "check.h"
#include "tilestream.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static double lanczos3(double t)
{
    t = fabs(t);
    if (t < 1e-12) return 1.0;
    if (t >= 3.0) return 0.0;
    return 3.0 * sin(M_PI * t) * sin(M_PI * t / 3.0) / (M_PI * M_PI * t * t);
}

static double sample_of(const ts_image *img, int x, int y, int ch)
{
    const unsigned char *row = img->data + (size_t)y * img->stride;
    if (img->type == TS_U16) return ((const uint16_t *)row)[(size_t)x * img->c + ch];
    return row[(size_t)x * img->c + ch];
}

/* One axis of the reference: n_in values at stride `step` into n_out, the
 * output pixel centre x + 0.5 mapping to (x + 0.5) * n_in / n_out, taps
 * weighed by Lanczos-3 over a support widened by the shrink, replicate at
 * the edges, weights normalised. */
static void resample_axis(const double *in, int n_in, size_t in_step, double *out, int n_out, size_t out_step)
{
    double scale = (double)n_in / n_out, k = scale > 1 ? scale : 1, support = 3 * k;
    for (int x = 0; x < n_out; x++) {
        double centre = (x + 0.5) * scale, sum = 0, wsum = 0;
        for (int i = (int)floor(centre - support) - 1; i <= (int)ceil(centre + support) + 1; i++) {
            double w = lanczos3((i + 0.5 - centre) / k);
            int j = i < 0 ? 0 : i >= n_in ? n_in - 1 : i;
            if (w == 0) continue;
            sum += w * in[(size_t)j * in_step];
            wsum += w;
        }
        out[(size_t)x * out_step] = sum / wsum;
    }
}

/* The reference downscale of img to ow x oh, rows then columns, in double,
 * channel values unrounded and unclamped. ow * oh * c doubles. */
static double *reference_downscale(const ts_image *img, int ow, int oh)
{
    int w = img->w, h = img->h, c = img->c;
    double *src = malloc(sizeof(double) * (size_t)w * h * c);
    double *mid = malloc(sizeof(double) * (size_t)ow * h * c);
    double *out = malloc(sizeof(double) * (size_t)ow * oh * c);
    if (!src || !mid || !out) { free(src); free(mid); free(out); return NULL; }
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int ch = 0; ch < c; ch++) src[((size_t)y * w + x) * c + ch] = sample_of(img, x, y, ch);
    for (int y = 0; y < h; y++)
        for (int ch = 0; ch < c; ch++)
            resample_axis(src + (size_t)y * w * c + ch, w, (size_t)c, mid + (size_t)y * ow * c + ch, ow, (size_t)c);
    for (int x = 0; x < ow; x++)
        for (int ch = 0; ch < c; ch++)
            resample_axis(mid + (size_t)x * c + ch, h, (size_t)ow * c, out + (size_t)x * c + ch, oh, (size_t)ow * c);
    free(src);
    free(mid);
    return out;
}

static double psnr_against(const ts_image *got, const double *ref)
{
    double sq = 0, maxv = got->type == TS_U16 ? 65535.0 : 255.0;
    size_t n = (size_t)got->w * got->h * got->c;
    for (int y = 0; y < got->h; y++)
        for (int x = 0; x < got->w; x++)
            for (int ch = 0; ch < got->c; ch++) {
                double e = sample_of(got, x, y, ch) - ref[((size_t)y * got->w + x) * got->c + ch];
                sq += e * e;
            }
    return 10 * log10(maxv * maxv / (sq / (double)n));
}

static const char *const interps[] = { "nearest", "bilinear", "area", "bicubic", "auto" };
enum { N_INTERPS = 5 };

/* PSNR of `scale=f:interp=X` for each interp against the reference. */
static int measure(const char *path, double f, double psnr[N_INTERPS])
{
    ts_image in = { 0 };
    ts_err err = { 0 };
    double *ref = NULL;
    int ok = 1;
    if (ts_image_load(path, NULL, &in, &err) != TS_OK) {
        CHECK_MSG(0, "%s", err.msg);
        return 0;
    }
    for (int i = 0; i < N_INTERPS && ok; i++) {
        char text[64];
        ts_chain *chain = NULL;
        ts_image out = { 0 };
        snprintf(text, sizeof text, "scale=%g:interp=%s", f, interps[i]);
        ok = ts_chain_parse(text, &chain, &err) == TS_OK && ts_cpu_run(chain, &in, 0, 0, &out, &err) == TS_OK;
        CHECK_MSG(ok, "%s %s: %s", path, text, err.msg);
        if (ok && !ref) ref = reference_downscale(&in, out.w, out.h);
        if (ok && ref) psnr[i] = psnr_against(&out, ref);
        ok = ok && ref;
        ts_image_free(&out);
        ts_chain_free(chain);
    }
    free(ref);
    ts_image_free(&in);
    return ok;
}

typedef struct quality_case {
    const char *file;
    double f;
    double area_margin, bicubic_margin;  /* dB over bilinear that must hold */
} quality_case;

int main(void)
{
    static const quality_case cases[] = {
        /* measured (dB over bilinear, area / bicubic): 10.1 / 21.9 */
        { "patterns/zoneplate-512.png", 0.25, 5.0, 10.0 },
        /* 14.1 / 23.2 */
        { "patterns/zoneplate-512.png", 0.3, 5.0, 10.0 },
        /* 8.1 / 13.8 */
        { "photos/chelsea.png", 0.3, 3.5, 5.5 },
        /* 7.9 / 13.6 */
        { "photos/camera-grey.png", 0.25, 3.5, 5.5 },
        /* 6.8 / 11.5 */
        { "photos/astronaut.jpg", 0.3, 3.5, 5.5 },
    };
    printf("%-30s %6s %9s %9s %9s %9s %9s\n", "PSNR dB vs double Lanczos-3", "scale", "nearest", "bilinear",
           "area", "bicubic", "auto");
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const quality_case *q = &cases[k];
        char path[512];
        double p[N_INTERPS];
        snprintf(path, sizeof path, "%s/%s", TS_SAMPLES, q->file);
        if (!measure(path, q->f, p)) continue;
        printf("%-30s %6.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", q->file, q->f, p[0], p[1], p[2], p[3], p[4]);
        CHECK_MSG(p[2] >= p[1] + q->area_margin, "%s at %g: area %.2f dB, bilinear %.2f dB", q->file, q->f, p[2],
                  p[1]);
        CHECK_MSG(p[3] >= p[1] + q->bicubic_margin, "%s at %g: bicubic %.2f dB, bilinear %.2f dB", q->file, q->f,
                  p[3], p[1]);
        CHECK_MSG(p[4] == p[2], "%s at %g: auto (%.2f dB) is not area (%.2f dB) when shrinking", q->file, q->f,
                  p[4], p[2]);
    }
    return check_exit();
}

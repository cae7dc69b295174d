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
#include "quality_ref.h"

#include <stdio.h>
#include <string.h>

/* All channels of img as doubles, row-major. */
static double *doubles_of(const ts_image *img)
{
    double *d = malloc(sizeof(double) * (size_t)img->w * img->h * img->c);
    for (int y = 0; d && y < img->h; y++)
        for (int x = 0; x < img->w; x++)
            for (int ch = 0; ch < img->c; ch++) {
                const unsigned char *row = img->data + (size_t)y * img->stride;
                size_t i = (size_t)x * img->c + ch;
                d[((size_t)y * img->w + x) * img->c + ch] =
                    img->type == TS_U16 ? ((const uint16_t *)row)[i] : row[i];
            }
    return d;
}

static const char *const interps[] = { "nearest", "bilinear", "area", "bicubic", "auto" };
enum { N_INTERPS = 5 };

/* PSNR of `scale=f:interp=X` for each interp against the reference. */
static int measure(const char *path, double f, double psnr[N_INTERPS])
{
    ts_image in = { 0 };
    ts_err err = { 0 };
    double *src = NULL, *ref = NULL;
    int ok = 1;
    if (ts_image_load(path, NULL, &in, &err) != TS_OK) {
        CHECK_MSG(0, "%s", err.msg);
        return 0;
    }
    src = doubles_of(&in);
    for (int i = 0; i < N_INTERPS && ok; i++) {
        char text[64];
        ts_chain *chain = NULL;
        ts_image out = { 0 };
        double *got = NULL;
        snprintf(text, sizeof text, "scale=%g:interp=%s", f, interps[i]);
        ok = src && ts_chain_parse(text, &chain, &err) == TS_OK && ts_cpu_run(chain, &in, 0, 0, &out, &err) == TS_OK;
        CHECK_MSG(ok, "%s %s: %s", path, text, err.msg);
        if (ok && !ref) ref = qref_downscale(src, in.w, in.h, in.c, out.w, out.h);
        if (ok) got = doubles_of(&out);
        ok = ok && ref && got;
        if (ok) psnr[i] = qref_psnr(got, ref, (size_t)out.w * out.h * out.c, ts_type_max(out.type));
        free(got);
        ts_image_free(&out);
        ts_chain_free(chain);
    }
    free(src);
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

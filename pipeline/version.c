/* version.c - what this build of tilestream is made of: its version, the
 * codec libraries it runs with (their runtime versions, which can differ
 * from the headers it was built against), the optional parts built in, and
 * the device `--device auto` would take here. */
#include "tilestream.h"

#include <stdio.h> /* before jpeglib.h, which uses FILE */

#include <jpeglib.h>
#include <png.h>
#include <zlib.h>

#define STR_(x) #x
#define STR(x) STR_(x)

static void line(ts_line_fn fn, void *ctx, const char *key, const char *value)
{
    char buf[1600];
    snprintf(buf, sizeof buf, "%-10s %.1500s", key, value);
    fn(ctx, buf);
}

static void codec_lines(ts_line_fn fn, void *ctx)
{
    char buf[256];
    line(fn, ctx, "libpng", png_get_libpng_ver(NULL));
    line(fn, ctx, "zlib", zlibVersion());
#ifdef LIBJPEG_TURBO_VERSION
    snprintf(buf, sizeof buf, "libjpeg-turbo %s (libjpeg API %d)", STR(LIBJPEG_TURBO_VERSION), JPEG_LIB_VERSION);
#else
    snprintf(buf, sizeof buf, "libjpeg API %d", JPEG_LIB_VERSION);
#endif
    line(fn, ctx, "libjpeg", buf);
}

static void build_lines(ts_line_fn fn, void *ctx)
{
#ifdef TS_HAVE_CUDA
#ifdef TS_CUDA_ARCHS
    line(fn, ctx, "cuda", "kernels built for " TS_CUDA_ARCHS);
#else
    line(fn, ctx, "cuda", "kernels built");
#endif
#else
    line(fn, ctx, "cuda", "not built (CPU backend only)");
#endif
#ifdef TS_HAVE_NPP
    line(fn, ctx, "npp", "built (bench comparisons)");
#else
    line(fn, ctx, "npp", "not built");
#endif
#ifdef TS_HAVE_NVJPEG
    line(fn, ctx, "nvjpeg", "built (JPEG decode and encode on the GPU)");
#else
    line(fn, ctx, "nvjpeg", "not built");
#endif
#ifdef TS_HAVE_STB
    line(fn, ctx, "stb", "built (BMP, TGA and HDR output)");
#else
    line(fn, ctx, "stb", "not built (no BMP, TGA or HDR output)");
#endif
}

void ts_build_info(ts_line_fn fn, void *ctx)
{
    char name[256], buf[1400];
    fn(ctx, "tilestream " TS_VERSION_STRING);
    codec_lines(fn, ctx);
    build_lines(fn, ctx);
    ts_err err = {0};
    if (ts_gpu_probe(name, sizeof name, &err)) snprintf(buf, sizeof buf, "gpu: %.255s", name);
    else snprintf(buf, sizeof buf, "cpu (%.1300s)", err.msg[0] ? err.msg : "no CUDA device");
    line(fn, ctx, "auto", buf);
}

/* main.c - uses an installed tilestream through the public header alone, as
 * any program would: parses a chain and runs it on a small image, loads a
 * PNG and a JPEG (libpng and libjpeg through the library), writes a JPEG and
 * sees an out-of-range quality refused. Prints the version and the chain.
 * consumer PNG JPEG OUTDIR */
#include <tilestream.h>

#include <stdio.h>
#include <string.h>

static int fail(const char *what, const ts_err *err)
{
    fprintf(stderr, "%s: %s\n", what, err->msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: consumer PNG JPEG OUTDIR\n");
        return 2;
    }
    ts_err err = { 0 };
    ts_chain *chain = NULL;
    ts_image in = { 0 }, out = { 0 }, png = { 0 }, jpeg = { 0 };
    if (ts_chain_parse("gauss=1,rot90", &chain, &err) != TS_OK) return fail("chain", &err);
    if (ts_image_alloc(&in, 8, 5, 3, TS_U8, 0, NULL, &err) != TS_OK) return fail("alloc", &err);
    memset(in.data, 100, in.stride * (size_t)in.h);
    if (ts_cpu_run(chain, &in, 0, 0, &out, &err) != TS_OK) return fail("run", &err);
    int ok = out.w == 5 && out.h == 8 && out.data[0] == 100;

    if (ts_image_load(argv[1], NULL, &png, &err) != TS_OK) return fail(argv[1], &err);
    if (ts_image_load(argv[2], NULL, &jpeg, &err) != TS_OK) return fail(argv[2], &err);
    ok &= png.w > 0 && png.h > 0 && jpeg.w > 0 && jpeg.h > 0;

    char path[4096];
    snprintf(path, sizeof path, "%s/out.jpg", argv[3]);
    ts_save_opts so = { TS_FMT_UNKNOWN, TS_JPEG_QUALITY_MAX + 1, -1, 0 };
    ts_err range = { 0 };
    ok &= ts_image_save(path, &jpeg, &so, &range) == TS_E_ARG && strstr(range.msg, "--quality");
    so.quality = 0;   /* the default */
    if (ts_image_save(path, &jpeg, &so, &err) != TS_OK) return fail(path, &err);
    ts_image back = { 0 };
    if (ts_image_load(path, NULL, &back, &err) != TS_OK) return fail(path, &err);
    ok &= back.w == jpeg.w && back.h == jpeg.h;

    printf("%s %s %dx%d png %dx%d jpeg %dx%d %s\n", TS_VERSION_STRING, ts_chain_describe(chain), out.w, out.h,
           png.w, png.h, jpeg.w, jpeg.h, ts_status_name(TS_OK));
    ts_image_free(&in);
    ts_image_free(&out);
    ts_image_free(&png);
    ts_image_free(&jpeg);
    ts_image_free(&back);
    ts_chain_free(chain);
    return ok ? 0 : 1;
}

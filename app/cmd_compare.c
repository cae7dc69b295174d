/* cmd_compare.c - `tilestream compare`: the same chain through the GPU's
 * global-memory path and its texture path, against the CPU reference. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct diff { double max_abs, mean_abs, psnr; } diff;

static double channel(const ts_image *img, int x, int y, int ch)
{
    const unsigned char *row = img->data + (size_t)y * img->stride;
    size_t i = (size_t)x * (size_t)img->c + (size_t)ch;
    if (img->type == TS_U8) return row[i];
    if (img->type == TS_U16) return ((const uint16_t *)row)[i];
    return ((const float *)row)[i];
}

static diff compare_images(const ts_image *a, const ts_image *b)
{
    diff d = { 0, 0, INFINITY };
    if (a->w != b->w || a->h != b->h || a->c != b->c) { d.max_abs = INFINITY; return d; }
    double sum = 0, sq = 0, maxv = ts_type_max(a->type);
    for (int y = 0; y < a->h; y++)
        for (int x = 0; x < a->w; x++)
            for (int ch = 0; ch < a->c; ch++) {
                double e = fabs(channel(a, x, y, ch) - channel(b, x, y, ch));
                if (e > d.max_abs) d.max_abs = e;
                sum += e;
                sq += e * e;
            }
    double n = (double)a->w * a->h * a->c;
    d.mean_abs = sum / n;
    d.psnr = sq > 0 ? 10 * log10(maxv * maxv / (sq / n)) : INFINITY;
    return d;
}

/* Run chain on the GPU with one path: a warm-up run, then reps timed runs
 * whose stage events land in *trace. out gets a malloc'd copy of the
 * result, since the engine's pinned memory goes with the engine. */
static ts_status gpu_path(cli_opts *o, ts_path path, const ts_chain *chain, const ts_image *in,
                          ts_image *out, ts_trace **trace, int *reps_out, ts_err *err)
{
    ts_engine *e = NULL;
    ts_image result = { 0 };
    int reps = o->reps > 0 ? o->reps : 5;
    *trace = ts_trace_create();
    if (!*trace) return ts_err_set(err, TS_E_NOMEM, "out of memory");
    ts_engine_opts eo = { o->streams, o->tile_w, o->tile_h, path, *trace };
    ts_status st = ts_engine_create(&eo, &e, err);
    for (int r = 0; r <= reps && st == TS_OK; r++) { /* run 0 warms up */
        if (r == 1) ts_trace_clear(*trace);
        ts_image_free(&result);
        st = ts_gpu_run(e, chain, in, &result, err);
    }
    if (st == TS_OK) st = ts_image_clone(out, &result, err);
    ts_image_free(&result);
    if (e) ts_engine_destroy(e);
    *reps_out = reps;
    return st;
}

static void print_stages(const char *label, const ts_trace *t, int reps)
{
    ts_stage_stat st[64];
    int n = ts_trace_summary(t, st, 64);
    for (int i = 0; i < n; i++)
        if (strcmp(st[i].stage, "h2d") && strcmp(st[i].stage, "d2h"))
            printf("  %-8s %-22s %9.3f ms %9.1f GB/s\n", label, st[i].stage, st[i].busy_s * 1e3 / reps,
                   st[i].busy_s > 0 ? (double)st[i].bytes / 1e9 / st[i].busy_s : 0.0);
}

static int compare_one(cli_opts *o, const char *path, const char *chain_text)
{
    ts_err err = { 0 };
    ts_image in = { 0 }, ref = { 0 }, g = { 0 }, t = { 0 };
    ts_chain *chain = NULL;
    ts_trace *tg = NULL, *tt = NULL;
    ts_load_opts lo = { o->max_pixels, NULL, o->accept_damaged };
    int rc = EXIT_SOME_FAILED, reps = 1;
    if (ts_image_load(path, &lo, &in, &err) != TS_OK || ts_chain_parse(chain_text, &chain, &err) != TS_OK) goto done;
    if (ts_cpu_run(chain, &in, 0, 0, &ref, &err) != TS_OK) goto done;
    if (gpu_path(o, TS_PATH_GLOBAL, chain, &in, &g, &tg, &reps, &err) != TS_OK) goto done;
    if (gpu_path(o, TS_PATH_TEXTURE, chain, &in, &t, &tt, &reps, &err) != TS_OK) goto done;
    diff gt = compare_images(&g, &t), gr = compare_images(&g, &ref), tr = compare_images(&t, &ref);
    printf("%s: %dx%d x%d %d-bit -> %dx%d, chain %s\n", path, in.w, in.h, in.c, in.type * 8, g.w, g.h,
           ts_chain_describe(chain));
    printf("  per op, mean of %d runs (kernel time; the stage's bytes over it):\n", reps);
    print_stages("global", tg, reps);
    print_stages("texture", tt, reps);
    printf("  %-26s %10s %10s %8s\n", "difference", "max abs", "mean abs", "PSNR dB");
    printf("  %-26s %10.0f %10.4f %8.1f\n", "global vs texture", gt.max_abs, gt.mean_abs, gt.psnr);
    printf("  %-26s %10.0f %10.4f %8.1f\n", "global vs cpu reference", gr.max_abs, gr.mean_abs, gr.psnr);
    printf("  %-26s %10.0f %10.4f %8.1f\n", "texture vs cpu reference", tr.max_abs, tr.mean_abs, tr.psnr);
    rc = EXIT_ALL_OK;
done:
    if (rc != EXIT_ALL_OK) fprintf(stderr, "tilestream: %s%s%s\n", strstr(err.msg, path) ? "" : path,
                                   strstr(err.msg, path) ? "" : ": ", err.msg);
    ts_image_free(&in); ts_image_free(&ref); ts_image_free(&g); ts_image_free(&t);
    ts_chain_free(chain);
    ts_trace_free(tg);
    ts_trace_free(tt);
    return rc;
}

int cmd_compare(cli_opts *o)
{
    char name[160];
    ts_err err = { 0 };
    if (o->n_inputs == 0) {
        fprintf(stderr, "tilestream compare: no inputs (see `tilestream compare --help`)\n");
        return EXIT_USAGE;
    }
    if (!ts_gpu_probe(name, sizeof name, &err)) {
        fprintf(stderr, "tilestream compare: needs a CUDA device: %s\n", err.msg);
        return EXIT_USAGE;
    }
    printf("device: %s\n", name);
    const char *chain = o->ops ? o->ops : "scale=2,rotate=deg=10,scale=0.5";
    int failed = 0;
    for (int i = 0; i < o->n_inputs; i++) failed |= compare_one(o, o->inputs[i], chain) != EXIT_ALL_OK;
    return failed ? EXIT_SOME_FAILED : EXIT_ALL_OK;
}

/* cmd_compare.c - `tilestream compare`: every op of the chain that has a
 * texture path (the sampling ops; the plan says which) on every input
 * (files, and folders walked as `run` walks them), through the GPU's global-memory path and its texture path,
 * against the CPU reference. Each op gets as input what the chain before it
 * makes on the CPU, so both paths start from the same pixels. Per op: the
 * kernel time (median of --reps runs), GB/s, and max abs / mean abs / PSNR
 * between the paths and of each against the reference; --diff-out writes
 * heat maps, --html a self-contained page, --report the figures as JSON
 * (compare_report.c). */
#include "cli.h"
#include "compare_report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ------------------------------------------------------------ the chain */

/* What the chain's op k makes of in, on the CPU. */
static ts_status cpu_op(const ts_chain *chain, int k, const ts_image *in, ts_image *out, ts_err *err)
{
    ts_chain *op = NULL;
    ts_status st = ts_chain_op(chain, k, &op, err);
    if (st == TS_OK) st = ts_cpu_run(op, in, 0, 0, out, err);
    ts_chain_free(op);
    return st;
}

/* ------------------------------------------------------------ one path */

typedef struct gpu_path { ts_engine *engine; ts_trace *trace; } gpu_path;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Run the one-op chain on p: a warm-up, then reps timed runs; *ms gets the
 * median kernel time of the op, *gbps its bytes over that time; out a
 * malloc'd copy of the result (the engine's pinned memory stays with it). */
static ts_status time_path(gpu_path *p, const ts_chain *chain, const ts_image *in, int reps, ts_image *out,
                           double *ms, double *gbps, ts_err *err)
{
    double *t = malloc(sizeof(double) * (size_t)reps), bytes = 0;
    ts_image result = { 0 };
    ts_status st = t ? TS_OK : ts_err_set(err, TS_E_NOMEM, "out of memory");
    for (int r = 0; r <= reps && st == TS_OK; r++) { /* run 0 warms up */
        ts_trace_clear(p->trace);
        ts_image_free(&result);
        st = ts_gpu_run(p->engine, chain, in, &result, err);
        if (st != TS_OK || r == 0) continue;
        ts_stage_stat s[64];
        int n = ts_trace_summary(p->trace, s, 64);
        t[r - 1] = 0;
        for (int i = 0; i < n; i++)
            if (!strcmp(s[i].stage, "sample")) {
                t[r - 1] += s[i].busy_s;
                bytes = (double)s[i].bytes;
            }
    }
    if (st == TS_OK) {
        qsort(t, (size_t)reps, sizeof *t, by_value);
        double median = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        *ms = median * 1e3;
        *gbps = median > 0 ? bytes / 1e9 / median : 0;
        st = ts_image_clone(out, &result, err);
    }
    ts_image_free(&result);
    free(t);
    return st;
}

/* ------------------------------------------------------------ one op */

typedef struct compare_ctx {
    cli_opts *o;
    gpu_path global, texture;
    cmp_entry *entries;
    int n, cap;
    char device[160];
    char **op_text;           /* each op of the chain, as the plan describes it */
    ts_input_list files;      /* the inputs, walked as `run` walks them */
} compare_ctx;

static cmp_entry *new_entry(compare_ctx *c)
{
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        cmp_entry *e = realloc(c->entries, sizeof *e * (size_t)cap);
        if (!e) return NULL;
        c->entries = e;
        c->cap = cap;
    }
    memset(&c->entries[c->n], 0, sizeof c->entries[0]);
    return &c->entries[c->n++];
}

static ts_image *keep(ts_image *img, ts_err *err)
{
    ts_image *k = malloc(sizeof *k);
    if (!k) { ts_err_set(err, TS_E_NOMEM, "out of memory"); return NULL; }
    *k = *img;
    memset(img, 0, sizeof *img);
    return k;
}

static void free_kept(const ts_image *img)
{
    if (!img) return;
    ts_image_free((ts_image *)img);
    free((void *)img);
}

/* Pictures for the page: thumbnails of the input and both outputs, and the
 * heat map, made now so the full-size images need not stay in memory. */
static ts_status keep_pictures(compare_ctx *c, cmp_entry *e, const ts_image *in, const ts_image *g,
                               const ts_image *t, ts_err *err)
{
    ts_image a = { 0 }, b = { 0 }, d = { 0 }, m = { 0 };
    ts_status st = cmp_thumbnail(in, 320, &a, err);
    if (st == TS_OK) st = cmp_thumbnail(g, 320, &b, err);
    if (st == TS_OK) st = cmp_thumbnail(t, 320, &d, err);
    if (st == TS_OK) st = cmp_heatmap(g, t, 320, &m, NULL, err);
    if (st == TS_OK) {
        e->in_img = keep(&a, err);
        e->global_img = keep(&b, err);
        e->texture_img = keep(&d, err);
        e->diff_img = keep(&m, err);
    }
    ts_image_free(&a); ts_image_free(&b); ts_image_free(&d); ts_image_free(&m);
    (void)c;
    return st;
}

static void print_entry(const cmp_entry *e)
{
    printf("  %-28s %5dx%-5d -> %5dx%-5d  global %8.3f ms %7.1f GB/s  texture %8.3f ms %7.1f GB/s\n", e->op,
           e->in_w, e->in_h, e->out_w, e->out_h, e->global_ms, e->global_gbps, e->texture_ms, e->texture_gbps);
    printf("  %-28s %10s %10s %8s\n", "", "max abs", "mean abs", "PSNR dB");
    printf("  %-28s %10g %10.4f %8.2f\n", "  global vs texture", e->g_vs_t.max_abs, e->g_vs_t.mean_abs, e->g_vs_t.psnr);
    printf("  %-28s %10g %10.4f %8.2f\n", "  global vs cpu reference", e->g_vs_ref.max_abs, e->g_vs_ref.mean_abs,
           e->g_vs_ref.psnr);
    printf("  %-28s %10g %10.4f %8.2f\n", "  texture vs cpu reference", e->t_vs_ref.max_abs, e->t_vs_ref.mean_abs,
           e->t_vs_ref.psnr);
}

/* The op ops->v[k] on input `in` (what the ops before it make of the file):
 * CPU reference, both paths, figures, pictures. */
static ts_status compare_op(compare_ctx *c, const char *file, int file_index, const ts_chain *ops, int k,
                            const ts_image *in, ts_err *err)
{
    ts_image ref = { 0 }, g = { 0 }, t = { 0 };
    ts_chain *chain = NULL;
    int reps = c->o->reps > 0 ? c->o->reps : 9;
    cmp_entry *e = new_entry(c);
    if (!e) return ts_err_set(err, TS_E_NOMEM, "out of memory");
    ts_status st = ts_chain_op(ops, k, &chain, err);
    if (st == TS_OK) st = ts_cpu_run(chain, in, 0, 0, &ref, err);
    if (st == TS_OK) st = time_path(&c->global, chain, in, reps, &g, &e->global_ms, &e->global_gbps, err);
    if (st == TS_OK) st = time_path(&c->texture, chain, in, reps, &t, &e->texture_ms, &e->texture_gbps, err);
    if (st == TS_OK) {
        e->input = file;
        e->op = c->op_text[k];
        e->in_w = in->w; e->in_h = in->h; e->out_w = g.w; e->out_h = g.h; e->c = in->c; e->type = in->type;
        e->runs = reps;
        e->g_vs_t = cmp_diff_images(&g, &t);
        e->g_vs_ref = cmp_diff_images(&g, &ref);
        e->t_vs_ref = cmp_diff_images(&t, &ref);
        print_entry(e);
    }
    if (st == TS_OK && c->o->diff_out) {
        char path[4096], name[64];
        const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
        snprintf(name, sizeof name, "%.*s", (int)strcspn(c->op_text[k], "="), c->op_text[k]);
        snprintf(path, sizeof path, "%s/%03d-%s.op%d-%s.png", c->o->diff_out, file_index, base, k + 1, name);
        st = cmp_write_heatmap(path, &g, &t, err);
        if (st == TS_OK) printf("  heat map: %s\n", path);
    }
    if (st == TS_OK && c->o->html) st = keep_pictures(c, e, in, &g, &t, err);
    if (st != TS_OK) c->n--;  /* the entry was not filled */
    ts_image_free(&ref); ts_image_free(&g); ts_image_free(&t);
    ts_chain_free(chain);
    return st;
}

/* Every sampling op of the chain on one file. */
static int compare_file(compare_ctx *c, const char *file, int file_index, const ts_chain *ops)
{
    ts_err err = { 0 };
    ts_image in = { 0 };
    ts_load_opts lo = { c->o->max_pixels, NULL, c->o->accept_damaged, c->o->max_work };
    ts_status st = ts_image_load(file, &lo, &in, &err);
    if (st == TS_OK) printf("%s: %dx%d x%d %d-bit\n", file, in.w, in.h, in.c, 8 * (int)in.type);
    int n = ts_chain_length(ops);
    for (int k = 0; k < n && st == TS_OK; k++) {
        ts_image next = { 0 };
        if (ts_chain_op_has_texture_path(ops, k)) st = compare_op(c, file, file_index, ops, k, &in, &err);
        if (st == TS_OK && k + 1 < n) st = cpu_op(ops, k, &in, &next, &err);
        if (st == TS_OK && k + 1 < n) { ts_image_free(&in); in = next; }
    }
    ts_image_free(&in);
    if (st == TS_OK) return EXIT_ALL_OK;
    fprintf(stderr, "tilestream: %s%s%s\n", strstr(err.msg, file) ? "" : file, strstr(err.msg, file) ? "" : ": ",
            err.msg);
    return EXIT_SOME_FAILED;
}

static ts_status open_path(compare_ctx *c, gpu_path *p, ts_path path, ts_err *err)
{
    p->trace = ts_trace_create();
    if (!p->trace) return ts_err_set(err, TS_E_NOMEM, "out of memory");
    ts_engine_opts eo = { .streams = c->o->streams, .tile_w = c->o->tile_w, .tile_h = c->o->tile_h, .path = path, .trace = p->trace };
    return ts_engine_create(&eo, &p->engine, err);
}

static void close_path(gpu_path *p)
{
    if (p->engine) ts_engine_destroy(p->engine);
    ts_trace_free(p->trace);
}

static int write_outputs(compare_ctx *c, const char *chain)
{
    ts_err err = { 0 };
    int rc = EXIT_ALL_OK;
    if (c->o->html && cmp_write_html(c->o->html, c->device, chain, c->entries, c->n, &err) != TS_OK) {
        fprintf(stderr, "tilestream compare: %s\n", err.msg);
        rc = EXIT_USAGE;
    } else if (c->o->html) {
        printf("page: %s\n", c->o->html);
    }
    if (c->o->report && cmp_write_json(c->o->report, c->device, chain, c->entries, c->n, &err) != TS_OK) {
        fprintf(stderr, "tilestream compare: %s\n", err.msg);
        rc = EXIT_USAGE;
    } else if (c->o->report) {
        printf("report: %s\n", c->o->report);
    }
    return rc;
}

/* Each op's canonical text, for the table and the file names. */
static int describe_ops(compare_ctx *c, const ts_chain *ops)
{
    int n = ts_chain_length(ops);
    c->op_text = calloc((size_t)n + 1, sizeof *c->op_text);
    for (int k = 0; k < n && c->op_text; k++) {
        ts_chain *op = NULL;
        if (ts_chain_op(ops, k, &op, NULL) != TS_OK || !(c->op_text[k] = strdup(ts_chain_describe(op)))) {
            ts_chain_free(op);
            return 0;
        }
        ts_chain_free(op);
    }
    return c->op_text != NULL;
}

static int compare_inputs(compare_ctx *c, const ts_chain *ops)
{
    ts_input_list files = { 0 };
    ts_err err = { 0 };
    int failed = 0;
    if (ts_inputs_collect(c->o->inputs, c->o->n_inputs, NULL, &files, &err) != TS_OK) {
        fprintf(stderr, "tilestream compare: %s\n", err.msg);
        return EXIT_USAGE;
    }
    for (int i = 0; i < files.n; i++) {
        if (files.v[i].error) fprintf(stderr, "tilestream: %s\n", files.v[i].error), failed = 1;
        else failed |= compare_file(c, files.v[i].path, i + 1, ops) != EXIT_ALL_OK;
    }
    /* the entries keep the names of the files they compared */
    c->files = files;
    return failed ? EXIT_SOME_FAILED : EXIT_ALL_OK;
}

int cmd_compare(cli_opts *o)
{
    compare_ctx c;
    ts_err err = { 0 };
    ts_chain *ops = NULL;
    const char *chain = o->ops ? o->ops : ts_chain_compare_default();
    int rc = EXIT_USAGE;
    memset(&c, 0, sizeof c);
    c.o = o;
    if (o->n_inputs == 0) {
        fprintf(stderr, "tilestream compare: no inputs (see `tilestream compare --help`)\n");
        return EXIT_USAGE;
    }
    if (ts_chain_parse(chain, &ops, &err) != TS_OK) {
        fprintf(stderr, "tilestream compare: %s\n", err.msg);
        return EXIT_USAGE;
    }
    int sampling = 0;
    for (int k = 0; k < ts_chain_length(ops); k++) sampling += ts_chain_op_has_texture_path(ops, k);
    if (!sampling)
        fprintf(stderr, "tilestream compare: the chain has no op with a texture path (a sampling op: see `tilestream ops`)\n");
    else if (!ts_gpu_probe(c.device, sizeof c.device, &err))
        fprintf(stderr, "tilestream compare: compares the GPU's two paths, so it needs a CUDA device (%s).\n"
                "Without one, `tilestream run --device cpu --ops \"%s\" ...` applies the chain with the CPU\n"
                "reference, and `tilestream bench cpu` times the CPU ops.\n", err.msg, chain);
    else if (o->diff_out && mkdir(o->diff_out, 0777) != 0 && errno != EEXIST)
        fprintf(stderr, "tilestream compare: %s: cannot make the folder: %s\n", o->diff_out, strerror(errno));
    else if (!describe_ops(&c, ops))
        fprintf(stderr, "tilestream compare: out of memory\n");
    else if (open_path(&c, &c.global, TS_PATH_GLOBAL, &err) != TS_OK ||
             open_path(&c, &c.texture, TS_PATH_TEXTURE, &err) != TS_OK)
        fprintf(stderr, "tilestream compare: %s\n", err.msg);
    else {
        printf("device: %s\nchain: %s (each sampling op on what the ops before it make, on the CPU)\n", c.device,
               chain);
        int done = compare_inputs(&c, ops);
        rc = done == EXIT_USAGE ? done : write_outputs(&c, chain);
        if (rc == EXIT_ALL_OK && done == EXIT_SOME_FAILED) rc = EXIT_SOME_FAILED;
    }
    close_path(&c.global);
    close_path(&c.texture);
    for (int i = 0; i < c.n; i++) {
        free_kept(c.entries[i].in_img);
        free_kept(c.entries[i].global_img);
        free_kept(c.entries[i].texture_img);
        free_kept(c.entries[i].diff_img);
    }
    free(c.entries);
    for (int k = 0; c.op_text && k < ts_chain_length(ops); k++) free(c.op_text[k]);
    free(c.op_text);
    ts_inputs_free(&c.files);
    ts_chain_free(ops);
    return rc;
}

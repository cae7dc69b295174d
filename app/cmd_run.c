/* cmd_run.c - `tilestream run`: the batch job, its progress and its table. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int interrupted = 0;

static void on_sigint(int sig)
{
    (void)sig;
    if (interrupted) { /* a second Ctrl-C or SIGTERM: stop now, leaving no temporary file */
        ts_save_remove_temps();
        _exit(130);
    }
    interrupted = 1;
}

typedef struct progress {
    const cli_opts *o;
    int tty;
} progress;

static void on_image(void *ctx, const ts_image_result *r, int done, int total)
{
    progress *p = ctx;
    if (p->o->dry_run) {
        printf("%s -> %s\n", r->input, r->output);
        return;
    }
    if (r->status != TS_OK && !r->skipped) {
        if (p->tty && !p->o->quiet) fputs("\r\033[K", stderr);
        fprintf(stderr, "tilestream: FAILED %s\n", r->error);
    } else if (p->o->verbose) {
        if (r->skipped) fprintf(stderr, "[%d/%d] %s: exists, skipped\n", done, total, r->output);
        else fprintf(stderr, "[%d/%d] %s -> %s (%dx%d -> %dx%d, decode %.1f ms, ops %.1f ms, encode %.1f ms)\n",
                     done, total, r->input, r->output, r->w, r->h, r->out_w, r->out_h, r->decode_s * 1e3,
                     r->ops_s * 1e3, r->encode_s * 1e3);
    } else if (!p->tty && !p->o->quiet) { /* a log, not a terminal: plain lines */
        fprintf(stderr, "[%d/%d] %s%s\n", done, total, r->skipped ? r->output : r->input,
                r->skipped ? ": exists, skipped" : "");
    }
    if (p->tty && !p->o->quiet && !p->o->verbose) {
        int width = 30, filled = total ? done * width / total : width;
        fprintf(stderr, "\r[%.*s%*s] %d/%d", filled, "##############################", width - filled, "", done, total);
        if (done == total) fputs("\r\033[K", stderr);
        fflush(stderr);
    }
}

/* The share of the machine's peak a stage reached: transfers against the
 * pinned bus rates, kernels against the device copy, measured at the start
 * of the run (GPU runs only). Empty for CPU stages. */
/* "h2d" or "h2d gpu1" (a line per engine with --gpus) is stage "h2d". */
static int is_stage(const char *stage, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(stage, name, n) && (stage[n] == '\0' || stage[n] == ' ');
}

static void peak_share(const ts_batch_result *r, const ts_stage_stat *st, char *buf, size_t n)
{
    double gbps = st->busy_s > 0 ? (double)st->bytes / 1e9 / st->busy_s : 0, peak = 0;
    const char *of = "";
    buf[0] = '\0';
    if (r->peak.d2d_gbps <= 0) return;
    if (is_stage(st->stage, "h2d")) { peak = r->peak.h2d_gbps; of = "of H2D"; }
    else if (is_stage(st->stage, "d2h")) { peak = r->peak.d2h_gbps; of = "of D2H"; }
    else if (!is_stage(st->stage, "decode") && !is_stage(st->stage, "encode") && !is_stage(st->stage, "stage"))
        { peak = r->peak.d2d_gbps; of = "of copy"; }
    if (peak > 0) snprintf(buf, n, "%5.1f%% %s", 100 * gbps / peak, of);
}

static void print_table(const ts_batch_result *r, const ts_trace *t)
{
    ts_stage_stat st[64];
    int n = ts_trace_summary(t, st, 64);
    double busy = 0;
    char share[40];
    if (r->peak.d2d_gbps > 0)
        printf("measured now: pinned H2D %.1f GB/s, D2H %.1f GB/s, device copy %.0f GB/s\n", r->peak.h2d_gbps,
               r->peak.d2h_gbps, r->peak.d2d_gbps);
    printf("%-18s %7s %11s %11s %9s%s\n", "stage", "count", "busy ms", "MB", "GB/s", r->peak.d2d_gbps > 0 ? "  share" : "");
    for (int i = 0; i < n; i++) {
        busy += st[i].busy_s;
        peak_share(r, &st[i], share, sizeof share);
        printf("%-18s %7d %11.3f %11.1f %9.2f%s%s\n", st[i].stage, st[i].count, st[i].busy_s * 1e3,
               (double)st[i].bytes / 1e6, st[i].busy_s > 0 ? (double)st[i].bytes / 1e9 / st[i].busy_s : 0.0,
               share[0] ? "  " : "", share);
    }
    double span = ts_trace_span(t);
    for (int k = 0; r->n_engines > 1 && k < r->n_engines; k++)
        printf("engine %d (device %d): %d images\n", k, r->engine_device[k], r->engine_images[k]);
    printf("memory: %.0f MB of %.0f MB budget at most, %d images in flight at most%s", (double)r->memory_peak / 1e6,
           (double)r->memory_budget / 1e6, r->max_in_flight, r->n_engines ? "" : "\n");
    if (r->n_engines)
        printf("; decoded into pinned memory %d, pageable %d\n", r->decoded_pinned, r->decoded_pageable);
    if (r->shrunk_on_load) printf("shrink on load: %d JPEGs decoded at reduced size\n", r->shrunk_on_load);
    if (r->codec_note[0])
        printf("jpeg codec: %s; nvJPEG decoded %d, encoded %d\n", r->codec_note, r->gpu_decoded, r->gpu_encoded);
    printf("%d images (%d ok, %d failed, %d skipped) in %.2f s: %.1f images/s, %.1f MP/s, "
           "overlap efficiency %.2f\n",
           r->n_images, r->n_ok, r->n_failed, r->n_skipped, r->wall_s, r->wall_s > 0 ? r->n_ok / r->wall_s : 0,
           r->wall_s > 0 ? (double)r->pixels_in / 1e6 / r->wall_s : 0, span > 0 ? busy / span : 0);
}

int cmd_run(cli_opts *o)
{
    if (o->n_inputs == 0) {
        fprintf(stderr, "tilestream run: no inputs (see `tilestream run --help`)\n");
        return EXIT_USAGE;
    }
    if (!o->outdir) {
        fprintf(stderr, "tilestream run: no output folder: give -o OUTDIR\n");
        return EXIT_USAGE;
    }
    ts_trace *trace = ts_trace_create();
    if (!trace) {
        fprintf(stderr, "tilestream run: out of memory\n");
        return EXIT_USAGE;
    }
    progress p = { o, isatty(2) };
    ts_batch_opts bo;
    memset(&bo, 0, sizeof bo);
    bo.inputs = o->inputs;
    bo.n_inputs = o->n_inputs;
    bo.outdir = o->outdir;
    bo.chain_text = o->ops ? o->ops : "";
    bo.device = o->device;
    bo.path = o->path;
    bo.streams = o->streams;
    bo.tile_w = o->tile_w;
    bo.tile_h = o->tile_h;
    bo.jobs = o->jobs;
    bo.format = o->format;
    bo.quality = o->quality;
    bo.png_level = o->png_level;
    bo.skip_existing = o->skip_existing;
    bo.overwrite = o->overwrite;
    bo.dry_run = o->dry_run;
    bo.keep_orientation = o->keep_orientation;
    bo.max_pixels = o->max_pixels;
    bo.accept_damaged = o->accept_damaged;
    bo.memory = o->memory;
    bo.gpus = o->gpus;
    bo.codec = o->codec;
    bo.no_shrink_on_load = o->no_shrink_on_load;
    bo.trace = trace;
    bo.stop = &interrupted;
    bo.on_image = on_image;
    bo.ctx = &p;
    signal(SIGINT, on_sigint);
    signal(SIGTERM, on_sigint);

    ts_batch_result r;
    ts_err err = { 0 };
    ts_status st = ts_batch_run(&bo, &r, &err);
    int fatal = st != TS_OK && (r.n_images == 0 || st == TS_E_DEVICE || st == TS_E_INTERRUPTED);
    if (r.n_images > 0 && !o->quiet && !o->dry_run) {
        printf("device: %s (%s)\n", r.device, r.device_note);
        print_table(&r, trace);
    }
    ts_err werr = { 0 };
    if (o->report && r.n_images > 0 && ts_report_write(o->report, &r, trace, bo.chain_text, &werr) != TS_OK)
        fprintf(stderr, "tilestream: %s\n", werr.msg), fatal = 1;
    if (o->trace && r.n_images > 0 && ts_trace_write_chrome(trace, o->trace, &werr) != TS_OK)
        fprintf(stderr, "tilestream: %s\n", werr.msg), fatal = 1;
    if (o->timeline && r.n_images > 0 && ts_trace_write_svg(trace, o->timeline, &werr) != TS_OK)
        fprintf(stderr, "tilestream: %s\n", werr.msg), fatal = 1;
    if (st != TS_OK) fprintf(stderr, "tilestream: %s\n", err.msg);
    int failed = r.n_failed;
    ts_batch_result_free(&r);
    ts_trace_free(trace);
    if (fatal) return EXIT_USAGE;
    return failed ? EXIT_SOME_FAILED : EXIT_ALL_OK;
}

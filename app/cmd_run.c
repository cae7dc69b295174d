/* cmd_run.c - `tilestream run`: the checks before work, the batch job, its
 * progress, its reports and its table. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* The first SIGINT or SIGTERM asks for a clean stop: the images in flight
 * are finished, the rest are not started. A second one stops at once,
 * removing the temporaries of the saves in flight. SIGTERM is what
 * `timeout`, systemd and Kubernetes send before they kill: its clean stop
 * gets TERM_GRACE_S seconds, then ends like a second signal. The exit code
 * is 128 + the signal's number. */
enum { TERM_GRACE_S = 10 };
static volatile int interrupted = 0;
static volatile sig_atomic_t stop_signal = 0;

static void on_stop_signal(int sig)
{
    if (interrupted) {
        ts_save_remove_temps();
        _exit(128 + (stop_signal ? stop_signal : sig));
    }
    interrupted = 1;
    stop_signal = sig;
    if (sig == SIGTERM) alarm(TERM_GRACE_S);
}

static void on_grace_over(int sig)
{
    (void)sig;
    ts_save_remove_temps();
    _exit(128 + SIGTERM);
}

static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_stop_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sa.sa_handler = on_grace_over;
    sigaction(SIGALRM, &sa, NULL);
}

/* ------------------------------------------------------------ progress */

typedef struct progress {
    const cli_opts *o;
    int tty;
    FILE *lines;                /* --report-lines, or NULL */
    int lines_failed;
    double t0;
    int processed;              /* images done with work (not skipped or refused at planning) */
    double megapixels;
    char current[256];          /* the image being taken up last */
} progress;

static int terminal_width(void)
{
    struct winsize ws;
    return ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40 ? ws.ws_col : 80;
}

static void format_eta(double s, char *buf, size_t n)
{
    if (s < 0) snprintf(buf, n, "--");
    else if (s < 60) snprintf(buf, n, "%.0fs", s);
    else if (s < 3600) snprintf(buf, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else snprintf(buf, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

/* The one updating line on a terminal: done/total, rates, ETA, the file. */
static void draw_line(progress *p, int done, int total)
{
    double dt = ts_now() - p->t0;
    double ips = dt > 0 ? p->processed / dt : 0, mps = dt > 0 ? p->megapixels / dt : 0;
    char eta[32], line[512];
    format_eta(p->processed > 0 && ips > 0 ? (total - done) / ips : -1, eta, sizeof eta);
    int n = snprintf(line, sizeof line, "%d/%d  %.1f images/s  %.1f MP/s  ETA %s  ", done, total, ips, mps, eta);
    int width = terminal_width() - 1, room = width - n;
    const char *file = p->current;
    size_t flen = strlen(file);
    if (room > 3 && (int)flen > room) { file += flen - (size_t)(room - 3); fprintf(stderr, "\r\033[K%s...%s", line, file); }
    else if (room > 0) fprintf(stderr, "\r\033[K%s%.*s", line, room, file);
    else fprintf(stderr, "\r\033[K%.*s", width, line);
    fflush(stderr);
}

static void clear_line(progress *p)
{
    if (p->tty && !p->o->quiet) fputs("\r\033[K", stderr);
}

static void on_start(void *ctx, const ts_batch_result *r)
{
    progress *p = ctx;
    p->t0 = ts_now();
    if (p->o->quiet) return;
    fprintf(stderr, "tilestream: %d image%s on %s (%s)%s\n", r->n_images, r->n_images == 1 ? "" : "s", r->device,
            r->device_note, p->o->dry_run ? ", dry run: nothing is written" : "");
    if (p->tty && !p->o->dry_run) draw_line(p, 0, r->n_images);
}

static void on_image_begin(void *ctx, const ts_image_result *r, int done, int total)
{
    progress *p = ctx;
    snprintf(p->current, sizeof p->current, "%s", r->input);
    if (p->tty && !p->o->quiet && !p->o->dry_run) draw_line(p, done, total);
}

static void write_report_line(progress *p, const ts_image_result *r)
{
    char *json = ts_report_image_json(r);
    if (!json || fprintf(p->lines, "%s\n", json) < 0 || fflush(p->lines) != 0) p->lines_failed = 1;
    free(json);
}

static void on_image(void *ctx, const ts_image_result *r, int done, int total)
{
    progress *p = ctx;
    const cli_opts *o = p->o;
    int failed = r->status != TS_OK && !r->skipped;
    if (!failed && !r->skipped && !o->dry_run) {
        p->processed++;
        p->megapixels += (double)r->w * r->h / 1e6;
    }
    if (p->lines && !o->dry_run) write_report_line(p, r);
    if (!failed && r->warning[0]) {
        clear_line(p);
        fprintf(stderr, "tilestream: warning: %s: %s\n", r->input, r->warning);
    }
    if (failed && r->not_started) {
        return; /* never begun (Ctrl-C, a device error): the last lines say how many were done, and why */
    } else if (failed) {
        clear_line(p);
        fprintf(stderr, "tilestream: %s %s\n", o->dry_run ? "would refuse" : "FAILED", r->error);
    } else if (o->dry_run) {
        if (r->skipped) { if (!o->quiet) printf("skip %s (exists)\n", r->output); }
        else printf("%s -> %s\n", r->input, r->output);
        return;
    } else if (o->verbose) {
        clear_line(p);
        if (r->skipped) fprintf(stderr, "[%d/%d] %s: exists, skipped\n", done, total, r->output);
        else fprintf(stderr, "[%d/%d] %s -> %s (%dx%d -> %dx%d on the %s, decode %.1f ms, ops %.1f ms, encode %.1f ms)\n",
                     done, total, r->input, r->output, r->w, r->h, r->out_w, r->out_h, r->on_gpu ? "GPU" : "CPU",
                     r->decode_s * 1e3, r->ops_s * 1e3, r->encode_s * 1e3);
    } else if (!p->tty && !o->quiet) { /* a log, not a terminal: plain lines */
        fprintf(stderr, "[%d/%d] %s%s\n", done, total, r->skipped ? r->output : r->input,
                r->skipped ? ": exists, skipped" : "");
    }
    if (p->tty && !o->quiet && !o->dry_run) {
        if (done == total) clear_line(p);
        else draw_line(p, done, total);
    }
}

/* ------------------------------------------------------------ the table */

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

/* GB/s of a stage; "-" where it moved no bytes or took no time (a rate of
 * 0.00 there would read as a measurement). */
static const char *stage_rate(const ts_stage_stat *st, char *buf, size_t n)
{
    if (st->bytes == 0 || st->busy_s <= 0) return "-";
    double gbps = (double)st->bytes / 1e9 / st->busy_s;
    snprintf(buf, n, gbps < 0.01 ? "%.4f" : "%.2f", gbps);
    return buf;
}

/* " name a-b" for a phase that happened (seconds from the program's start). */
static void print_span(const char *name, const double *v)
{
    if (v[0] >= 0) printf(" %s %.3f-%.3f,", name, v[0], v[1]);
}

/* Where the time went, exec to exit, and the backend of the images. */
static void print_phases(const ts_batch_result *r)
{
    const ts_run_phases *p = &r->phases;
    printf("phases (s from the start):");
    print_span("program", p->program);
    print_span("inputs", p->inputs);
    print_span("work", p->work);
    print_span("teardown", p->teardown);
    if (p->first_image >= 0) printf(" first image %.3f, last %.3f", p->first_image, p->last_image);
    printf("\n");
    if (p->gpu_probe[0] < 0 && !r->gpu_note[0]) return;
    printf("gpu start:");
    print_span("devices", p->gpu_probe);
    print_span("engines", p->gpu_engines);
    print_span("warm-up", p->gpu_warmup);
    print_span("rates", p->gpu_rates);
    print_span("nvJPEG", p->nvjpeg);
    printf(" %s; images on the GPU %d, on the CPU %d\n", r->gpu_note[0] ? r->gpu_note : "ready", r->n_on_gpu,
           r->n_on_cpu);
}

static void print_table(const ts_batch_result *r, const ts_trace *t)
{
    ts_stage_stat st[64];
    int n = ts_trace_summary(t, st, 64);
    double busy = 0;
    char share[40], gbps[32];
    if (r->peak.d2d_gbps > 0)
        printf("measured now: pinned H2D %.1f GB/s, D2H %.1f GB/s, device copy %.0f GB/s\n", r->peak.h2d_gbps,
               r->peak.d2h_gbps, r->peak.d2d_gbps);
    printf("%-18s %7s %11s %11s %9s%s\n", "stage", "count", "busy ms", "MB", "GB/s", r->peak.d2d_gbps > 0 ? "  share" : "");
    for (int i = 0; i < n; i++) {
        busy += st[i].busy_s;
        peak_share(r, &st[i], share, sizeof share);
        printf("%-18s %7d %11.3f %11.1f %9s%s%s\n", st[i].stage, st[i].count, st[i].busy_s * 1e3,
               (double)st[i].bytes / 1e6, stage_rate(&st[i], gbps, sizeof gbps), share[0] ? "  " : "", share);
    }
    double span = ts_trace_span(t);
    for (int k = 0; r->n_engines > 1 && k < r->n_engines; k++)
        printf("engine %d (device %d): %d images\n", k, r->engine_device[k], r->engine_images[k]);
    printf("memory: %.0f MB of %.0f MB budget at most, %d images in flight at most%s", (double)r->memory_peak / 1e6,
           (double)r->memory_budget / 1e6, r->max_in_flight, r->n_engines ? "" : "\n");
    if (r->n_engines)
        printf("; decoded into pinned memory %d, pageable %d; %.0f MB pinned\n", r->decoded_pinned,
               r->decoded_pageable, (double)r->pinned_bytes / 1e6);
    if (r->shrunk_on_load) printf("shrink on load: %d JPEGs decoded at reduced size\n", r->shrunk_on_load);
    if (r->codec_note[0])
        printf("jpeg codec: %s; nvJPEG decoded %d, encoded %d\n", r->codec_note, r->gpu_decoded, r->gpu_encoded);
    printf("%d image%s (%d ok, %d failed, %d skipped, %d not started) in %.2f s: %.1f images/s, %.1f MP/s\n",
           r->n_images, r->n_images == 1 ? "" : "s", r->n_ok, r->n_failed, r->n_skipped, r->n_not_started, r->wall_s,
           r->wall_s > 0 ? r->n_ok / r->wall_s : 0, r->wall_s > 0 ? (double)r->pixels_in / 1e6 / r->wall_s : 0);
    printf("time: set-up %.2f s (inputs, device, engines), work %.2f s, finishing %.2f s (releasing codecs, "
           "engines, memory)\n", r->setup_s, r->work_s, r->finish_s);
    print_phases(r);
    if (span > 0)
        printf("overlap efficiency %.2f: the stages' busy time added up (%.3f s) over the time from the first "
               "stage's start to the last one's end (%.3f s); above 1 means stages ran at the same time\n",
               busy / span, busy, span);
}

/* ------------------------------------------------------------ checks */

/* Options that cannot change this run: a warning that names why, rather
 * than silence (the run still goes ahead). */
static void warn_unused_options(const cli_opts *o)
{
    int jpeg = o->format == TS_FMT_UNKNOWN || o->format == TS_FMT_JPEG;
    int png = o->format == TS_FMT_UNKNOWN || o->format == TS_FMT_PNG;
#ifdef TS_HAVE_CUDA
    const char *no_gpu = o->device == TS_DEVICE_CPU ? "--device cpu" : NULL;
#else
    const char *no_gpu = "this build has no CUDA";
#endif
    if (o->quality && !jpeg)
        fprintf(stderr, "tilestream: warning: --quality has no effect: --format %s writes no JPEG\n", ts_format_name(o->format));
    if (o->png_level >= 0 && !png)
        fprintf(stderr, "tilestream: warning: --png-level has no effect: --format %s writes no PNG\n", ts_format_name(o->format));
    if (no_gpu && (o->streams || o->path == TS_PATH_TEXTURE || o->gpus))
        fprintf(stderr, "tilestream: warning: %s has no effect on the CPU (%s)\n",
                o->streams ? "--streams" : o->path == TS_PATH_TEXTURE ? "--path" : "--gpus", no_gpu);
}

/* Seconds since this process began (Linux: its start time in /proc against
 * the uptime, to the clock tick); 0 where unknown. */
static double seconds_since_exec(void)
{
    double uptime = 0;
    unsigned long long start = 0;
    char buf[1024];
    FILE *f = fopen("/proc/uptime", "r");
    if (!f) return 0;
    int ok = fscanf(f, "%lf", &uptime) == 1;
    fclose(f);
    if (!ok || !(f = fopen("/proc/self/stat", "r"))) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* field 22, counted after the command name's closing parenthesis (field 2 may hold spaces) */
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++) p = strchr(p + 1, ' ');
    long tick = sysconf(_SC_CLK_TCK);
    if (!p || tick <= 0 || sscanf(p + 1, "%llu", &start) != 1) return 0;
    double since = uptime - (double)start / (double)tick;
    return since > 0 && since < 60 ? since : 0;
}

static void fill_batch_opts(const cli_opts *o, ts_batch_opts *bo)
{
    memset(bo, 0, sizeof *bo);
    bo->inputs = o->inputs;
    bo->n_inputs = o->n_inputs;
    bo->outdir = o->outdir;
    bo->chain_text = o->ops ? o->ops : "";
    bo->device = o->device;
    bo->path = o->path;
    bo->streams = o->streams;
    bo->tile_w = o->tile_w;
    bo->tile_h = o->tile_h;
    bo->jobs = o->jobs;
    bo->format = o->format;
    bo->quality = o->quality;
    bo->png_level = o->png_level;
    bo->skip_existing = o->skip_existing;
    bo->overwrite = o->replace_input;
    bo->dry_run = o->dry_run;
    bo->keep_orientation = o->keep_orientation;
    bo->max_pixels = o->max_pixels;
    bo->accept_damaged = o->accept_damaged;
    bo->max_work = o->max_work;
    bo->background = o->background;
    bo->name_template = o->name_template;
    bo->shard.count = 1;
    bo->memory = o->memory;
    bo->gpus = o->gpus;
    bo->codec = o->codec;
    bo->no_shrink_on_load = o->no_shrink_on_load;
    bo->process_start = ts_now() - seconds_since_exec();
    bo->background_release = 1;   /* the process leaves with _exit (cmd_run) and the system takes it all back */
    /* the rates take the GPU's start a few tens of ms: measured only where
     * the stage table or the report shows them */
    bo->skip_rates = !(o->verbose || o->stats || o->report);
}

/* Write --report, --trace and --timeline; 0 when one failed (each named). */
static int write_reports(const cli_opts *o, const ts_batch_opts *bo, const ts_batch_result *r, const ts_trace *trace)
{
    ts_err werr = { 0 };
    int ok = 1;
    if (o->dry_run || r->n_images == 0) return 1;
    if (o->report && ts_report_write(o->report, r, trace, bo, o->argc, o->argv, &werr) != TS_OK)
        fprintf(stderr, "tilestream: %s\n", werr.msg), ok = 0;
    if (o->trace && ts_trace_write_chrome(trace, o->trace, &werr) != TS_OK)
        fprintf(stderr, "tilestream: %s\n", werr.msg), ok = 0;
    if (o->timeline && ts_trace_write_svg(trace, o->timeline, &werr) != TS_OK)
        fprintf(stderr, "tilestream: %s\n", werr.msg), ok = 0;
    return ok;
}

static int run_batch(cli_opts *o, ts_batch_opts *bo, progress *p, ts_trace *trace)
{
    ts_batch_result r;
    ts_err err = { 0 };
    ts_status st = ts_batch_run(bo, &r, &err);
    clear_line(p);
    int fatal = st != TS_OK && (r.n_images == 0 || st == TS_E_DEVICE);
    if (r.n_images > 0 && !o->quiet && !o->dry_run && (o->verbose || o->stats)) {
        printf("device: %s (%s)\n", r.device, r.device_note);
        print_table(&r, trace);
    } else if (r.n_images > 0 && !o->quiet && !o->dry_run) {
        /* one line; the stage table with -v or --stats, everything in --report */
        printf("%d image%s: %d done, %d failed, %d skipped", r.n_images, r.n_images == 1 ? "" : "s", r.n_ok,
               r.n_failed, r.n_skipped);
        if (r.n_not_started) printf(", %d not started", r.n_not_started);
        printf(", in %.2f s on %s", r.wall_s, r.device);
        if (r.n_on_gpu > 0 && r.n_on_cpu > 0) printf(" (%d on the GPU, %d on the CPU)", r.n_on_gpu, r.n_on_cpu);
        printf("\n");
    }
    if (!write_reports(o, bo, &r, trace)) fatal = 1;
    if (p->lines_failed) fprintf(stderr, "tilestream: --report-lines %s: cannot write\n", o->report_lines), fatal = 1;
    if (st != TS_OK) fprintf(stderr, "tilestream: %s\n", err.msg);
    if (r.flattened > 0 && !o->quiet)
        fprintf(stderr, "tilestream: warning: %d image%s with transparency written to a format without it: "
                "composited onto %s (--background)\n", r.flattened, r.flattened == 1 ? "" : "s",
                o->background ? o->background : "white");
    int failed = r.n_failed;
    ts_batch_result_free(&r);
    if (st == TS_E_INTERRUPTED) return EXIT_INTERRUPTED;
    if (fatal) return EXIT_USAGE;
    return failed ? EXIT_SOME_FAILED : EXIT_ALL_OK;
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
    ts_batch_opts bo;
    fill_batch_opts(o, &bo);
    ts_err err = { 0 };
    if (o->shard && ts_shard_parse(o->shard, &bo.shard, NULL, &err) != TS_OK) {
        fprintf(stderr, "tilestream run: %s\n", err.msg);
        return EXIT_USAGE;
    }
    if (!o->quiet) warn_unused_options(o);
    progress p = { .o = o, .tty = isatty(2), .t0 = ts_now() };
    if (o->report_lines && !o->dry_run && !(p.lines = fopen(o->report_lines, "w"))) {
        fprintf(stderr, "tilestream run: --report-lines %s: %s\n", o->report_lines, strerror(errno));
        return EXIT_USAGE;
    }
    ts_trace *trace = ts_trace_create();
    if (!trace) {
        fprintf(stderr, "tilestream run: out of memory\n");
        if (p.lines) fclose(p.lines);
        return EXIT_USAGE;
    }
    if (bo.shard.count > 1 && !o->quiet)
        fprintf(stderr, "tilestream: shard %d of %d (%s)\n", bo.shard.index, bo.shard.count, bo.shard.source);
    bo.trace = trace;
    bo.stop = &interrupted;
    bo.on_image = on_image;
    bo.on_start = on_start;
    bo.on_image_begin = on_image_begin;
    bo.ctx = &p;
    catch_stop_signals();
    int rc = run_batch(o, &bo, &p, trace);
    if (rc == EXIT_INTERRUPTED && stop_signal) rc = 128 + stop_signal;
    if (p.lines && fclose(p.lines) != 0 && rc != EXIT_INTERRUPTED) {
        fprintf(stderr, "tilestream: --report-lines %s: cannot write\n", o->report_lines);
        rc = EXIT_USAGE;
    }
    ts_trace_free(trace);
    /* Everything is written. A GPU start that the job did not wait for, or
     * an engine being released, may still be running, and the CUDA
     * runtime's exit handlers must not race it; nor is its teardown of the
     * contexts worth waiting for: the system takes all of it back. */
    if (ts_gpu_threads_pending() || ts_gpu_used()) {
        fflush(NULL);
        _exit(rc);
    }
    return rc;
}

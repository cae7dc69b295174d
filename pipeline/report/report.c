/* report.c - the --report JSON (the run, its options, every stage, every
 * image) and the one-line image objects of --report-lines. The schema is
 * docs/REPORT.md. Times are in seconds everywhere (keys ending in _s);
 * sizes in bytes. File names are bytes, not always UTF-8: a byte that is
 * not part of a valid UTF-8 sequence is written as \u00XX (its Latin-1
 * reading), so the JSON is valid whatever the name. */
#include "tilestream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPORT_SCHEMA 2

/* Length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one:
 * overlong forms, surrogates and code points past U+10FFFF are invalid. */
static int utf8_sequence(const unsigned char *s)
{
    unsigned c = s[0];
    int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    if (c < 0xc2 || c > 0xf4) return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (c == 0xe0 && s[1] < 0xa0) return 0;           /* overlong */
    if (c == 0xed && s[1] >= 0xa0) return 0;          /* surrogates */
    if (c == 0xf0 && s[1] < 0x90) return 0;           /* overlong */
    if (c == 0xf4 && s[1] >= 0x90) return 0;          /* past U+10FFFF */
    return n;
}

/* A byte that is not part of valid UTF-8 (a Latin-1 file name, say) is
 * written as the lone surrogate U+DC00 + byte, as Python's surrogateescape
 * does (PEP 383): every name round-trips to its exact bytes. */
void ts_json_string(FILE *f, const char *text)
{
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    fputc('"', f);
    while (*s) {
        unsigned ch = *s;
        int n;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch == '\n') fputs("\\n", f);
        else if (ch == '\t') fputs("\\t", f);
        else if (ch < 0x20 || ch == 0x7f) fprintf(f, "\\u%04x", ch);
        else if (ch < 0x80) fputc((int)ch, f);
        else if ((n = utf8_sequence(s)) > 0) { fwrite(s, 1, (size_t)n, f); s += n; continue; }
        else fprintf(f, "\\u%04x", 0xdc00 + ch);
        s++;
    }
    fputc('"', f);
}

static double rate(double amount, double seconds) { return seconds > 0 ? amount / seconds : 0; }

static void write_stages(FILE *f, const ts_trace *t)
{
    ts_stage_stat st[64];
    int n = t ? ts_trace_summary(t, st, 64) : 0;
    fputs("  \"stages\": [", f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s\n    {\"stage\": ", i ? "," : "");
        ts_json_string(f, st[i].stage);
        fprintf(f, ", \"count\": %d, \"busy_s\": %.6f, \"bytes\": %llu, \"GBps\": ", st[i].count, st[i].busy_s,
                (unsigned long long)st[i].bytes);
        if (st[i].bytes > 0 && st[i].busy_s > 0) fprintf(f, "%.3f}", rate((double)st[i].bytes / 1e9, st[i].busy_s));
        else fputs("null}", f);
    }
    fputs(n ? "\n  ],\n" : "],\n", f);
}

static void write_image(FILE *f, const ts_image_result *im)
{
    const char *status = im->skipped ? "skipped" : im->status == TS_OK ? "ok" : "failed";
    fprintf(f, "{\"index\": %d, \"input\": ", im->index);
    ts_json_string(f, im->input);
    fputs(", \"output\": ", f);
    ts_json_string(f, im->output);
    fprintf(f, ", \"status\": \"%s\"", status);
    if (im->status == TS_OK && !im->skipped) fprintf(f, ", \"backend\": \"%s\"", im->on_gpu ? "gpu" : "cpu");
    if (im->status != TS_OK && !im->skipped) {
        fprintf(f, ", \"error_kind\": \"%s\", \"error\": ", ts_status_name(im->status));
        ts_json_string(f, im->error);
    } else if (im->warning[0]) {
        fputs(", \"warning\": ", f);
        ts_json_string(f, im->warning);
    }
    fprintf(f, ", \"width\": %d, \"height\": %d, \"channels\": %d, \"bits\": %d, \"out_width\": %d, \"out_height\": %d",
            im->w, im->h, im->c, im->w ? (int)im->type * 8 : 0, im->out_w, im->out_h);
    fprintf(f, ", \"decode_s\": %.6f, \"ops_s\": %.6f, \"encode_s\": %.6f, \"in_bytes\": %llu, \"out_bytes\": %llu}",
            im->decode_s, im->ops_s, im->encode_s, (unsigned long long)im->in_bytes,
            (unsigned long long)im->out_bytes);
}

char *ts_report_image_json(const ts_image_result *im)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    write_image(f, im);
    if (fclose(f) != 0) { free(buf); return NULL; }
    return buf;
}

static const char *device_name(ts_device d) { return d == TS_DEVICE_CPU ? "cpu" : d == TS_DEVICE_GPU ? "gpu" : "auto"; }

/* The options the run went by, defaults resolved where the library knows them. */
static void write_options(FILE *f, const ts_batch_opts *o)
{
    fputs("  \"options\": {\"ops\": ", f);
    ts_json_string(f, o->chain_text);
    fputs(", \"outdir\": ", f);
    ts_json_string(f, o->outdir);
    fputs(", \"name\": ", f);
    if (o->name_template) ts_json_string(f, o->name_template);
    else fputs("null", f);
    fprintf(f, ",\n              \"device\": \"%s\", \"path\": \"%s\", \"streams\": %d, \"tile\": [%d, %d], \"jobs\": %d,",
            device_name(o->device), o->path == TS_PATH_TEXTURE ? "texture" : "global", o->streams > 0 ? o->streams : TS_STREAMS_DEFAULT,
            o->tile_w, o->tile_h, o->jobs);
    fprintf(f, "\n              \"format\": \"%s\", \"quality\": %d, \"png_level\": %d,",
            o->format == TS_FMT_UNKNOWN ? "same" : ts_format_name(o->format), o->quality > 0 ? o->quality : TS_JPEG_QUALITY_DEFAULT,
            o->png_level >= 0 ? o->png_level : TS_PNG_LEVEL_DEFAULT);
    fprintf(f, "\n              \"skip_existing\": %s, \"replace_input\": %s, \"dry_run\": %s, \"keep_orientation\": %s,",
            o->skip_existing ? "true" : "false", o->overwrite ? "true" : "false", o->dry_run ? "true" : "false",
            o->keep_orientation ? "true" : "false");
    fprintf(f, "\n              \"max_pixels\": %llu, \"accept_damaged\": %s, \"shard\": [%d, %d]},\n",
            (unsigned long long)(o->max_pixels ? o->max_pixels : TS_DEFAULT_MAX_PIXELS),
            o->accept_damaged ? "true" : "false", o->shard.count > 1 ? o->shard.index : 0,
            o->shard.count > 1 ? o->shard.count : 1);
}

/* A phase as [start, end] in seconds from the program's start, or null. */
static void write_span(FILE *f, const char *name, const double *v, int last)
{
    fprintf(f, "\"%s\": ", name);
    if (v[0] < 0) fputs("null", f);
    else fprintf(f, "[%.6f, %.6f]", v[0], v[1]);
    fputs(last ? "" : ", ", f);
}

static void write_moment(FILE *f, const char *name, double v, int last)
{
    fprintf(f, "\"%s\": ", name);
    if (v < 0) fputs("null", f);
    else fprintf(f, "%.6f", v);
    fputs(last ? "" : ", ", f);
}

static void write_phases(FILE *f, const ts_run_phases *p)
{
    fputs("  \"phases_s\": {", f);
    write_span(f, "program", p->program, 0);
    write_span(f, "inputs", p->inputs, 0);
    write_span(f, "gpu_probe", p->gpu_probe, 0);
    write_span(f, "gpu_engines", p->gpu_engines, 0);
    fputs("\n               ", f);
    write_span(f, "gpu_warmup", p->gpu_warmup, 0);
    write_span(f, "gpu_rates", p->gpu_rates, 0);
    write_span(f, "nvjpeg", p->nvjpeg, 0);
    write_moment(f, "gpu_ready", p->gpu_ready, 0);
    fputs("\n               ", f);
    write_span(f, "work", p->work, 0);
    write_moment(f, "first_image", p->first_image, 0);
    write_moment(f, "last_image", p->last_image, 0);
    write_span(f, "teardown", p->teardown, 1);
    fputs("},\n", f);
}

static void write_summary(FILE *f, const ts_batch_result *r, const ts_trace *t)
{
    double busy = 0;
    ts_stage_stat st[64];
    int ns = t ? ts_trace_summary(t, st, 64) : 0;
    for (int i = 0; i < ns; i++) busy += st[i].busy_s;
    fputs("  \"device\": ", f);
    ts_json_string(f, r->device);
    fputs(", \"device_note\": ", f);
    ts_json_string(f, r->device_note);
    fprintf(f, ",\n  \"images\": %d, \"ok\": %d, \"failed\": %d, \"skipped\": %d, \"not_started\": %d,\n", r->n_images,
            r->n_ok, r->n_failed, r->n_skipped, r->n_not_started);
    fprintf(f, "  \"wall_s\": %.6f, \"images_per_s\": %.3f, \"megapixels_per_s\": %.3f,\n", r->wall_s,
            rate(r->n_ok, r->wall_s), rate((double)r->pixels_in / 1e6, r->wall_s));
    fprintf(f, "  \"setup_s\": %.6f, \"work_s\": %.6f, \"finish_s\": %.6f,\n", r->setup_s, r->work_s, r->finish_s);
    fprintf(f, "  \"images_on_gpu\": %d, \"images_on_cpu\": %d, \"gpu_note\": ", r->n_on_gpu, r->n_on_cpu);
    ts_json_string(f, r->gpu_note);
    fputs(",\n", f);
    write_phases(f, &r->phases);
    fprintf(f, "  \"memory\": {\"budget_mb\": %.1f, \"peak_mb\": %.1f, \"max_in_flight\": %d, \"pinned_mb\": %.1f},\n",
            (double)r->memory_budget / 1e6, (double)r->memory_peak / 1e6, r->max_in_flight, (double)r->pinned_bytes / 1e6);
    fprintf(f, "  \"overlap_efficiency\": %.3f,\n", rate(busy, t ? ts_trace_span(t) : 0));
    if (r->peak.d2d_gbps > 0)
        fprintf(f, "  \"measured_peak\": {\"h2d_GBps\": %.2f, \"d2h_GBps\": %.2f, \"device_copy_GBps\": %.1f},\n",
                r->peak.h2d_gbps, r->peak.d2h_gbps, r->peak.d2d_gbps);
}

ts_status ts_report_write(const char *path, const ts_batch_result *r, const ts_trace *t,
                          const ts_batch_opts *o, int argc, char *const *argv, ts_err *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return ts_err_set(err, TS_E_IO, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return ts_err_set(err, TS_E_IO, "%s: cannot write: %s", path, strerror(errno));

    fprintf(f, "{\n  \"tilestream\": \"%s\", \"schema\": %d, \"units\": {\"time\": \"s\", \"size\": \"bytes\"},\n",
            TS_VERSION_STRING, REPORT_SCHEMA);
    fputs("  \"command_line\": [", f);
    for (int i = 0; argv && i < argc; i++) {
        if (i) fputs(", ", f);
        ts_json_string(f, argv[i]);
    }
    fputs("],\n", f);
    write_options(f, o);
    write_summary(f, r, t);
    write_stages(f, t);
    fputs("  \"files\": [", f);
    for (int i = 0; i < r->n_images; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        write_image(f, &r->images[i]);
    }
    fputs(r->n_images ? "\n  ]\n}\n" : "]\n}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return ts_err_set(err, TS_E_IO, "%s: cannot write: %s", path, strerror(e));
    }
    return TS_OK;
}

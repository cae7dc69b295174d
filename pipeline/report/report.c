/* report.c - the --report JSON: the run, every stage, every image. */
#include "tilestream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
        else if (ch == '\n') fputs("\\n", f);
        else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
        else fputc(ch, f);
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
        json_string(f, st[i].stage);
        fprintf(f, ", \"count\": %d, \"busy_s\": %.6f, \"bytes\": %llu, \"GBps\": %.3f}", st[i].count,
                st[i].busy_s, (unsigned long long)st[i].bytes, rate((double)st[i].bytes / 1e9, st[i].busy_s));
    }
    fputs(n ? "\n  ],\n" : "],\n", f);
}

static void write_image(FILE *f, const ts_image_result *im)
{
    fputs("    {\"input\": ", f);
    json_string(f, im->input);
    fputs(", \"output\": ", f);
    json_string(f, im->output);
    fprintf(f, ", \"status\": \"%s\"", im->skipped ? "skipped" : im->status == TS_OK ? "ok" : "failed");
    if (im->status != TS_OK && !im->skipped) {
        fputs(", \"error\": ", f);
        json_string(f, im->error);
    }
    fprintf(f, ", \"width\": %d, \"height\": %d, \"channels\": %d, \"bits\": %d, \"out_width\": %d, \"out_height\": %d",
            im->w, im->h, im->c, im->type * 8, im->out_w, im->out_h);
    fprintf(f, ", \"decode_ms\": %.3f, \"ops_ms\": %.3f, \"encode_ms\": %.3f, \"in_bytes\": %llu, \"out_bytes\": %llu}",
            im->decode_s * 1e3, im->ops_s * 1e3, im->encode_s * 1e3, (unsigned long long)im->in_bytes,
            (unsigned long long)im->out_bytes);
}

ts_status ts_report_write(const char *path, const ts_batch_result *r, const ts_trace *t,
                          const char *chain_text, ts_err *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return ts_err_set(err, TS_E_IO, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f) return ts_err_set(err, TS_E_IO, "%s: cannot write: %s", path, strerror(errno));

    double busy = 0;
    ts_stage_stat st[64];
    int ns = t ? ts_trace_summary(t, st, 64) : 0;
    for (int i = 0; i < ns; i++) busy += st[i].busy_s;
    fprintf(f, "{\n  \"tilestream\": \"%s\",\n  \"chain\": ", TS_VERSION_STRING);
    json_string(f, chain_text);
    fputs(",\n  \"device\": ", f);
    json_string(f, r->device);
    fputs(",\n  \"device_note\": ", f);
    json_string(f, r->device_note);
    fprintf(f, ",\n  \"images\": %d, \"ok\": %d, \"failed\": %d, \"skipped\": %d,\n", r->n_images, r->n_ok,
            r->n_failed, r->n_skipped);
    fprintf(f, "  \"wall_s\": %.6f, \"images_per_s\": %.3f, \"megapixels_per_s\": %.3f,\n", r->wall_s,
            rate(r->n_ok, r->wall_s), rate((double)r->pixels_in / 1e6, r->wall_s));
    fprintf(f, "  \"overlap_efficiency\": %.3f,\n", rate(busy, t ? ts_trace_span(t) : 0));
    if (r->peak.d2d_gbps > 0)
        fprintf(f, "  \"measured_peak\": {\"h2d_GBps\": %.2f, \"d2h_GBps\": %.2f, \"device_copy_GBps\": %.1f},\n",
                r->peak.h2d_gbps, r->peak.d2h_gbps, r->peak.d2d_gbps);
    write_stages(f, t);
    fputs("  \"files\": [", f);
    for (int i = 0; i < r->n_images; i++) {
        fputs(i ? ",\n" : "\n", f);
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

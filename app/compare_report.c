/* compare_report.c - differences, heat maps, the HTML page and the JSON of
 * `tilestream compare` (compare_report.h). */
#include "compare_report.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ differences */

static double channel_at(const ts_image *img, int x, int y, int ch)
{
    const unsigned char *row = img->data + (size_t)y * img->stride;
    size_t i = (size_t)x * (size_t)img->c + (size_t)ch;
    if (img->type == TS_U8) return row[i];
    if (img->type == TS_U16) return ((const uint16_t *)row)[i];
    return ((const float *)row)[i];
}

static int same_shape(const ts_image *a, const ts_image *b)
{
    return a->w == b->w && a->h == b->h && a->c == b->c && a->type == b->type;
}

cmp_diff cmp_diff_images(const ts_image *a, const ts_image *b)
{
    cmp_diff d = { 0, 0, INFINITY };
    double sum = 0, sq = 0, maxv = ts_type_max(a->type);
    if (!same_shape(a, b)) {
        d.max_abs = d.mean_abs = d.psnr = NAN;
        return d;
    }
    for (int y = 0; y < a->h; y++)
        for (int x = 0; x < a->w; x++)
            for (int ch = 0; ch < a->c; ch++) {
                double e = fabs(channel_at(a, x, y, ch) - channel_at(b, x, y, ch));
                if (e > d.max_abs) d.max_abs = e;
                sum += e;
                sq += e * e;
            }
    double n = (double)a->w * a->h * a->c;
    d.mean_abs = n > 0 ? sum / n : 0;
    d.psnr = sq > 0 ? 10 * log10(maxv * maxv / (sq / n)) : INFINITY;
    return d;
}

/* ------------------------------------------------------------ heat maps */

/* The colour of t in 0..1: five stops, black to pale yellow (an
 * inferno-like scale: brightness rises steadily, so it reads in grey too). */
static void colour_of(double t, unsigned char rgb[3])
{
    static const unsigned char stops[5][3] = {
        { 0, 0, 4 }, { 87, 16, 110 }, { 188, 55, 84 }, { 249, 142, 9 }, { 252, 255, 164 },
    };
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    double s = t * 4;
    int i = s >= 4 ? 3 : (int)s;
    double f = s - i;
    for (int k = 0; k < 3; k++) rgb[k] = (unsigned char)lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
}

/* A 3x5 font for the legend's numbers: rows top to bottom, 3 bits each. */
static const char FONT_CHARS[] = "0123456789.-+e";
static const unsigned char FONT[][5] = {
    { 7, 5, 5, 5, 7 }, { 2, 6, 2, 2, 7 }, { 7, 1, 7, 4, 7 }, { 7, 1, 7, 1, 7 }, { 5, 5, 7, 1, 1 },
    { 7, 4, 7, 1, 7 }, { 7, 4, 7, 5, 7 }, { 7, 1, 1, 1, 1 }, { 7, 5, 7, 5, 7 }, { 7, 5, 7, 1, 7 },
    { 0, 0, 0, 0, 2 }, { 0, 0, 7, 0, 0 }, { 0, 2, 7, 2, 0 }, { 7, 4, 7, 4, 7 },
};
enum { GLYPH_SCALE = 2, GLYPH_W = 4 * GLYPH_SCALE, LEGEND_H = 34 };

static void put_rgb(ts_image *img, int x, int y, const unsigned char rgb[3])
{
    if (x < 0 || y < 0 || x >= img->w || y >= img->h) return;
    memcpy(img->data + (size_t)y * img->stride + (size_t)x * 3, rgb, 3);
}

/* Text at (x, y), GLYPH_SCALE pixels per font pixel. */
static void draw_text(ts_image *img, int x, int y, const char *s, const unsigned char rgb[3])
{
    for (; *s; s++, x += GLYPH_W) {
        const char *p = strchr(FONT_CHARS, *s);
        if (!p || !*s) continue;
        const unsigned char *g = FONT[p - FONT_CHARS];
        for (int r = 0; r < 5; r++)
            for (int c = 0; c < 3; c++)
                if (g[r] & (4 >> c))
                    for (int dy = 0; dy < GLYPH_SCALE; dy++)
                        for (int dx = 0; dx < GLYPH_SCALE; dx++)
                            put_rgb(img, x + c * GLYPH_SCALE + dx, y + r * GLYPH_SCALE + dy, rgb);
    }
}

/* Legend: a colour bar (0 at the left, top at the right) and the two
 * numbers under its ends. */
static void draw_legend(ts_image *img, int y0, double top)
{
    static const unsigned char white[3] = { 255, 255, 255 }, grey[3] = { 40, 40, 40 };
    char label[32];
    for (int y = y0; y < img->h; y++)
        for (int x = 0; x < img->w; x++) put_rgb(img, x, y, grey);
    for (int x = 4; x < img->w - 4; x++) {
        unsigned char rgb[3];
        colour_of((double)(x - 4) / (img->w - 9 > 0 ? img->w - 9 : 1), rgb);
        for (int y = y0 + 4; y < y0 + 16; y++) put_rgb(img, x, y, rgb);
    }
    draw_text(img, 4, y0 + 20, "0", white);
    snprintf(label, sizeof label, "%.4g", top);
    draw_text(img, img->w - 4 - (int)strlen(label) * GLYPH_W + GLYPH_SCALE, y0 + 20, label, white);
}

/* The largest |a - b| over the channels of the pixels of block (bx, by). */
static double block_diff(const ts_image *a, const ts_image *b, int bx, int by, int block)
{
    double e = 0;
    for (int y = by * block; y < (by + 1) * block && y < a->h; y++)
        for (int x = bx * block; x < (bx + 1) * block && x < a->w; x++)
            for (int ch = 0; ch < a->c; ch++) {
                double v = fabs(channel_at(a, x, y, ch) - channel_at(b, x, y, ch));
                if (v > e) e = v;
            }
    return e;
}

ts_status cmp_heatmap(const ts_image *a, const ts_image *b, int max_w, ts_image *out, double *scale_top,
                      ts_err *err)
{
    if (!same_shape(a, b))
        return ts_err_set(err, TS_E_ARG, "heat map: images differ in shape (%dx%dx%d vs %dx%dx%d)", a->w, a->h, a->c,
                          b->w, b->h, b->c);
    cmp_diff d = cmp_diff_images(a, b);
    double step = a->type == TS_F32 ? 1.0 / 255 : 1.0, top = d.max_abs > step ? d.max_abs : step;
    int block = max_w > 0 && a->w > max_w ? (a->w + max_w - 1) / max_w : 1;
    int mw = (a->w + block - 1) / block, mh = (a->h + block - 1) / block;
    int w = mw > 120 ? mw : 120;
    ts_status st = ts_image_alloc(out, w, mh + LEGEND_H, 3, TS_U8, 0, NULL, err);
    if (st != TS_OK) return st;
    memset(out->data, 0, out->stride * (size_t)out->h);
    for (int y = 0; y < mh; y++)
        for (int x = 0; x < mw; x++) {
            unsigned char rgb[3];
            colour_of(block_diff(a, b, x, y, block) / top, rgb);
            put_rgb(out, x, y, rgb);
        }
    draw_legend(out, mh, top);
    if (scale_top) *scale_top = top;
    return TS_OK;
}

ts_status cmp_write_heatmap(const char *path, const ts_image *a, const ts_image *b, ts_err *err)
{
    ts_image map = { 0 };
    ts_save_opts so = { TS_FMT_PNG, 0, -1, 0 };
    ts_status st = cmp_heatmap(a, b, 0, &map, NULL, err);
    if (st == TS_OK) st = ts_image_save(path, &map, &so, err);
    ts_image_free(&map);
    return st;
}

/* ------------------------------------------------------------ base64 */

char *cmp_base64(const unsigned char *data, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    if (!out) return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)data[i] << 16 | (i + 1 < n ? (unsigned)data[i + 1] << 8 : 0) |
                     (i + 2 < n ? data[i + 2] : 0);
        *o++ = abc[v >> 18 & 63];
        *o++ = abc[v >> 12 & 63];
        *o++ = i + 1 < n ? abc[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? abc[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* ------------------------------------------------------------ the page */

enum { THUMB_W = 320 };

ts_status cmp_thumbnail(const ts_image *img, int max_w, ts_image *out, ts_err *err)
{
    ts_chain *chain = NULL;
    if (img->w <= max_w) return ts_image_clone(out, img, err);
    ts_status st = ts_chain_fit_width(max_w, &chain, err);
    if (st == TS_OK) st = ts_cpu_run(chain, img, 0, 0, out, err);
    ts_chain_free(chain);
    return st;
}

/* img as PNG bytes, shrunk to THUMB_W wide when wider: saved under dir and
 * read back. *out is malloc'd. */
static ts_status png_bytes(const ts_image *img, const char *dir, unsigned char **out, size_t *n, ts_err *err)
{
    char path[4096];
    ts_image small = { 0 };
    const ts_image *use = img;
    ts_save_opts so = { TS_FMT_PNG, 0, 6, 0 };
    ts_status st = TS_OK;
    *out = NULL;
    *n = 0;
    if (img->w > THUMB_W) {
        st = cmp_thumbnail(img, THUMB_W, &small, err);
        if (st != TS_OK) return st;
        use = &small;
    }
    snprintf(path, sizeof path, "%s/thumb.png", dir);
    st = ts_image_save(path, use, &so, err);
    ts_image_free(&small);
    if (st != TS_OK) return st;
    FILE *f = fopen(path, "rb");
    if (!f) return ts_err_set(err, TS_E_IO, "%s: cannot read back", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = len > 0 ? malloc((size_t)len) : NULL;
    if (*out && fread(*out, 1, (size_t)len, f) == (size_t)len) *n = (size_t)len;
    else st = ts_err_set(err, TS_E_IO, "%s: cannot read back", path);
    fclose(f);
    remove(path);
    return st;
}

/* <img> of img as a data URI, or an empty cell's text. */
static ts_status put_image(FILE *f, const ts_image *img, const char *alt, const char *dir, ts_err *err)
{
    unsigned char *png = NULL;
    size_t n = 0;
    if (!img || !img->data) { fprintf(f, "<td>-</td>"); return TS_OK; }
    ts_status st = png_bytes(img, dir, &png, &n, err);
    char *b64 = st == TS_OK ? cmp_base64(png, n) : NULL;
    free(png);
    if (st != TS_OK) return st;
    if (!b64) return ts_err_set(err, TS_E_NOMEM, "out of memory");
    fprintf(f, "<td><img alt=\"%s\" src=\"data:image/png;base64,%s\"></td>", alt, b64);
    free(b64);
    return TS_OK;
}

/* Text with &, <, > and " escaped. */
static void put_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '&') fputs("&amp;", f);
        else if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static void put_diff_cells(FILE *f, cmp_diff d)
{
    fprintf(f, "<td>%g</td><td>%.4f</td><td>%.2f</td>", d.max_abs, d.mean_abs, d.psnr);
}

static void put_table(FILE *f, const cmp_entry *e, int n)
{
    fputs("<table>\n<tr><th rowspan=\"2\">input</th><th rowspan=\"2\">op</th><th rowspan=\"2\">size</th>"
          "<th colspan=\"2\">global</th><th colspan=\"2\">texture</th><th colspan=\"3\">global vs texture</th>"
          "<th colspan=\"3\">global vs CPU</th><th colspan=\"3\">texture vs CPU</th></tr>\n<tr>"
          "<th>ms</th><th>GB/s</th><th>ms</th><th>GB/s</th>", f);
    for (int k = 0; k < 3; k++) fputs("<th>max</th><th>mean</th><th>PSNR dB</th>", f);
    fputs("</tr>\n", f);
    for (int i = 0; i < n; i++) {
        fputs("<tr><td>", f);
        put_text(f, e[i].input);
        fputs("</td><td>", f);
        put_text(f, e[i].op);
        fprintf(f, "</td><td>%dx%d &rarr; %dx%d</td><td>%.3f</td><td>%.1f</td><td>%.3f</td><td>%.1f</td>", e[i].in_w,
                e[i].in_h, e[i].out_w, e[i].out_h, e[i].global_ms, e[i].global_gbps, e[i].texture_ms,
                e[i].texture_gbps);
        put_diff_cells(f, e[i].g_vs_t);
        put_diff_cells(f, e[i].g_vs_ref);
        put_diff_cells(f, e[i].t_vs_ref);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static ts_status put_pictures(FILE *f, const cmp_entry *e, const char *dir, ts_err *err)
{
    ts_status st = TS_OK;
    ts_image map = { 0 };
    const ts_image *diff = e->diff_img;
    fputs("<h2>", f);
    put_text(f, e->input);
    fputs(" &mdash; ", f);
    put_text(f, e->op);
    fputs("</h2>\n<table class=\"pics\"><tr><th>input</th><th>global</th><th>texture</th>"
          "<th>|global &minus; texture|</th></tr>\n<tr>", f);
    if (!diff && e->global_img && e->texture_img) {
        st = cmp_heatmap(e->global_img, e->texture_img, THUMB_W, &map, NULL, err);
        diff = &map;
    }
    if (st == TS_OK) st = put_image(f, e->in_img, "input", dir, err);
    if (st == TS_OK) st = put_image(f, e->global_img, "global", dir, err);
    if (st == TS_OK) st = put_image(f, e->texture_img, "texture", dir, err);
    if (st == TS_OK) st = put_image(f, diff, "difference", dir, err);
    fprintf(f, "</tr></table>\n<p>Heat map: the largest difference over the channels, in channel units, "
               "black = equal, the legend's right end = %g (shrunk maps show each block's largest).</p>\n",
            e->g_vs_t.max_abs);
    ts_image_free(&map);
    return st;
}

ts_status cmp_write_html(const char *path, const char *device, const char *chain, const cmp_entry *e, int n,
                         ts_err *err)
{
    char dir[] = "/tmp/tilestream-compare-XXXXXX";
    FILE *f;
    ts_status st = TS_OK;
    if (!mkdtemp(dir)) return ts_err_set(err, TS_E_IO, "%s: cannot make a temporary folder", path);
    f = fopen(path, "w");
    if (!f) {
        rmdir(dir);
        return ts_err_set(err, TS_E_IO, "%s: cannot write", path);
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<title>tilestream compare</title>\n<style>\n"
          "body{font-family:sans-serif;margin:1.5em;color:#222}\n"
          "table{border-collapse:collapse;margin-bottom:1em}\n"
          "td,th{border:1px solid #bbb;padding:3px 6px;text-align:right;vertical-align:top}\n"
          "th{background:#eee}\n.pics td{text-align:center}\nimg{max-width:320px;image-rendering:pixelated}\n"
          "</style>\n</head>\n<body>\n<h1>tilestream compare: global memory vs texture path</h1>\n<p>device: ", f);
    put_text(f, device);
    fputs("<br>chain: <code>", f);
    put_text(f, chain);
    fprintf(f, "</code><br>kernel time: median of %d runs; GB/s: the op's input read once and its output written "
               "once, over that time.</p>\n", n > 0 ? e[0].runs : 0);
    put_table(f, e, n);
    for (int i = 0; i < n && st == TS_OK; i++) st = put_pictures(f, &e[i], dir, err);
    fputs("</body>\n</html>\n", f);
    if (fclose(f) != 0 && st == TS_OK) st = ts_err_set(err, TS_E_IO, "%s: write failed", path);
    rmdir(dir);
    return st;
}

/* ------------------------------------------------------------ JSON */

/* A number, or null where JSON has none (infinite PSNR, NaN). */
static void json_number(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fputs("null", f);
}

static void json_diff(FILE *f, const char *key, cmp_diff d)
{
    fprintf(f, "\"%s\": {\"max_abs\": ", key);
    json_number(f, d.max_abs);
    fputs(", \"mean_abs\": ", f);
    json_number(f, d.mean_abs);
    fputs(", \"psnr_db\": ", f);
    json_number(f, d.psnr);
    fputs("}", f);
}

ts_status cmp_write_json(const char *path, const char *device, const char *chain, const cmp_entry *e, int n,
                         ts_err *err)
{
    FILE *f = fopen(path, "w");
    if (!f) return ts_err_set(err, TS_E_IO, "%s: cannot write", path);
    fputs("{\n  \"device\": ", f);
    ts_json_string(f, device);
    fputs(",\n  \"chain\": ", f);
    ts_json_string(f, chain);
    fputs(",\n  \"psnr_note\": \"null = identical\",\n  \"entries\": [", f);
    for (int i = 0; i < n; i++) {
        fputs(i ? ",\n    {" : "\n    {", f);
        fputs("\"input\": ", f);
        ts_json_string(f, e[i].input);
        fputs(", \"op\": ", f);
        ts_json_string(f, e[i].op);
        fprintf(f, ", \"in\": [%d, %d], \"out\": [%d, %d], \"channels\": %d, \"bits\": %d, \"runs\": %d,\n     ",
                e[i].in_w, e[i].in_h, e[i].out_w, e[i].out_h, e[i].c, 8 * (int)e[i].type, e[i].runs);
        fputs("\"global\": {\"kernel_ms\": ", f);
        json_number(f, e[i].global_ms);
        fputs(", \"gbps\": ", f);
        json_number(f, e[i].global_gbps);
        fputs("}, \"texture\": {\"kernel_ms\": ", f);
        json_number(f, e[i].texture_ms);
        fputs(", \"gbps\": ", f);
        json_number(f, e[i].texture_gbps);
        fputs("},\n     ", f);
        json_diff(f, "global_vs_texture", e[i].g_vs_t);
        fputs(",\n     ", f);
        json_diff(f, "global_vs_cpu", e[i].g_vs_ref);
        fputs(",\n     ", f);
        json_diff(f, "texture_vs_cpu", e[i].t_vs_ref);
        fputs("}", f);
    }
    fputs("\n  ]\n}\n", f);
    if (fclose(f) != 0) return ts_err_set(err, TS_E_IO, "%s: write failed", path);
    return TS_OK;
}

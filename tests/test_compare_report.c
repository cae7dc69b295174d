/* test_compare_report.c - what `tilestream compare` writes, made from
 * images computed on the CPU (no device needed): differences worked out by
 * hand, base64 against RFC 4648's vectors, the heat map's colours at both
 * ends of its scale and its legend, the heat map PNG read back, and a page
 * and a JSON report for two entries (zone plate shrunk with area as the
 * "global" output and with bilinear as the "texture" one): the page's
 * structure, and every embedded image decodes as a PNG of the thumbnail's
 * size. */
#include "check.h"
#include "tilestream.h"
#include "compare_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ts_image image_of(int w, int h, int c, const unsigned char *v)
{
    ts_image img = { 0 };
    ts_err err;
    CHECK(ts_image_alloc(&img, w, h, c, TS_U8, 0, NULL, &err) == TS_OK);
    for (int y = 0; y < h; y++) memcpy(img.data + (size_t)y * img.stride, v + (size_t)y * w * c, (size_t)w * c);
    return img;
}

/* [10 20] vs [13 20], one channel: max 3, mean 1.5, MSE 4.5. */
static void test_diff_by_hand(void)
{
    static const unsigned char a[2] = { 10, 20 }, b[2] = { 13, 20 };
    ts_image ia = image_of(2, 1, 1, a), ib = image_of(2, 1, 1, b), ic = image_of(1, 2, 1, a);
    cmp_diff d = cmp_diff_images(&ia, &ib);
    CHECK_NEAR(d.max_abs, 3, 0);
    CHECK_NEAR(d.mean_abs, 1.5, 1e-12);
    CHECK_NEAR(d.psnr, 10 * log10(255.0 * 255.0 / 4.5), 1e-9);
    d = cmp_diff_images(&ia, &ia);
    CHECK(d.max_abs == 0 && isinf(d.psnr));
    d = cmp_diff_images(&ia, &ic);
    CHECK(isnan(d.max_abs));
    ts_image_free(&ia);
    ts_image_free(&ib);
    ts_image_free(&ic);
}

static void test_base64(void)
{
    static const char *const in[6] = { "", "f", "fo", "foo", "foob", "foobar" };
    static const char *const want[6] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmFy" };
    for (int i = 0; i < 6; i++) {
        char *s = cmp_base64((const unsigned char *)in[i], strlen(in[i]));
        CHECK_MSG(s && !strcmp(s, want[i]), "base64(\"%s\") = %s, want %s", in[i], s ? s : "NULL", want[i]);
        free(s);
    }
}

static const unsigned char *rgb_at(const ts_image *img, int x, int y)
{
    return img->data + (size_t)y * img->stride + (size_t)x * 3;
}

/* 130 x 2 RGB: equal everywhere but pixel (1, 0), 40 apart in one channel.
 * Equal pixels are the scale's bottom colour, (1, 0) its top; the legend
 * below starts with the bottom colour and ends with the top one. */
static void test_heatmap(void)
{
    enum { W = 130, H = 2 };
    unsigned char a[W * H * 3], b[W * H * 3];
    ts_image ia, ib, map = { 0 };
    ts_err err;
    double top = 0;
    for (int i = 0; i < W * H * 3; i++) a[i] = b[i] = (unsigned char)(i * 7);
    b[3 + 1] = (unsigned char)(a[3 + 1] + 40);
    ia = image_of(W, H, 3, a);
    ib = image_of(W, H, 3, b);
    CHECK(cmp_heatmap(&ia, &ib, 0, &map, &top, &err) == TS_OK);
    CHECK_NEAR(top, 40, 0);
    CHECK_EQ_INT(map.w, W);
    CHECK(map.h > H + 20 && map.c == 3 && map.type == TS_U8);
    const unsigned char *zero = rgb_at(&map, 0, 0), *hot = rgb_at(&map, 1, 0);
    CHECK(zero[0] == 0 && zero[1] == 0 && zero[2] == 4);
    CHECK(hot[0] == 252 && hot[1] == 255 && hot[2] == 164);
    CHECK(!memcmp(rgb_at(&map, 4, H + 8), zero, 3));
    CHECK(!memcmp(rgb_at(&map, W - 5, H + 8), hot, 3));
    /* brightness rises along the bar */
    int rising = 1;
    for (int x = 5; x < W - 5; x++) {
        const unsigned char *p = rgb_at(&map, x - 1, H + 8), *q = rgb_at(&map, x, H + 8);
        rising &= (q[0] + q[1] + q[2]) + 2 >= (p[0] + p[1] + p[2]);
    }
    CHECK(rising);
    ts_image_free(&map);
    /* shrunk to 40 wide (blocks of 4): the differing pixel's block keeps
     * the top colour, the rest the bottom one */
    CHECK(cmp_heatmap(&ia, &ib, 40, &map, &top, &err) == TS_OK);
    CHECK(map.w == 120 && map.h == 1 + 34);
    CHECK(!memcmp(rgb_at(&map, 0, 0), (const unsigned char[]){ 252, 255, 164 }, 3));
    CHECK(!memcmp(rgb_at(&map, 1, 0), (const unsigned char[]){ 0, 0, 4 }, 3));
    ts_image_free(&map);
    /* written as a PNG and read back */
    char dir[] = "/tmp/ts-heatmap-XXXXXX", path[64];
    ts_image back = { 0 };
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/map.png", dir);
    CHECK_MSG(cmp_write_heatmap(path, &ia, &ib, &err) == TS_OK, "%s", err.msg);
    CHECK_MSG(ts_image_load(path, NULL, &back, &err) == TS_OK, "%s", err.msg);
    CHECK(back.w == W && back.h > H + 20 && back.c == 3);
    ts_image_free(&back);
    remove(path);
    rmdir(dir);
    CHECK(cmp_heatmap(&ia, &map, 0, &map, &top, &err) == TS_E_ARG); /* shapes differ (map is empty) */
    ts_image_free(&ia);
    ts_image_free(&ib);
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    char *s;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what)) n++;
    return n;
}

static int b64_value(char c)
{
    const char *abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = c ? strchr(abc, c) : NULL;
    return p ? (int)(p - abc) : -1;
}

/* Decode base64 up to the closing quote; returns the byte count or -1. */
static long b64_decode(const char *s, unsigned char *out, long cap)
{
    long n = 0;
    while (*s && *s != '"') {
        int v[4];
        for (int i = 0; i < 4; i++) v[i] = s[i] == '=' ? 0 : b64_value(s[i]);
        if (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0) return -1;
        unsigned w = (unsigned)(v[0] << 18 | v[1] << 12 | v[2] << 6 | v[3]);
        int bytes = s[2] == '=' ? 1 : s[3] == '=' ? 2 : 3;
        for (int i = 0; i < bytes; i++) {
            if (n >= cap) return -1;
            out[n++] = (unsigned char)(w >> (16 - 8 * i));
        }
        s += 4;
    }
    return n;
}

/* Every data URI in the page is a PNG that loads, at most 320 wide. */
static int check_embedded_pngs(const char *page, const char *dir)
{
    static const char tag[] = "src=\"data:image/png;base64,";
    int n = 0;
    long cap = 8 << 20;
    unsigned char *buf = malloc((size_t)cap);
    char path[128];
    snprintf(path, sizeof path, "%s/embedded.png", dir);
    for (const char *p = strstr(page, tag); p && buf; p = strstr(p + 1, tag), n++) {
        long len = b64_decode(p + strlen(tag), buf, cap);
        ts_image img = { 0 };
        ts_err err;
        CHECK_MSG(len > 8 && !memcmp(buf, "\x89PNG\r\n\x1a\n", 8), "image %d: not a PNG", n);
        FILE *f = fopen(path, "wb");
        CHECK(f && fwrite(buf, 1, (size_t)len, f) == (size_t)len);
        if (f) fclose(f);
        CHECK_MSG(ts_image_load(path, NULL, &img, &err) == TS_OK, "image %d: %s", n, err.msg);
        CHECK(img.w > 0 && img.w <= 320);
        ts_image_free(&img);
    }
    remove(path);
    free(buf);
    return n;
}

static ts_status run_chain(const char *text, const ts_image *in, ts_image *out, ts_err *err)
{
    ts_chain *chain = NULL;
    ts_status st = ts_chain_parse(text, &chain, err);
    if (st == TS_OK) st = ts_cpu_run(chain, in, 0, 0, out, err);
    ts_chain_free(chain);
    return st;
}

static void test_page_and_json(void)
{
    ts_image in = { 0 }, area = { 0 }, bil = { 0 }, rot_a = { 0 }, rot_b = { 0 };
    ts_err err = { 0 };
    char dir[] = "/tmp/ts-compare-XXXXXX", html[64], json[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(html, sizeof html, "%s/page.html", dir);
    snprintf(json, sizeof json, "%s/report.json", dir);
    CHECK_MSG(ts_image_load(TS_SAMPLES "/patterns/zoneplate-512.png", NULL, &in, &err) == TS_OK, "%s", err.msg);
    CHECK(run_chain("scale=0.3:interp=area", &in, &area, &err) == TS_OK);
    CHECK(run_chain("scale=0.3:interp=bilinear", &in, &bil, &err) == TS_OK);
    CHECK(run_chain("rotate=deg=13", &in, &rot_a, &err) == TS_OK);
    CHECK(run_chain("rotate=deg=13:interp=nearest", &in, &rot_b, &err) == TS_OK);
    cmp_entry e[2];
    memset(e, 0, sizeof e);
    e[0].input = "zoneplate-512.png";
    e[0].op = "scale=0.3";
    e[0].in_w = in.w; e[0].in_h = in.h; e[0].out_w = area.w; e[0].out_h = area.h; e[0].c = 1; e[0].type = TS_U8;
    e[0].runs = 5;
    e[0].g_vs_t = cmp_diff_images(&area, &bil);
    e[0].g_vs_ref = cmp_diff_images(&area, &area);
    e[0].t_vs_ref = cmp_diff_images(&bil, &area);
    e[0].in_img = &in; e[0].global_img = &area; e[0].texture_img = &bil; e[0].diff_img = NULL;
    e[1] = e[0];
    e[1].op = "rotate=deg=13 <&>";  /* escaped in the page */
    e[1].out_w = rot_a.w; e[1].out_h = rot_a.h;
    e[1].g_vs_t = cmp_diff_images(&rot_a, &rot_b);
    e[1].global_img = &rot_a; e[1].texture_img = &rot_b; e[1].diff_img = NULL;
    CHECK(e[0].g_vs_t.max_abs > 0 && isinf(e[0].g_vs_ref.psnr));

    CHECK_MSG(cmp_write_html(html, "test device", "scale=0.3,rotate=deg=13", e, 2, &err) == TS_OK, "%s", err.msg);
    char *page = read_all(html);
    CHECK(page != NULL);
    if (page) {
        CHECK(!strncmp(page, "<!DOCTYPE html>", 15));
        CHECK_EQ_INT(count(page, "<html"), 1);
        CHECK_EQ_INT(count(page, "</html>"), 1);
        CHECK_EQ_INT(count(page, "<body>"), 1);
        CHECK_EQ_INT(count(page, "</body>"), 1);
        CHECK_EQ_INT(count(page, "<table"), count(page, "</table>"));
        CHECK_EQ_INT(count(page, "<table"), 3);
        CHECK_EQ_INT(count(page, "<tr>"), count(page, "</tr>"));
        CHECK_EQ_INT(count(page, "<img "), 8);
        CHECK(strstr(page, "rotate=deg=13 &lt;&amp;&gt;") != NULL);
        CHECK(strstr(page, "http") == NULL); /* self-contained: nothing fetched */
        CHECK_EQ_INT(check_embedded_pngs(page, dir), 8);
        free(page);
    }

    CHECK_MSG(cmp_write_json(json, "test device", "scale=0.3,rotate=deg=13", e, 2, &err) == TS_OK, "%s", err.msg);
    char *j = read_all(json);
    CHECK(j != NULL);
    if (j) {
        CHECK_EQ_INT(count(j, "{"), count(j, "}"));
        CHECK_EQ_INT(count(j, "["), count(j, "]"));
        CHECK_EQ_INT(count(j, "\"op\": "), 2);
        CHECK_EQ_INT(count(j, "\"global_vs_texture\""), 2);
        CHECK(strstr(j, "\"psnr_db\": null") != NULL); /* identical: infinite PSNR is null */
        char want[64];
        snprintf(want, sizeof want, "\"max_abs\": %.6g", e[0].g_vs_t.max_abs);
        CHECK(strstr(j, want) != NULL);
        free(j);
    }
    remove(html);
    remove(json);
    rmdir(dir);
    ts_image_free(&in);
    ts_image_free(&area);
    ts_image_free(&bil);
    ts_image_free(&rot_a);
    ts_image_free(&rot_b);
}

int main(void)
{
    check_seed();
    test_diff_by_hand();
    test_base64();
    test_heatmap();
    test_page_and_json();
    return check_exit();
}

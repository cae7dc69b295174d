/* test_png_text.c - PNG text chunks carried from a PNG input to a PNG
 * output: tEXt, zTXt and iTXt (UTF-8, compressed too) and the XMP packet,
 * within the 1 MB budget; a zTXt that inflates past it is dropped and the
 * image still loads; a chunk with a bad CRC is dropped. */
#include "check.h"
#include "codec_internal.h"
#include "tilestream.h"

#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/ts-png-text-XXXXXX";

/* A 7x5 grey PNG with the given text chunks, written with libpng. */
static int write_png(const char *path, png_text *texts, int n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) { png_destroy_write_struct(&png, &info); fclose(f); return 0; }
    png_init_io(png, f);
    png_set_IHDR(png, info, 7, 5, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_set_text(png, info, texts, n);
    png_write_info(png, info);
    unsigned char row[7];
    for (int y = 0; y < 5; y++) {
        for (int x = 0; x < 7; x++) row[x] = (unsigned char)(x * 31 + y * 17);
        png_write_row(png, row);
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return fclose(f) == 0;
}

/* The text of the record with this key, or NULL. */
static const char *find_text(const ts_image *img, const char *key, char *kind)
{
    ts_png_text_rec r;
    const unsigned char *end = img->text + img->text_len;
    for (const unsigned char *at = img->text; (at = ts_png_text_next(at, end, &r)) != NULL;)
        if (!strcmp(r.key, key)) { if (kind) *kind = r.kind; return r.text; }
    return NULL;
}

static png_text text(const char *key, const char *value, int compression)
{
    png_text t;
    memset(&t, 0, sizeof t);
    t.key = (png_charp)key;
    t.text = (png_charp)value;
    t.compression = compression;
    t.lang = (png_charp)"";
    t.lang_key = (png_charp)"";
    return t;
}

static const char XMP[] = "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF/></x:xmpmeta>";

static void check_texts(const ts_image *img, const char *what)
{
    char kind = 0;
    const char *s = find_text(img, "Title", &kind);
    CHECK_MSG(s && !strcmp(s, "A caf\xe9 at noon") && kind == 't', "%s: Title", what);
    s = find_text(img, "Description", &kind);
    CHECK_MSG(s && strlen(s) == 3000 && s[2999] == 'd' && kind == 't', "%s: zTXt Description", what);
    s = find_text(img, "Author", &kind);
    CHECK_MSG(s && !strcmp(s, "Zo\xc3\xab") && kind == 'i', "%s: iTXt Author", what);
    s = find_text(img, "Copyright", &kind);
    CHECK_MSG(s && !strcmp(s, "CC BY 4.0") && kind == 'i', "%s: compressed iTXt Copyright", what);
    CHECK_MSG(img->xmp && img->xmp_len == strlen(XMP) && !memcmp(img->xmp, XMP, img->xmp_len), "%s: XMP", what);
    CHECK_MSG(!find_text(img, TS_XMP_PNG_KEY, NULL), "%s: XMP kept twice", what);
}

static void test_carried(void)
{
    char in[128], out[128];
    snprintf(in, sizeof in, "%s/in.png", dir);
    snprintf(out, sizeof out, "%s/out.png", dir);
    char *desc = malloc(3001);
    memset(desc, 'd', 3000);
    desc[3000] = '\0';
    png_text t[5] = {
        text("Title", "A caf\xe9 at noon", PNG_TEXT_COMPRESSION_NONE),
        text("Description", desc, PNG_TEXT_COMPRESSION_zTXt),
        text("Author", "Zo\xc3\xab", PNG_ITXT_COMPRESSION_NONE),
        text("Copyright", "CC BY 4.0", PNG_ITXT_COMPRESSION_zTXt),
        text(TS_XMP_PNG_KEY, XMP, PNG_ITXT_COMPRESSION_NONE),
    };
    CHECK(write_png(in, t, 5));
    free(desc);
    ts_image img, back;
    ts_err err = { 0 };
    CHECK(ts_image_load(in, NULL, &img, &err) == TS_OK);
    check_texts(&img, "loaded");
    ts_save_opts so = { TS_FMT_PNG, 0, -1, 0 };
    CHECK(ts_image_save(out, &img, &so, &err) == TS_OK);
    CHECK(ts_image_load(out, NULL, &back, &err) == TS_OK);
    check_texts(&back, "written and loaded again");
    ts_image_free(&img);
    ts_image_free(&back);
}

/* A zTXt that inflates to 8 MB, past the 1 MB budget, beside a small one. */
static void test_budget(void)
{
    char in[128];
    snprintf(in, sizeof in, "%s/bomb.png", dir);
    size_t big = 8u << 20;
    char *s = malloc(big + 1);
    memset(s, 'z', big);
    s[big] = '\0';
    png_text t[2] = { text("Comment", s, PNG_TEXT_COMPRESSION_zTXt), text("Title", "kept", PNG_TEXT_COMPRESSION_NONE) };
    CHECK(write_png(in, t, 2));
    free(s);
    ts_image img;
    ts_err err = { 0 };
    CHECK(ts_image_load(in, NULL, &img, &err) == TS_OK);
    CHECK(find_text(&img, "Comment", NULL) == NULL);
    const char *kept = find_text(&img, "Title", NULL);
    CHECK(kept && !strcmp(kept, "kept"));
    CHECK(img.text_len < TS_PNG_TEXT_MAX);
    ts_image_free(&img);
}

/* A tEXt whose CRC is wrong is dropped (libpng skipped it unread, so only
 * this reader sees it). */
static void test_bad_crc(void)
{
    char in[128];
    snprintf(in, sizeof in, "%s/crc.png", dir);
    png_text t[1] = { text("Title", "broken", PNG_TEXT_COMPRESSION_NONE) };
    CHECK(write_png(in, t, 1));
    FILE *f = fopen(in, "r+b");
    unsigned char buf[4096];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    unsigned char *at = NULL;
    for (size_t i = 0; i + 9 <= n && !at; i++)
        if (!memcmp(buf + i, "tEXtTitle", 9)) at = buf + i;
    CHECK(at != NULL);
    if (at) {
        at[4 + 6] ^= 1; /* a byte of the text: the CRC no longer matches */
        fseek(f, (long)(at + 10 - buf), SEEK_SET);
        fputc(at[10], f);
    }
    if (f) fclose(f);
    ts_image img;
    ts_err err = { 0 };
    CHECK(ts_image_load(in, NULL, &img, &err) == TS_OK);
    CHECK(find_text(&img, "Title", NULL) == NULL);
    ts_image_free(&img);
}

/* 200,000 tiny tEXt chunks (a 3 MB file): read in linear time. The
 * suite's timeout is the check: copying the records at every chunk, as a
 * sanitizer's realloc does, took minutes. All fit the budget but the
 * ones past it, and the image loads. */
static void test_many_chunks(void)
{
    char in[128];
    snprintf(in, sizeof in, "%s/many.png", dir);
    enum { N = 200000 };
    png_text *t = malloc(sizeof *t * N);
    for (int i = 0; i < N; i++) t[i] = text("k", "v", PNG_TEXT_COMPRESSION_NONE);
    CHECK(write_png(in, t, N));
    free(t);
    ts_image img;
    ts_err err = { 0 };
    CHECK_MSG(ts_image_load(in, NULL, &img, &err) == TS_OK, "%s", err.msg);
    CHECK(img.text_len > 0 && img.text_len <= TS_PNG_TEXT_MAX);
    const char *v = find_text(&img, "k", NULL);
    CHECK(v && !strcmp(v, "v"));
    ts_image_free(&img);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    test_carried();
    test_budget();
    test_bad_crc();
    test_many_chunks();
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_exit();
}

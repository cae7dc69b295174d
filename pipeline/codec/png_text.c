/* png_text.c - the text chunks of a PNG input (tEXt, zTXt, iTXt: Title,
 * Author, Copyright, Description, ... and XMP as iTXt "XML:com.adobe.xmp"),
 * kept so that a PNG output carries them.
 *
 * libpng is told to skip these chunks unread (see codec_png.c: a 2 GB
 * length or a zTXt bomb must cost nothing), so they are read here in a
 * second pass over the file's chunk headers after a successful decode,
 * with a budget: at most TS_PNG_TEXT_MAX bytes of text in all, counted
 * after decompression. A chunk that would go past it, has a bad CRC or
 * does not parse is dropped; the image always loads.
 *
 * Kept records are packed into img->text: kind ('t' Latin-1 from tEXt or
 * zTXt, 'i' UTF-8 from iTXt), then key, language, translated key and text,
 * each NUL-terminated. The XMP packet goes to img->xmp instead. */
#include "codec_internal.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Inflate src into a fresh buffer of at most cap bytes; NULL when it does
 * not fit, is not zlib data or memory runs out. */
static unsigned char *inflate_capped(const unsigned char *src, size_t n, size_t cap, size_t *out_len)
{
    unsigned char *out = malloc(cap + 1);
    if (!out) return NULL;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) { free(out); return NULL; }
    z.next_in = (unsigned char *)src;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap + 1;   /* one byte more than allowed: filling it means too long */
    int rc = inflate(&z, Z_FINISH);
    *out_len = z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END || *out_len > cap) { free(out); return NULL; }
    return out;
}

typedef struct text_buf { unsigned char *p; size_t len, cap, budget; } text_buf;

/* The buffer grows by doubling: a file of a million tiny chunks must cost
 * linear time, whatever realloc does (sanitizers always copy). */
static int append(text_buf *t, const void *s, size_t n)
{
    if (t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n) cap *= 2;
        unsigned char *p = realloc(t->p, cap);
        if (!p) return 0;
        t->p = p;
        t->cap = cap;
    }
    memcpy(t->p + t->len, s, n);
    t->len += n;
    return 1;
}

/* One record: kind, then the four strings each with its NUL. */
static int add_record(text_buf *t, char kind, const char *key, const char *lang, const char *lkey,
                      const unsigned char *text, size_t text_len)
{
    size_t need = 1 + strlen(key) + strlen(lang) + strlen(lkey) + text_len + 4;
    if (need > t->budget || memchr(text, '\0', text_len)) return 0;
    size_t at = t->len;
    if (append(t, &kind, 1) && append(t, key, strlen(key) + 1) && append(t, lang, strlen(lang) + 1) &&
        append(t, lkey, strlen(lkey) + 1) && append(t, text, text_len) && append(t, "", 1)) {
        t->budget -= need;
        return 1;
    }
    t->len = at;
    return 0;
}

/* The NUL-terminated string at *at within [*at, end), advancing past it. */
static const char *take_string(const unsigned char **at, const unsigned char *end)
{
    const unsigned char *nul = memchr(*at, '\0', (size_t)(end - *at));
    if (!nul) return NULL;
    const char *s = (const char *)*at;
    *at = nul + 1;
    return s;
}

static void keep_xmp(ts_image *img, const unsigned char *s, size_t n)
{
    if (img->xmp || !n || !(img->xmp = malloc(n))) return;
    memcpy(img->xmp, s, n);
    img->xmp_len = n;
}

/* Parse one text chunk's data (type t) into a record. */
static void parse_chunk(ts_image *img, text_buf *t, uint32_t type, const unsigned char *d, size_t n)
{
    const unsigned char *at = d, *end = d + n;
    const char *key = take_string(&at, end);
    if (!key || !*key || strlen(key) > 79) return;
    unsigned char *inflated = NULL;
    size_t text_len = (size_t)(end - at);
    const unsigned char *text = at;
    const char *lang = "", *lkey = "";
    char kind = 't';
    int compressed = 0;
    if (type == 0x7a545874u) {                 /* zTXt: method byte, zlib data */
        if (at >= end || *at != 0) return;
        compressed = 1, text = at + 1, text_len = (size_t)(end - text);
    } else if (type == 0x69545874u) {          /* iTXt: flag, method, language, translated key */
        if (end - at < 2 || at[0] > 1 || at[1] != 0) return;
        compressed = at[0];
        at += 2;
        kind = 'i';
        if (!(lang = take_string(&at, end)) || !(lkey = take_string(&at, end))) return;
        text = at, text_len = (size_t)(end - at);
    }
    if (compressed && !(inflated = inflate_capped(text, text_len, t->budget, &text_len))) return;
    if (compressed) text = inflated;
    if (kind == 'i' && !strcmp(key, TS_XMP_PNG_KEY)) {
        if (text_len <= t->budget) { keep_xmp(img, text, text_len); t->budget -= text_len; }
    } else {
        add_record(t, kind, key, lang, lkey, text, text_len);
    }
    free(inflated);
}

static int is_text_chunk(uint32_t type)
{
    return type == 0x74455874u || type == 0x7a545874u || type == 0x69545874u; /* tEXt zTXt iTXt */
}

void ts_png_text_read(FILE *f, ts_image *img)
{
    text_buf t = { NULL, 0, 0, TS_PNG_TEXT_MAX };
    unsigned char head[8];
    if (fseek(f, 8, SEEK_SET) != 0) return;
    while (fread(head, 1, 8, f) == 8) {
        uint32_t len = be32(head), type = be32(head + 4);
        if (len > 0x7fffffffu || type == 0x49454e44u) break;      /* IEND */
        if (!is_text_chunk(type) || len > t.budget) {
            if (fseek(f, (long)len + 4, SEEK_CUR) != 0) break;
            continue;
        }
        unsigned char *d = malloc((size_t)len + 4 + 1);
        if (!d) break;
        if (fread(d, 1, (size_t)len + 4, f) != (size_t)len + 4) { free(d); break; }
        uLong crc = crc32(crc32(0L, head + 4, 4), d, len);
        if (crc == be32(d + len)) parse_chunk(img, &t, type, d, len);
        free(d);
    }
    clearerr(f);
    img->text = t.p;
    img->text_len = t.len;
}

const unsigned char *ts_png_text_next(const unsigned char *at, const unsigned char *end, ts_png_text_rec *r)
{
    if (!at || at >= end) return NULL;
    r->kind = (char)*at++;
    const char **fields[4] = { &r->key, &r->lang, &r->lang_key, &r->text };
    for (int i = 0; i < 4; i++)
        if (!(*fields[i] = take_string(&at, end))) return NULL;
    return at;
}

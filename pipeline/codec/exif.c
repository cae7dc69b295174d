/* exif.c - the one EXIF tag tilestream needs: Orientation (0x0112) in IFD0.
 *
 * EXIF data is a TIFF file: a byte-order mark ("II" little-endian, "MM"
 * big-endian), the number 42, the offset of IFD0, then IFD0: a 16-bit entry
 * count and 12-byte entries (tag, type, count, value or offset). Every
 * offset comes from the file, so every read is checked against len.
 * Writers keep the input's EXIF and only rewrite the orientation value in
 * place (the block's layout and every offset stay as they were). */
#include "codec_internal.h"

#include <stdlib.h>
#include <string.h>

#define TAG_ORIENTATION 0x0112
#define TYPE_SHORT 3
#define TYPE_LONG 4

typedef struct tiff_reader {
    const unsigned char *p;
    size_t len;
    int big_endian;
} tiff_reader;

/* 0 when off..off+n is outside the data. */
static int tiff_has(const tiff_reader *t, uint64_t off, uint64_t n)
{
    return off <= t->len && n <= t->len - off;
}

static unsigned tiff_u16(const tiff_reader *t, size_t off)
{
    const unsigned char *b = t->p + off;
    return t->big_endian ? (unsigned)(b[0] << 8 | b[1]) : (unsigned)(b[1] << 8 | b[0]);
}

static uint32_t tiff_u32(const tiff_reader *t, size_t off)
{
    const unsigned char *b = t->p + off;
    if (t->big_endian)
        return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    return (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

/* The value of one IFD entry if it is a plausible orientation, else 0. */
static int orientation_of_entry(const tiff_reader *t, size_t entry)
{
    unsigned type = tiff_u16(t, entry + 2);
    uint32_t count = tiff_u32(t, entry + 4);
    unsigned v;
    if (count < 1)
        return 0;
    if (type == TYPE_SHORT)
        v = tiff_u16(t, entry + 8);  /* short values sit at the start of the field */
    else if (type == TYPE_LONG)
        v = (unsigned)tiff_u32(t, entry + 8);
    else
        return 0;
    return v >= 1 && v <= 8 ? (int)v : 0;
}

/* Offset of IFD0's orientation entry, or 0 when there is none or the
 * data is malformed. */
static size_t find_orientation_entry(tiff_reader *t)
{
    if (!t->p || t->len < 8)
        return 0;
    if (memcmp(t->p, "MM", 2) == 0)
        t->big_endian = 1;
    else if (memcmp(t->p, "II", 2) != 0)
        return 0;
    if (tiff_u16(t, 2) != 42)
        return 0;

    uint64_t ifd = tiff_u32(t, 4);
    if (ifd < 8 || !tiff_has(t, ifd, 2))
        return 0;
    unsigned entries = tiff_u16(t, (size_t)ifd);
    for (unsigned i = 0; i < entries; i++) {
        uint64_t entry = ifd + 2 + 12ull * i;
        if (!tiff_has(t, entry, 12))
            return 0;
        if (tiff_u16(t, (size_t)entry) == TAG_ORIENTATION)
            return (size_t)entry;
    }
    return 0;
}

/* Bytes of one value of a TIFF field type; 0 for types TIFF readers skip. */
static unsigned tiff_type_size(unsigned type)
{
    static const unsigned char size[13] = { 0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8 };
    return type < 13 ? size[type] : 0;
}

/* Every entry of the IFD at ifd, its values and the sub-IFDs that tilestream
 * copies (Exif, GPS, interoperability) inside the block. */
static int ifd_valid(const tiff_reader *t, uint64_t ifd, int depth)
{
    if (depth > 4 || ifd < 8 || !tiff_has(t, ifd, 2)) return 0;
    unsigned entries = tiff_u16(t, (size_t)ifd);
    if (!tiff_has(t, ifd + 2, 12ull * entries + 4)) return 0;
    for (unsigned i = 0; i < entries; i++) {
        size_t e = (size_t)(ifd + 2 + 12ull * i);
        unsigned tag = tiff_u16(t, e), size = tiff_type_size(tiff_u16(t, e + 2));
        uint64_t bytes = (uint64_t)size * tiff_u32(t, e + 4);
        if (bytes > 4 && !tiff_has(t, tiff_u32(t, e + 8), bytes)) return 0;
        if ((tag == 0x8769 || tag == 0x8825 || tag == 0xA005) && !ifd_valid(t, tiff_u32(t, e + 8), depth + 1)) return 0;
    }
    uint64_t next = tiff_u32(t, (size_t)(ifd + 2 + 12ull * entries));
    return next == 0 || (depth == 0 && ifd_valid(t, next, depth + 1));
}

int ts_exif_valid(const unsigned char *tiff, size_t len)
{
    tiff_reader t = {tiff, len, 0};
    if (!tiff || len < 8 || (memcmp(tiff, "MM", 2) && memcmp(tiff, "II", 2))) return 0;
    t.big_endian = tiff[0] == 'M';
    return tiff_u16(&t, 2) == 42 && ifd_valid(&t, tiff_u32(&t, 4), 0);
}

int ts_exif_orientation(const unsigned char *tiff, size_t len)
{
    tiff_reader t = {tiff, len, 0};
    size_t entry = find_orientation_entry(&t);
    return entry ? orientation_of_entry(&t, entry) : 0;
}

int ts_exif_set_orientation(unsigned char *tiff, size_t len, int orientation)
{
    tiff_reader t = {tiff, len, 0};
    size_t entry = find_orientation_entry(&t);
    if (!entry || !orientation_of_entry(&t, entry))
        return 0;
    unsigned char *v = tiff + entry + 8;
    unsigned o = (unsigned)orientation;
    if (tiff_u16(&t, entry + 2) == TYPE_SHORT) {
        v[0] = (unsigned char)(t.big_endian ? 0 : o);
        v[1] = (unsigned char)(t.big_endian ? o : 0);
    } else {   /* LONG */
        memset(v, 0, 4);
        v[t.big_endian ? 3 : 0] = (unsigned char)o;
    }
    return 1;
}

unsigned char *ts_exif_for_output(const ts_image *img, size_t *len)
{
    int o = img->orientation >= 1 && img->orientation <= 8 ? img->orientation : 1;
    if (img->exif && img->exif_len) {
        unsigned char *copy = malloc(img->exif_len);
        if (!copy)
            return NULL;
        memcpy(copy, img->exif, img->exif_len);
        /* A block without the tag says "as stored", right when o is 1. */
        if (ts_exif_set_orientation(copy, img->exif_len, o) || o == 1) {
            *len = img->exif_len;
            return copy;
        }
        free(copy);
    }
    if (o == 1)
        return NULL;
    unsigned char *block = malloc(TS_EXIF_ORIENT_BYTES);
    if (block)
        *len = ts_exif_make_orientation(block, o);
    return block;
}

size_t ts_exif_make_orientation(unsigned char *out, int orientation)
{
    static const unsigned char head[] = {
        'M', 'M', 0, 42, 0, 0, 0, 8,        /* big-endian TIFF, IFD0 at 8 */
        0, 1,                               /* one entry */
        0x01, 0x12, 0, TYPE_SHORT, 0, 0, 0, 1,  /* Orientation, SHORT, count 1 */
    };
    memcpy(out, head, sizeof head);
    out[sizeof head] = 0;
    out[sizeof head + 1] = (unsigned char)orientation;
    memset(out + sizeof head + 2, 0, 2 + 4); /* value padding, no next IFD */
    return TS_EXIF_ORIENT_BYTES;
}

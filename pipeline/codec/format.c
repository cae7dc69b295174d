/* format.c - image format names, extensions, and recognition of a file's
 * format from its first bytes. Reading always goes by content: a PNG named
 * photo.jpg is still read as a PNG. */
#include "codec_internal.h"

#include <string.h>
#include <strings.h>

typedef struct format_entry {
    ts_format format;
    const char *name;       /* canonical name, as --format takes it */
    const char *extension;  /* written for new files */
    const char *aliases[4]; /* other names and extensions (without the dot) */
} format_entry;

static const format_entry formats[] = {
    {TS_FMT_PNG, "png", ".png", {NULL}},
    {TS_FMT_JPEG, "jpg", ".jpg", {"jpeg", "jpe", "jfif", NULL}},
    {TS_FMT_BMP, "bmp", ".bmp", {NULL}},
    {TS_FMT_TGA, "tga", ".tga", {"targa", NULL}},
    {TS_FMT_HDR, "hdr", ".hdr", {"rgbe", "pic", NULL}},
};
#define FORMAT_COUNT (sizeof formats / sizeof formats[0])

static const format_entry *entry_of(ts_format f)
{
    for (size_t i = 0; i < FORMAT_COUNT; i++)
        if (formats[i].format == f)
            return &formats[i];
    return NULL;
}

const char *ts_format_name(ts_format f)
{
    const format_entry *e = entry_of(f);
    return e ? e->name : "unknown";
}

const char *ts_format_extension(ts_format f)
{
    const format_entry *e = entry_of(f);
    return e ? e->extension : "";
}

ts_format ts_format_from_name(const char *name)
{
    if (!name)
        return TS_FMT_UNKNOWN;
    if (name[0] == '.')
        name++;
    for (size_t i = 0; i < FORMAT_COUNT; i++) {
        if (strcasecmp(name, formats[i].name) == 0)
            return formats[i].format;
        for (int k = 0; formats[i].aliases[k]; k++)
            if (strcasecmp(name, formats[i].aliases[k]) == 0)
                return formats[i].format;
    }
    return TS_FMT_UNKNOWN;
}

ts_format ts_format_from_path(const char *path)
{
    if (!path)
        return TS_FMT_UNKNOWN;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    /* ".png" alone is a hidden file named png, not an extension. */
    if (!dot || dot == base || dot[1] == '\0')
        return TS_FMT_UNKNOWN;
    return ts_format_from_name(dot + 1);
}

int ts_format_can_read(ts_format f)
{
    return f == TS_FMT_PNG || f == TS_FMT_JPEG;
}

ts_format ts_format_sniff(const unsigned char *buf, size_t n)
{
    static const unsigned char png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    /* Only the first four bytes decide PNG: a file whose line-ending bytes
     * were mangled in transfer is a damaged PNG, and libpng says so. */
    if (n >= 4 && memcmp(buf, png_sig, 4) == 0)
        return TS_FMT_PNG;
    /* SOI followed by the start of any marker. */
    if (n >= 3 && buf[0] == 0xFF && buf[1] == 0xD8 && buf[2] == 0xFF)
        return TS_FMT_JPEG;
    if (n >= 18 && buf[0] == 'B' && buf[1] == 'M') {
        /* "BM" starts plenty of text too: require a known DIB header size. */
        unsigned dib = buf[14] | buf[15] << 8 | (unsigned)buf[16] << 16 | (unsigned)buf[17] << 24;
        if (dib == 12 || dib == 40 || dib == 52 || dib == 56 || dib == 108 || dib == 124)
            return TS_FMT_BMP;
    }
    if ((n >= 10 && memcmp(buf, "#?RADIANCE", 10) == 0) || (n >= 6 && memcmp(buf, "#?RGBE", 6) == 0))
        return TS_FMT_HDR;
    return TS_FMT_UNKNOWN;
}

/* flatten.c - alpha for formats without it. JPEG and HDR hold no alpha and
 * BMP none with grey, so an image with alpha written to them is composited
 * onto a background colour first; dropping alpha instead would show the
 * colour that transparent pixels happen to hold (often black). */
#include "tilestream.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int ts_format_keeps_alpha(ts_format f, int c)
{
    if (c != 2 && c != 4) return 1;
    return f == TS_FMT_PNG || f == TS_FMT_TGA || (f == TS_FMT_BMP && c == 4);
}

ts_status ts_colour_parse(const char *text, unsigned char rgb[3], ts_err *err)
{
    static const struct { const char *name; unsigned v; } names[] = {
        { "white", 0xffffff }, { "black", 0x000000 }, { "grey", 0x808080 }, { "gray", 0x808080 },
        { "red", 0xff0000 }, { "green", 0x008000 }, { "blue", 0x0000ff },
    };
    unsigned v = 0;
    int ok = 0;
    for (size_t i = 0; text && i < sizeof names / sizeof names[0] && !ok; i++)
        if (!strcasecmp(text, names[i].name)) v = names[i].v, ok = 1;
    const char *hex = text && text[0] == '#' ? text + 1 : text;
    if (!ok && hex && strlen(hex) == 6) {
        ok = 1;
        for (int i = 0; i < 6; i++) ok &= isxdigit((unsigned char)hex[i]) != 0;
        if (ok) v = (unsigned)strtoul(hex, NULL, 16);
    }
    if (!ok)
        return ts_err_set(err, TS_E_ARG, "'%s' is not a colour (white, black, grey, red, green, blue, or #rrggbb)",
                          text ? text : "");
    rgb[0] = (unsigned char)(v >> 16), rgb[1] = (unsigned char)(v >> 8), rgb[2] = (unsigned char)v;
    return TS_OK;
}

/* colour over bg by alpha a, all in 0..max (exact, rounded to nearest) */
static unsigned over(unsigned colour, unsigned a, unsigned bg, unsigned max)
{
    return (unsigned)(((uint64_t)colour * a + (uint64_t)bg * (max - a) + max / 2) / max);
}

ts_status ts_image_flatten(const ts_image *in, const unsigned char bg[3], ts_image *out, ts_err *err)
{
    int colours = in->c - 1;
    ts_status st = ts_image_alloc(out, in->w, in->h, colours, in->type, 0, NULL, err);
    if (st != TS_OK) return st;
    /* grey images go onto the background's luma */
    double grey = 0.299 * bg[0] + 0.587 * bg[1] + 0.114 * bg[2];
    for (int y = 0; y < in->h; y++) {
        const unsigned char *s = in->data + (size_t)y * in->stride;
        unsigned char *d = out->data + (size_t)y * out->stride;
        for (int x = 0; x < in->w; x++)
            for (int k = 0; k < colours; k++) {
                double b = colours == 1 ? grey : bg[k];
                size_t i = (size_t)x * (size_t)in->c + (size_t)k, a = (size_t)x * (size_t)in->c + (size_t)colours;
                size_t o = (size_t)x * (size_t)colours + (size_t)k;
                if (in->type == TS_U8)
                    d[o] = (unsigned char)over(s[i], s[a], (unsigned)(b + 0.5), 255);
                else if (in->type == TS_U16)
                    ((uint16_t *)d)[o] = (uint16_t)over(((const uint16_t *)s)[i], ((const uint16_t *)s)[a],
                                                        (unsigned)(b * 257 + 0.5), 65535);
                else {
                    float al = ((const float *)s)[a];
                    al = al < 0 ? 0 : al > 1 ? 1 : al;
                    ((float *)d)[o] = ((const float *)s)[i] * al + (float)(b / 255) * (1 - al);
                }
            }
    }
    out->orientation = in->orientation;
    st = ts_image_copy_metadata(out, in, err);
    if (st != TS_OK) ts_image_free(out);
    return st;
}

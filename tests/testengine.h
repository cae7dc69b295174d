/* testengine.h - test helpers for whole images and engines, through the
 * public API: an image as a view, a random image, exact equality, an engine
 * of given streams, tiles, path and device, and the device check that makes
 * a GPU test skip. Header-only; include after check.h, testimg.h and
 * tilestream.h. */
#ifndef TS_TESTENGINE_H
#define TS_TESTENGINE_H

#include "check.h"
#include "testimg.h"
#include "tilestream.h"

#include <stdio.h>
#include <string.h>

/* The whole of img as a view. */
static inline ts_view tengine_view(const ts_image *img)
{
    ts_view v;
    memset(&v, 0, sizeof v);
    v.data = img->data;
    v.pitch = img->stride;
    v.w = v.full_w = img->w;
    v.h = v.full_h = img->h;
    v.c = img->c;
    v.type = img->type;
    return v;
}

/* A w x h image of c x t filled with timg_random, from allocator a (NULL:
 * malloc); 0 (with a message) when it cannot be allocated. */
static inline int tengine_random_image(ts_image *img, int w, int h, int c, ts_type t, const ts_allocator *a)
{
    ts_err err = {0};
    if (ts_image_alloc(img, w, h, c, t, 0, a, &err) != TS_OK) {
        fprintf(stderr, "alloc: %s\n", err.msg);
        return 0;
    }
    ts_view v = tengine_view(img);
    timg_random(&v);
    return 1;
}

/* 1 when both images have pixels, the same shape and the same bytes. */
static inline int tengine_same(const ts_image *a, const ts_image *b)
{
    if (!a->data || !b->data || a->w != b->w || a->h != b->h || a->c != b->c || a->type != b->type) return 0;
    size_t row = (size_t)a->w * (size_t)a->c * (size_t)a->type;
    for (int y = 0; y < a->h; y++)
        if (memcmp(a->data + (size_t)y * a->stride, b->data + (size_t)y * b->stride, row)) return 0;
    return 1;
}

/* An engine on device `device` with `streams` streams, tiles tw x th (0:
 * automatic) and the given path; NULL (a failed check) when it cannot be
 * made. */
static inline ts_engine *tengine_make(int device, int streams, int tw, int th, ts_path path)
{
    ts_engine_opts o;
    memset(&o, 0, sizeof o);
    o.device = device;
    o.streams = streams;
    o.tile_w = tw;
    o.tile_h = th;
    o.path = path;
    ts_engine *e = NULL;
    ts_err err = {0};
    CHECK_MSG(ts_engine_create(&o, &e, &err) == TS_OK, "engine (device %d, %d streams, tiles %dx%d): %s", device,
              streams, tw, th, err.msg);
    return e;
}

/* 1 when the GPU engine can run (name gets the device); otherwise says
 * why, and the test returns 77 (skipped). */
static inline int tengine_gpu_ready(char *name, size_t n)
{
    ts_err err = {0};
    if (!ts_gpu_probe(name, n, &err)) {
        fprintf(stderr, "skipping: %s\n", err.msg);
        return 0;
    }
    return 1;
}

#endif

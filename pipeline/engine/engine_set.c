/* engine_set.c - a run's GPU engines: one per entry of --gpus, each with
 * its own streams, slots and pinned pool (its share of the pinned limit),
 * warmed up before any stage is timed, and one allocator for decoded
 * images that tries every engine's pinned pool first. */
#include "engine_internal.h"

#include <stdio.h>
#include <string.h>

/* Run the chain once on small RGB and RGBA images so that CUDA loads the
 * kernels it uses (modules load lazily on first launch) before any stage
 * is timed. */
static void warm_up(ts_engine *e, const ts_chain *chain)
{
    for (int c = 3; c <= 4; c++) {
        ts_image img = { 0 }, out = { 0 };
        ts_err er = { 0 };
        if (ts_image_alloc(&img, 16, 16, c, TS_U8, 0, NULL, &er) != TS_OK) continue;
        for (size_t i = 0; i < img.stride * 16; i++) img.data[i] = (unsigned char)(i * 37);
        ts_gpu_run(e, chain, &img, &out, &er);
        ts_image_free(&out);
        ts_image_free(&img);
    }
}

ts_status ts_engine_set_start(ts_engine_set *s, const ts_engine_set_opts *o, const int *devices, int n, ts_err *err)
{
    memset(s, 0, sizeof *s);
    if (n < 1 || n > TS_MAX_ENGINES) return ts_err_set(err, TS_E_DEVICE, "no CUDA device for the GPU engines");
    s->streams = o->streams > 0 ? o->streams : TS_STREAMS_DEFAULT;
    /* TS_STREAMS_MAX coefficient slots in all, shared out over the engines */
    if (n * s->streams > TS_STREAMS_MAX) s->streams = TS_STREAMS_MAX / n > 0 ? TS_STREAMS_MAX / n : 1;
    for (int k = 0; k < n; k++) {
        char name[32];
        int again = 0;
        for (int m = 0; m < k; m++) again += devices[m] == devices[k];
        if (again) snprintf(name, sizeof name, "gpu%d.%d", devices[k], again);
        else snprintf(name, sizeof name, "gpu%d", devices[k]);
        ts_engine_opts eo;
        memset(&eo, 0, sizeof eo);
        eo.streams = s->streams;
        eo.tile_w = o->tile_w;
        eo.tile_h = o->tile_h;
        eo.path = o->path;
        eo.trace = o->trace;
        eo.device = devices[k];
        eo.pinned_limit = (size_t)(o->pinned_limit / (uint64_t)n);
        eo.name = n > 1 ? name : NULL;
        double t0 = ts_now();
        ts_status st = ts_engine_create(&eo, &s->e[k], err);
        double t1 = ts_now();
        s->context_s += t1 - t0;
        if (st != TS_OK) return st;
        s->device[k] = devices[k];
        s->n++;
        warm_up(s->e[k], o->warm_chain);
        s->warmup_s += ts_now() - t1;
    }
    return TS_OK;
}

int ts_engine_set_one_device(const ts_engine_set *s)
{
    for (int k = 1; k < s->n; k++)
        if (s->device[k] != s->device[0]) return 0;
    return s->n > 0;
}

/* Pinned memory from the first engine's pool with room, else NULL. */
static void *pinned_alloc(void *ctx, size_t bytes)
{
    ts_engine_set *s = ctx;
    for (int k = 0; k < s->n; k++) {
        ts_allocator a = ts_engine_pinned_allocator(s->e[k]);
        void *p = a.alloc(a.ctx, bytes);
        if (p) return p;
    }
    return NULL;
}

/* Pinned memory when some engine's pool has room (copies from it
 * overlap), else pageable memory from the first pool's fallback (the
 * engine stages it). */
static void *decode_alloc(void *ctx, size_t bytes)
{
    ts_engine_set *s = ctx;
    void *p = pinned_alloc(ctx, bytes);
    if (p) {
        __atomic_add_fetch(&s->pinned_decodes, 1, __ATOMIC_RELAXED);
        return p;
    }
    __atomic_add_fetch(&s->pageable_decodes, 1, __ATOMIC_RELAXED);
    ts_allocator a = ts_engine_allocator(s->e[0]);
    return a.alloc(a.ctx, bytes);
}

static void decode_free(void *ctx, void *p)
{
    ts_engine_set *s = ctx;
    ts_allocator a = ts_engine_allocator(s->e[0]);
    a.free(a.ctx, p);
}

ts_allocator ts_engine_set_decode_allocator(ts_engine_set *s) { return (ts_allocator){ decode_alloc, decode_free, s }; }
ts_allocator ts_engine_set_pinned_allocator(ts_engine_set *s) { return (ts_allocator){ pinned_alloc, decode_free, s }; }

void ts_engine_set_attach_trace(ts_engine_set *s, ts_trace *t)
{
    for (int k = 0; k < s->n; k++) ts_engine_attach_trace(s->e[k], t);
}

void ts_engine_set_free(ts_engine_set *s)
{
    for (int k = 0; k < s->n; k++) ts_engine_destroy(s->e[k]);
    s->n = 0;
}

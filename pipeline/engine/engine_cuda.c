/* engine_cuda.c - the GPU engine: streams images through the device in
 * tiles, overlapping copies in both directions with the kernels.
 *
 *   pinned input ──H2D──▶ [expand RGB→RGBX] ─▶ op kernels (ping-pong) ─▶
 *                 [pack RGBX→RGB] ──D2H──▶ pinned output
 *
 * As in cuda-samples' simpleMultiCopy, work goes round a ring of streams
 * ("lanes"): each output tile is given to the next lane, and each lane owns
 * its device buffers, so tiles on different lanes run at the same time and
 * tiles on one lane run in order. Small images travel as one tile each
 * (several images in flight); large ones as full-width strips of a few MB
 * (PCIe reaches full speed only for transfers of several MB).
 *
 * Timing: CUDA events between the stages of every tile, turned into trace
 * events on the ts_now() clock once the image has completed.
 *
 * Threads: submit and collect belong to one thread; the pinned pool
 * (ts_engine_allocator) may be used from any thread. */
#include "engine_internal.h"
#include "plan.h"
#include "pinned.h"
#include "trace_internal.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ================================================================ engine */

/* One stream of the ring and the device buffers only it uses. */
typedef struct lane {
    cudaStream_t stream;
    int index;                 /* also the kernels' coefficient slot */
    int trace_lane;
    unsigned char *raw;        /* packed RGB of a tile (c = 3 only) */
    size_t raw_cap;
    unsigned char *work[2];    /* ping-pong stage buffers */
    size_t work_cap;
    unsigned char *stage_in, *stage_out;   /* pinned bounce buffers for pageable images */
    size_t stage_in_cap, stage_out_cap;
} lane;

/* A host copy between a pageable image and a lane's pinned bounce buffer,
 * run in stream order by cudaLaunchHostFunc: after the previous copy out
 * of the buffer (so it may be overwritten) and before the next one. */
typedef struct host_copy {
    unsigned char *dst;
    const unsigned char *src;
    size_t dst_stride, src_stride, row_bytes;
    int rows;
    ts_trace *trace;
    int trace_lane, image;
    const char *stage;
    struct host_copy *next;
} host_copy;

/* A timed stage of one tile: between marks m0 and m1 of the job. */
typedef struct span {
    int m0, m1;
    const char *stage;
    uint64_t bytes;
    int lane;
} span;

/* One submitted image. */
typedef struct job {
    void *tag;
    int image;
    cudaEvent_t *marks;
    int n_marks, cap_marks;
    struct { int first, last; } *tiles;   /* first and last mark of every tile */
    int n_tiles, cap_tiles;
    span *spans;
    int n_spans, cap_spans;
    host_copy *copies;         /* freed once the job has completed */
    struct job *next;
} job;

struct ts_engine {
    int device;                /* CUDA device ordinal: made current on every entry */
    int n_lanes, next_lane;
    lane lanes[TSK_SLOTS];
    int tile_w, tile_h;
    ts_path path;
    ts_trace *trace;
    const ts_allocator *out_alloc;
    ts_allocator out_alloc_copy;
    ts_pinned_pool *pool;
    cudaEvent_t *free_events;
    int n_free_events, cap_free_events;
    char name[32];             /* "gpu0", "gpu0.1": in lane and stage names when set */
    cudaEvent_t calib;         /* recorded at calib_t on the ts_now() clock */
    cudaStream_t alloc_stream; /* where device images are allocated and freed */
    double calib_t;
    job *head, *tail;          /* pending images, oldest first */
    int n_pending;
    int n_submitted, n_done;
    int dead;                  /* a device error: the context is unusable */
    char dead_msg[512];
};

static ts_status cuda_fail(cudaError_t e, const char *what, ts_err *err)
{
    return ts_err_set(err, TS_E_DEVICE, "%s: %s", what, cudaGetErrorString(e));
}

/* ---------------------------------------------------------------- events */

static cudaEvent_t event_get(ts_engine *e)
{
    if (e->n_free_events > 0) return e->free_events[--e->n_free_events];
    cudaEvent_t ev = NULL;
    /* Blocking sync: collect sleeps instead of spinning a core the codec
     * workers need. */
    if (cudaEventCreateWithFlags(&ev, cudaEventBlockingSync) != cudaSuccess) return NULL;
    return ev;
}

static void event_put(ts_engine *e, cudaEvent_t ev)
{
    if (!ev) return;
    if (e->n_free_events == e->cap_free_events) {
        int cap = e->cap_free_events ? e->cap_free_events * 2 : 256;
        cudaEvent_t *p = realloc(e->free_events, (size_t)cap * sizeof *p);
        if (!p) {
            cudaEventDestroy(ev);
            return;
        }
        e->free_events = p;
        e->cap_free_events = cap;
    }
    e->free_events[e->n_free_events++] = ev;
}

/* Grow a job array to hold one more element. */
static int grow(void **arr, int *cap, int n, size_t elem)
{
    if (n < *cap) return 1;
    int c = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)c * elem);
    if (!p) return 0;
    *arr = p;
    *cap = c;
    return 1;
}

/* Record a new mark on stream s; returns its index or -1. */
static int job_mark(ts_engine *e, job *j, cudaStream_t s, ts_err *err)
{
    if (!grow((void **)&j->marks, &j->cap_marks, j->n_marks, sizeof *j->marks)) {
        ts_err_set(err, TS_E_NOMEM, "out of memory for events");
        return -1;
    }
    cudaEvent_t ev = event_get(e);
    if (!ev) {
        ts_err_set(err, TS_E_DEVICE, "cannot create a CUDA event: %s", cudaGetErrorString(cudaGetLastError()));
        return -1;
    }
    j->marks[j->n_marks] = ev;
    cudaError_t ce = cudaEventRecord(ev, s);
    if (ce != cudaSuccess) {
        event_put(e, ev);
        cuda_fail(ce, "cudaEventRecord", err);
        return -1;
    }
    return j->n_marks++;
}

static int job_span(job *j, int m0, int m1, const char *stage, uint64_t bytes, int lane_index)
{
    if (!grow((void **)&j->spans, &j->cap_spans, j->n_spans, sizeof *j->spans)) return 0;
    j->spans[j->n_spans++] = (span){m0, m1, stage, bytes, lane_index};
    return 1;
}

static void job_free(ts_engine *e, job *j)
{
    for (int i = 0; i < j->n_marks; i++) event_put(e, j->marks[i]);
    free(j->marks);
    free(j->tiles);
    free(j->spans);
    while (j->copies) {
        host_copy *c = j->copies;
        j->copies = c->next;
        free(c);
    }
    free(j);
}

/* Calibrate the event clock against ts_now(): record an event, wait for
 * it, read the clock. Done while the device is idle, so the event fires
 * just before the wait returns. */
static ts_status calibrate(ts_engine *e, ts_err *err)
{
    cudaError_t ce = cudaEventRecord(e->calib, e->lanes[0].stream);
    if (ce == cudaSuccess) ce = cudaEventSynchronize(e->calib);
    if (ce != cudaSuccess) return cuda_fail(ce, "calibrating the event clock", err);
    e->calib_t = ts_now();
    return TS_OK;
}

/* ---------------------------------------------------------------- create */

/* Coefficient banks and texture rings are per slot and process-wide (the
 * kernels keep one host-side cache per slot): engines on one device or
 * several must never share a slot, so each lane claims one here. */
static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned slot_used;   /* bit i: slot i belongs to a lane */

static int slot_claim(void)
{
    int got = -1;
    pthread_mutex_lock(&slot_lock);
    for (int i = 0; i < TSK_SLOTS && got < 0; i++)
        if (!(slot_used & (1u << i))) {
            slot_used |= 1u << i;
            got = i;
        }
    pthread_mutex_unlock(&slot_lock);
    return got;
}

static void slot_release(int slot)
{
    pthread_mutex_lock(&slot_lock);
    slot_used &= ~(1u << slot);
    pthread_mutex_unlock(&slot_lock);
}

/* Every entry point runs on the engine's device: the caller's thread may
 * have last used another engine's. */
static ts_status use_device(const ts_engine *e, ts_err *err)
{
    cudaError_t ce = cudaSetDevice(e->device);
    return ce == cudaSuccess ? TS_OK : cuda_fail(ce, "selecting the CUDA device", err);
}

static void engine_release_buffers(ts_engine *e)
{
    for (int i = 0; i < e->n_lanes; i++) {
        lane *l = &e->lanes[i];
        cudaFree(l->raw);
        cudaFree(l->work[0]);
        cudaFree(l->work[1]);
        l->raw = l->work[0] = l->work[1] = NULL;
        l->raw_cap = l->work_cap = 0;
        cudaFreeHost(l->stage_in);
        cudaFreeHost(l->stage_out);
        l->stage_in = l->stage_out = NULL;
        l->stage_in_cap = l->stage_out_cap = 0;
    }
}

/* A trace lane per stream, named after the engine ("gpu1 stream 0"). */
static void name_lanes(ts_engine *e)
{
    for (int i = 0; e->trace && i < e->n_lanes; i++) {
        char name[64];
        if (e->name[0]) snprintf(name, sizeof name, "%s stream %d", e->name, i);
        else if (e->device == 0) snprintf(name, sizeof name, "stream %d", i);
        else snprintf(name, sizeof name, "gpu %d stream %d", e->device, i);
        e->lanes[i].trace_lane = ts_trace_lane(e->trace, name);
    }
}

void ts_engine_attach_trace(ts_engine *e, ts_trace *t)
{
    e->trace = t;
    name_lanes(e);
}

ts_status ts_engine_create(const ts_engine_opts *opts, ts_engine **out, ts_err *err)
{
    *out = NULL;
    int n = opts && opts->streams ? opts->streams : TS_STREAMS_DEFAULT;
    ts_status checked = ts_option_check(TS_OPT_STREAMS, n, err);
    if (checked != TS_OK) return checked;
    if (opts && (opts->tile_w < 0 || opts->tile_h < 0))
        return ts_err_set(err, TS_E_ARG, "--tile %dx%d: must not be negative", opts->tile_w, opts->tile_h);
    int device = opts ? opts->device : 0, n_dev = 0;
    cudaError_t ce = cudaGetDeviceCount(&n_dev);
    if (ce != cudaSuccess) return cuda_fail(ce, "no usable CUDA device", err);
    if (device < 0 || device >= n_dev)
        return ts_err_set(err, TS_E_ARG, "CUDA device %d: this machine has %d (0 to %d)", device, n_dev, n_dev - 1);
    ce = cudaSetDevice(device);
    if (ce == cudaSuccess) ce = cudaFree(0); /* create the context now, and fail here if it cannot be */
    if (ce != cudaSuccess) return cuda_fail(ce, "no usable CUDA device", err);
    ts_engine *e = calloc(1, sizeof *e);
    if (!e) return ts_err_set(err, TS_E_NOMEM, "out of memory for the GPU engine");
    if (!(e->pool = ts_pinned_pool_create(opts ? opts->pinned_limit : 0))) {
        free(e);
        return ts_err_set(err, TS_E_NOMEM, "out of memory for the pinned pool");
    }
    e->device = device;
    for (int i = 0; i < TSK_SLOTS; i++) e->lanes[i].index = -1;
    e->tile_w = opts ? opts->tile_w : 0;
    e->tile_h = opts ? opts->tile_h : 0;
    e->path = opts ? opts->path : TS_PATH_GLOBAL;
    e->trace = opts ? opts->trace : NULL;
    if (opts && opts->name) snprintf(e->name, sizeof e->name, "%s", opts->name);
    ts_status st = TS_OK;
    for (int i = 0; i < n && st == TS_OK; i++) {
        lane *l = &e->lanes[i];
        if ((l->index = slot_claim()) < 0) {
            st = ts_err_set(err, TS_E_ARG, "more than %d streams over all engines of this process", (int)TSK_SLOTS);
            break;
        }
        /* Non-blocking: no implicit ordering with the legacy default stream. */
        ce = cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking);
        if (ce != cudaSuccess) {
            slot_release(l->index);
            l->index = -1;
            st = cuda_fail(ce, "cudaStreamCreate", err);
            break;
        }
        e->n_lanes++;
        l->trace_lane = -1;
    }
    if (st == TS_OK) name_lanes(e);
    if (st == TS_OK && (ce = cudaEventCreate(&e->calib)) != cudaSuccess) st = cuda_fail(ce, "cudaEventCreate", err);
    if (st == TS_OK && (ce = cudaStreamCreateWithFlags(&e->alloc_stream, cudaStreamNonBlocking)) != cudaSuccess)
        st = cuda_fail(ce, "cudaStreamCreate", err);
    if (st == TS_OK) {
        /* Device images come from the stream-ordered pool; keep what it has
         * (by default it returns memory at every sync, and the next image
         * pays for a fresh cudaMalloc). */
        cudaMemPool_t mp;
        uint64_t keep = UINT64_MAX;
        if (cudaDeviceGetDefaultMemPool(&mp, device) == cudaSuccess)
            cudaMemPoolSetAttribute(mp, cudaMemPoolAttrReleaseThreshold, &keep);
        cudaGetLastError();   /* a device without pools still runs; device images then fail to allocate */
    }
    if (st == TS_OK) st = calibrate(e, err);
    if (st != TS_OK) {
        ts_engine_destroy(e);
        return st;
    }
    *out = e;
    return TS_OK;
}

void ts_engine_destroy(ts_engine *e)
{
    if (!e) return;
    cudaSetDevice(e->device);
    for (int i = 0; i < e->n_lanes; i++) cudaStreamSynchronize(e->lanes[i].stream);
    while (e->head) {
        job *j = e->head;
        e->head = j->next;
        job_free(e, j);
    }
    engine_release_buffers(e);
    for (int i = 0; i < e->n_lanes; i++) {
        cudaStreamDestroy(e->lanes[i].stream);
        slot_release(e->lanes[i].index);
    }
    for (int i = 0; i < e->n_free_events; i++) cudaEventDestroy(e->free_events[i]);
    free(e->free_events);
    if (e->calib) cudaEventDestroy(e->calib);
    if (e->alloc_stream) {
        cudaStreamSynchronize(e->alloc_stream);
        cudaStreamDestroy(e->alloc_stream);
    }
    ts_pinned_pool_destroy(e->pool);
    free(e);
}

ts_allocator ts_engine_allocator(ts_engine *e)
{
    ts_allocator a = {ts_pinned_pool_alloc, ts_pinned_pool_free, e->pool};
    return a;
}

ts_allocator ts_engine_pinned_allocator(ts_engine *e)
{
    ts_allocator a = {ts_pinned_pool_alloc_pinned, ts_pinned_pool_free, e->pool};
    return a;
}

ts_allocator ts_engine_pinnable_allocator(void) { return (ts_allocator){ ts_pinnable_alloc, ts_pinnable_free, NULL }; }

int ts_engine_pin_in_place(ts_image *img)
{
    return img->data && img->alloc.free == ts_pinnable_free && ts_pinnable_pin(img->data);
}

size_t ts_engine_pinned_bytes(ts_engine *e)
{
    return ts_pinned_pool_bytes(e->pool);
}

void ts_engine_set_out_allocator(ts_engine *e, const ts_allocator *a)
{
    if (a) e->out_alloc_copy = *a;
    e->out_alloc = a ? &e->out_alloc_copy : NULL;
}

/* Device images: stream-ordered allocations on the engine's alloc stream,
 * synchronised so that any stream may use them at once. A free is queued
 * on the same stream; every use of the image has completed by then (its
 * owner waited for the last one). */
static void *device_alloc(void *ctx, size_t bytes)
{
    ts_engine *e = ctx;
    void *p = NULL;
    if (cudaSetDevice(e->device) != cudaSuccess || cudaMallocAsync(&p, bytes ? bytes : 1, e->alloc_stream) != cudaSuccess ||
        cudaStreamSynchronize(e->alloc_stream) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return p;
}

static void device_free(void *ctx, void *p)
{
    ts_engine *e = ctx;
    if (!p) return;
    cudaSetDevice(e->device);
    if (cudaFreeAsync(p, e->alloc_stream) != cudaSuccess) cudaGetLastError();
}

ts_allocator ts_engine_device_allocator(ts_engine *e)
{
    ts_allocator a = {device_alloc, device_free, e};
    return a;
}

ts_status ts_engine_image_to_host(ts_engine *e, ts_image *img, ts_err *err)
{
    if (!img->data || img->alloc.alloc != device_alloc) return TS_OK;
    if (use_device(e, err) != TS_OK) return err ? err->status : TS_E_DEVICE;
    size_t bytes = img->stride * (size_t)img->h;
    unsigned char *host = malloc(bytes ? bytes : 1);
    if (!host) return ts_err_set(err, TS_E_NOMEM, "cannot allocate %zu bytes for a %dx%d image", bytes, img->w, img->h);
    cudaError_t ce = cudaMemcpy(host, img->data, bytes, cudaMemcpyDeviceToHost);
    if (ce != cudaSuccess) {
        free(host);
        return cuda_fail(ce, "copying an image from the device", err);
    }
    img->alloc.free(img->alloc.ctx, img->data);
    memset(&img->alloc, 0, sizeof img->alloc);
    img->data = host;
    return TS_OK;
}

/* ---------------------------------------------------------------- tiles */

/* Device rows are aligned to 64 bytes: enough for 16-byte vector access
 * and for texture objects (texturePitchAlignment is 32 on Hopper), and a
 * region whose rows are already a multiple of 64 bytes gets pitch ==
 * width, so its copies are contiguous rather than pitched. */
enum { PITCH_ALIGN = 64 };
/* Whole images cross the bus faster than strips of them: fewer, larger
 * copies and no short pitched rows. So images up to WHOLE_BYTES a stage go
 * whole and only larger ones are cut, rather than every image going in
 * strips (docs/measurements/pipeline.md). */
#define STRIP_BYTES ((size_t)16 << 20)    /* target output bytes per strip */
#define WHOLE_BYTES ((size_t)64 << 20)    /* up to this per stage: one tile */
#define MIN_ROW_BYTES 4096                /* pitched copies reach full speed from here */

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* Device pitch of a region of w pixels of px bytes. */
static size_t dev_pitch(int w, size_t px) { return align_up((size_t)(w > 0 ? w : 1) * px, PITCH_ALIGN); }

/* The geometry of one image's run: plan, tile size, buffer sizes. */
typedef struct layout {
    ts_plan plan;
    int c, cw;                 /* channels on the host, on the device */
    int expand;                /* RGB crosses the bus packed and is expanded on the device */
    size_t esz;                /* bytes per channel */
    int out_w, out_h;
    int tw, th;                /* output tile size */
    ts_rect *r;                /* n+1 regions (scratch) */
    size_t raw_need, work_need;
    int in_pageable, out_pageable;   /* staged through the lanes' bounce buffers */
    int in_device, out_device;       /* already on the GPU: the copies are device to device */
} layout;

/* Buffer sizes for tiles of tw x th. */
static void layout_measure(layout *L)
{
    const ts_plan *p = &L->plan;
    L->raw_need = L->work_need = 0;
    for (int y = 0; y < L->out_h; y += L->th)
        for (int x = 0; x < L->out_w; x += L->tw) {
            ts_rect t = {x, y, x + L->tw <= L->out_w ? L->tw : L->out_w - x,
                         y + L->th <= L->out_h ? L->th : L->out_h - y};
            ts_plan_regions(p, t, L->r);
            for (int k = 0; k <= p->n; k++) {
                size_t b = dev_pitch(L->r[k].w, (size_t)L->cw * L->esz) * (size_t)L->r[k].h;
                if (b > L->work_need) L->work_need = b;
            }
            if (L->expand) {
                size_t b0 = dev_pitch(L->r[0].w, 3 * L->esz) * (size_t)L->r[0].h;
                size_t bn = dev_pitch(L->r[p->n].w, 3 * L->esz) * (size_t)L->r[p->n].h;
                if (b0 > L->raw_need) L->raw_need = b0;
                if (bn > L->raw_need) L->raw_need = bn;
            }
        }
}

/* Bytes per row of the narrower of the two copies of the first tile. */
static size_t narrow_row(layout *L, int tw, int th)
{
    ts_rect t = {0, 0, tw, th};
    ts_plan_regions(&L->plan, t, L->r);
    size_t px = (size_t)L->c * L->esz;
    size_t in_row = (size_t)L->r[0].w * px, out_row = (size_t)tw * px;
    return in_row < out_row ? in_row : out_row;
}

/* Pick the tile size: the user's, else one tile when every stage is small,
 * else strips of about STRIP_BYTES of output. Full-width strips need
 * full-width input unless the chain transposes; then full-height strips
 * of output keep the input rows wide, if their own rows are wide enough. */
static void layout_choose(layout *L, int user_w, int user_h)
{
    size_t px = (size_t)L->c * L->esz;
    if (user_w || user_h) {
        L->tw = user_w && user_w < L->out_w ? user_w : L->out_w;
        L->th = user_h && user_h < L->out_h ? user_h : L->out_h;
        return;
    }
    L->tw = L->out_w;
    L->th = L->out_h;
    layout_measure(L);
    if (L->work_need <= WHOLE_BYTES) return;
    size_t rows = STRIP_BYTES / ((size_t)L->out_w * px);
    int th = rows < 1 ? 1 : rows > (size_t)L->out_h ? L->out_h : (int)rows;
    size_t cols = STRIP_BYTES / ((size_t)L->out_h * px);
    if (cols * px < MIN_ROW_BYTES) cols = (MIN_ROW_BYTES + px - 1) / px;
    int tw = cols < 1 ? 1 : cols > (size_t)L->out_w ? L->out_w : (int)cols;
    size_t by_rows = narrow_row(L, L->out_w, th), by_cols = narrow_row(L, tw, L->out_h);
    if (by_rows < MIN_ROW_BYTES && by_cols > by_rows) L->tw = tw;
    else L->th = th;
}

static void layout_free(layout *L)
{
    ts_plan_free(&L->plan);
    free(L->r);
    L->r = NULL;
}

/* Make sure lane l's buffers hold the layout's needs; grow them (after the
 * lane's queued work is done with the old ones) when not. */
static cudaError_t lane_reserve(lane *l, const layout *L)
{
    cudaError_t ce = cudaSuccess;
    size_t work = L->work_need, raw = L->raw_need;
    if (work > l->work_cap || raw > l->raw_cap) {
        ce = cudaStreamSynchronize(l->stream);
        if (ce != cudaSuccess) return ce;
    }
    if (work > l->work_cap) {
        size_t cap = align_up(work + work / 8, (size_t)1 << 20);   /* headroom against regrowing */
        cudaFree(l->work[0]);
        cudaFree(l->work[1]);
        l->work[0] = l->work[1] = NULL;
        l->work_cap = 0;
        ce = cudaMalloc((void **)&l->work[0], cap);
        if (ce == cudaSuccess) ce = cudaMalloc((void **)&l->work[1], cap);
        if (ce != cudaSuccess) return ce;
        l->work_cap = cap;
    }
    if (raw > l->raw_cap) {
        size_t cap = align_up(raw + raw / 8, (size_t)1 << 20);
        cudaFree(l->raw);
        l->raw = NULL;
        l->raw_cap = 0;
        ce = cudaMalloc((void **)&l->raw, cap);
        if (ce != cudaSuccess) return ce;
        l->raw_cap = cap;
    }
    return cudaSuccess;
}

/* Reserve buffers on every lane the image will use. On out-of-memory,
 * free all buffers and halve the tile height until it fits. */
static ts_status reserve_all(ts_engine *e, layout *L, int n_tiles_hint, ts_err *err)
{
    for (;;) {
        int used = n_tiles_hint < e->n_lanes ? n_tiles_hint : e->n_lanes;
        cudaError_t ce = cudaSuccess;
        for (int i = 0; i < used && ce == cudaSuccess; i++)
            ce = lane_reserve(&e->lanes[(e->next_lane + i) % e->n_lanes], L);
        if (ce == cudaSuccess) return TS_OK;
        if (ce != cudaErrorMemoryAllocation) return cuda_fail(ce, "allocating device buffers", err);
        cudaGetLastError();
        for (int i = 0; i < e->n_lanes; i++) cudaStreamSynchronize(e->lanes[i].stream);
        engine_release_buffers(e);
        /* Down to strips of one row; narrower would mean millions of
         * tiles, and a device that cannot hold one row is out anyway. */
        if (L->th > 1) L->th = (L->th + 1) / 2;
        else return ts_err_set(err, TS_E_NOMEM, "out of device memory even for tiles of one row (%.2f MB a stream)",
                               (double)(2 * L->work_need + L->raw_need) / 1e6);
        layout_measure(L);
        n_tiles_hint = ((L->out_w + L->tw - 1) / L->tw) * ((L->out_h + L->th - 1) / L->th);
    }
}

/* ---------------------------------------------------------------- submit */

static ts_view dev_view(unsigned char *buf, ts_rect r, int full_w, int full_h, int c, ts_type t)
{
    ts_view v;
    v.data = buf;
    v.pitch = dev_pitch(r.w, (size_t)c * (size_t)t);
    v.x0 = r.x0; v.y0 = r.y0; v.w = r.w; v.h = r.h;
    v.full_w = full_w; v.full_h = full_h;
    v.c = c; v.type = t;
    return v;
}

/* An op carrying a fused one is a stage of its own. */
static const char *stage_name(const tsk_op *op)
{
    if (op->kind == TSK_ORIENT && op->u.orient.matrix) return "orient+matrix";
    if (op->kind == TSK_CONV_SEP && op->u.sep.then.code)
        return op->u.sep.then.code == 1 ? "conv_sep+matrix" : op->u.sep.then.matrix ? "conv_sep+orient+matrix" : "conv_sep+orient";
    const tsk_kind_info *info = tsk_kind_info_of(op->kind);
    return info ? info->stage : "kernel";
}

static uint64_t rect_bytes(ts_rect r, size_t px) { return (uint64_t)r.w * (uint64_t)r.h * px; }

/* Mark the end of a stage that began at mark *m: records a mark and a span. */
static ts_status stage_done(ts_engine *e, job *j, lane *l, int *m, const char *stage, uint64_t bytes, ts_err *err)
{
    if (!e->trace) return TS_OK;
    int m1 = job_mark(e, j, l->stream, err);
    if (m1 < 0) return err ? err->status : TS_E_DEVICE;
    if (!job_span(j, *m, m1, stage, bytes, (int)(l - e->lanes))) return ts_err_set(err, TS_E_NOMEM, "out of memory for spans");
    *m = m1;
    return TS_OK;
}

static ts_status copy_status(cudaError_t ce, const char *what, ts_err *err)
{
    return ce == cudaSuccess ? TS_OK : cuda_fail(ce, what, err);
}

/* Where p lives: cudaMemoryTypeDevice (an image already on the GPU, as
 * nvJPEG decodes it), cudaMemoryTypeHost (pinned: copies overlap with
 * other work) or, for pageable memory the engine stages through a bounce
 * buffer, cudaMemoryTypeUnregistered. */
static enum cudaMemoryType memory_type(const void *p)
{
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();   /* not sticky */
        return cudaMemoryTypeUnregistered;
    }
    return a.type;
}

/* Grow a lane's bounce buffer to need bytes, once the lane's queued work
 * no longer uses the old one. */
static cudaError_t bounce_reserve(lane *l, unsigned char **buf, size_t *cap, size_t need)
{
    if (need <= *cap) return cudaSuccess;
    cudaError_t ce = cudaStreamSynchronize(l->stream);
    if (ce != cudaSuccess) return ce;
    cudaFreeHost(*buf);
    *buf = NULL;
    *cap = 0;
    size_t c = align_up(need, (size_t)1 << 20);
    ce = cudaHostAlloc((void **)buf, c, cudaHostAllocPortable);
    if (ce == cudaSuccess) *cap = c;
    return ce;
}

static void CUDART_CB run_host_copy(void *arg)
{
    host_copy *c = arg;
    double t0 = ts_now();
    for (int y = 0; y < c->rows; y++)
        memcpy(c->dst + (size_t)y * c->dst_stride, c->src + (size_t)y * c->src_stride, c->row_bytes);
    if (c->trace)
        ts_trace_add(c->trace, c->trace_lane, c->stage, t0, ts_now(), (uint64_t)c->row_bytes * (uint64_t)c->rows,
                     c->image);
}

/* Queue a host copy on lane l's stream; the job keeps it until completed. */
static ts_status queue_host_copy(ts_engine *e, job *j, lane *l, const host_copy *c, ts_err *err)
{
    host_copy *h = malloc(sizeof *h);
    if (!h) return ts_err_set(err, TS_E_NOMEM, "out of memory for a staged copy");
    *h = *c;
    h->trace = e->trace;
    h->trace_lane = l->trace_lane;
    h->image = j->image;
    h->next = j->copies;
    j->copies = h;
    return copy_status(cudaLaunchHostFunc(l->stream, run_host_copy, h), "cudaLaunchHostFunc (staging a pageable image)",
                       err);
}

/* D2H into dst; into pageable memory through the lane's bounce buffer: the
 * DMA, then a host copy in stream order (*staged = 1: the tile is complete
 * only after it). */
static ts_status copy_out(ts_engine *e, job *j, lane *l, unsigned char *dst, size_t stride, const void *dev,
                          size_t pitch, size_t row_bytes, int rows, int pageable, int *staged, ts_err *err)
{
    *staged = 0;
    if (pageable && bounce_reserve(l, &l->stage_out, &l->stage_out_cap, row_bytes * (size_t)rows) == cudaSuccess) {
        ts_status st = copy_status(cudaMemcpy2DAsync(l->stage_out, row_bytes, dev, pitch, row_bytes, (size_t)rows,
                                                     cudaMemcpyDeviceToHost, l->stream),
                                   "copying a tile from the device", err);
        host_copy c = {dst, l->stage_out, stride, row_bytes, row_bytes, rows, NULL, 0, 0, "stage out", NULL};
        if (st == TS_OK) st = queue_host_copy(e, j, l, &c, err);
        *staged = st == TS_OK;
        return st;
    }
    cudaGetLastError();
    return copy_status(cudaMemcpy2DAsync(dst, stride, dev, pitch, row_bytes, (size_t)rows, cudaMemcpyDefault,
                                         l->stream),
                       "copying a tile from the device", err);
}

/* Queue output tile t of image in on lane l: H2D, kernels, D2H. */
static ts_status enqueue_tile(ts_engine *e, job *j, lane *l, layout *L, ts_rect t,
                              const ts_image *in, ts_image *out, ts_err *err)
{
    const ts_plan *p = &L->plan;
    ts_rect *r = L->r;
    ts_plan_regions(p, t, r);
    size_t px = (size_t)L->c * L->esz;
    ts_type type = p->type;
    if (!grow((void **)&j->tiles, &j->cap_tiles, j->n_tiles, sizeof *j->tiles))
        return ts_err_set(err, TS_E_NOMEM, "out of memory for tiles");
    /* H2D: the input region, packed as on the host. */
    ts_view cur = L->expand ? dev_view(l->raw, r[0], p->w[0], p->h[0], 3, type)
                            : dev_view(l->work[0], r[0], p->w[0], p->h[0], L->cw, type);
    int buf = 0;
    ts_status st = TS_OK;
    const unsigned char *src = in->data + (size_t)r[0].y0 * in->stride + (size_t)r[0].x0 * px;
    size_t in_row = (size_t)r[0].w * px;
    int has_in = r[0].w > 0 && r[0].h > 0;
    /* A pageable input is first copied into the bounce buffer, before the
     * tile's first mark, so that "h2d" times the DMA alone. */
    if (has_in && L->in_pageable && bounce_reserve(l, &l->stage_in, &l->stage_in_cap, in_row * (size_t)r[0].h) == cudaSuccess) {
        host_copy c = {l->stage_in, src, in_row, in->stride, in_row, r[0].h, NULL, 0, 0, "stage in", NULL};
        st = queue_host_copy(e, j, l, &c, err);
        if (st != TS_OK) return st;
        src = l->stage_in;
    } else {
        cudaGetLastError();
    }
    int m = -1;
    if (e->trace && (m = job_mark(e, j, l->stream, err)) < 0) return err ? err->status : TS_E_DEVICE;
    j->tiles[j->n_tiles].first = m;
    /* (without a bounce buffer the driver stages pageable memory itself, synchronously) */
    if (has_in)
        st = copy_status(cudaMemcpy2DAsync(cur.data, cur.pitch, src, src == l->stage_in ? in_row : in->stride, in_row,
                                           (size_t)r[0].h, cudaMemcpyDefault, l->stream),
                         "copying a tile to the device", err);
    if (st == TS_OK) st = stage_done(e, j, l, &m, L->in_device ? "d2d in" : "h2d", rect_bytes(r[0], px), err);
    if (st == TS_OK && L->expand) {
        ts_view wide = dev_view(l->work[0], r[0], p->w[0], p->h[0], 4, type);
        st = tsk_gpu_expand3to4(&cur, &wide, l->stream, err);
        if (st == TS_OK) st = stage_done(e, j, l, &m, "expand", rect_bytes(r[0], 7 * L->esz), err);
        cur = wide;
    }

    /* The kernels, ping-ponging between the lane's two work buffers. */
    tsk_launch launch = {l->stream, 0, e->path, l->index};
    for (int k = 0; k < p->n && st == TS_OK; k++) {
        ts_view dst = dev_view(l->work[buf ^ 1], r[k + 1], p->w[k + 1], p->h[k + 1], L->cw, type);
        st = tsk_gpu_apply(&p->ops[k], &cur, &dst, &launch, err);
        if (st == TS_OK) {
            size_t cpx = (size_t)L->cw * L->esz;
            st = stage_done(e, j, l, &m, stage_name(&p->ops[k]), rect_bytes(r[k], cpx) + rect_bytes(r[k + 1], cpx), err);
        }
        cur = dst;
        buf ^= 1;
    }
    ts_rect o = r[p->n];
    if (st == TS_OK && L->expand) {
        ts_view narrow = dev_view(l->raw, o, p->w[p->n], p->h[p->n], 3, type);
        st = tsk_gpu_pack4to3(&cur, &narrow, l->stream, err);
        if (st == TS_OK) st = stage_done(e, j, l, &m, "pack", rect_bytes(o, 7 * L->esz), err);
        cur = narrow;
    }

    /* D2H: straight into its place in the output image (pinned), or
     * through the bounce buffer (pageable). */
    int staged = 0;
    if (st == TS_OK) {
        unsigned char *dst = out->data + (size_t)o.y0 * out->stride + (size_t)o.x0 * px;
        st = copy_out(e, j, l, dst, out->stride, cur.data, cur.pitch, (size_t)o.w * px, o.h, L->out_pageable, &staged,
                      err);
    }
    if (st == TS_OK) st = stage_done(e, j, l, &m, L->out_device ? "d2d out" : "d2h", rect_bytes(o, px), err);
    /* The tile is complete at a mark after everything it queued. */
    if (st == TS_OK && (!e->trace || staged) && (m = job_mark(e, j, l->stream, err)) < 0) st = err ? err->status : TS_E_DEVICE;
    if (st != TS_OK) return st;
    j->tiles[j->n_tiles++].last = m;
    return TS_OK;
}

/* A device error: CUDA contexts do not recover from most of them, so the
 * engine refuses further work and every message says what completed. */
static ts_status engine_died(ts_engine *e, const char *cause, ts_err *err)
{
    if (!e->dead) {
        e->dead = 1;
        snprintf(e->dead_msg, sizeof e->dead_msg, "%.400s", cause ? cause : "unknown error");
    }
    return ts_err_set(err, TS_E_DEVICE, "device error after %d of %d images: %s", e->n_done, e->n_submitted,
                      e->dead_msg);
}

/* After a failed submit: wait for the tiles already queued (they write
 * into out), and find out whether the device itself is gone. */
static ts_status submit_failed(ts_engine *e, job *j, ts_image *out, ts_status st, ts_err *err)
{
    cudaError_t ce = cudaSuccess;
    for (int i = 0; i < e->n_lanes; i++) {
        cudaError_t c2 = cudaStreamSynchronize(e->lanes[i].stream);
        if (ce == cudaSuccess) ce = c2;
    }
    if (j) job_free(e, j);
    ts_image_free(out);
    if (ce != cudaSuccess) return engine_died(e, cudaGetErrorString(ce), err);
    return st;
}

static ts_status layout_make(ts_engine *e, const ts_chain *chain, const ts_image *in, layout *L, ts_err *err)
{
    memset(L, 0, sizeof *L);
    ts_status st = ts_plan_make(chain, in->w, in->h, in->c, in->type, &L->plan, err);
    if (st != TS_OK) return st;
    const ts_plan *p = &L->plan;
    L->c = in->c;
    L->esz = (size_t)in->type;
    L->expand = in->c == 3 && p->n > 0;
    L->cw = L->expand ? 4 : in->c;
    ts_plan_fuse(&L->plan, L->cw);  /* each op is a pass through device memory */
    L->out_w = p->w[p->n];
    L->out_h = p->h[p->n];
    L->r = malloc(sizeof *L->r * (size_t)(p->n + 1));
    if (!L->r) {
        layout_free(L);
        return ts_err_set(err, TS_E_NOMEM, "out of memory planning tiles");
    }
    layout_choose(L, e->tile_w, e->tile_h);
    layout_measure(L);
    return TS_OK;
}

static int tile_count(const layout *L)
{
    return ((L->out_w + L->tw - 1) / L->tw) * ((L->out_h + L->th - 1) / L->th);
}

static ts_status alloc_output(ts_engine *e, const ts_image *in, const layout *L, const ts_allocator *a, ts_image *out,
                              ts_err *err)
{
    ts_allocator pinned = ts_engine_allocator(e);
    ts_status st = ts_image_alloc(out, L->out_w, L->out_h, in->c, in->type, 0,
                                  a ? a : e->out_alloc ? e->out_alloc : &pinned, err);
    if (st != TS_OK) return st;
    out->orientation = 1;
    if (in->icc && in->icc_len && (out->icc = malloc(in->icc_len)) != NULL) {
        memcpy(out->icc, in->icc, in->icc_len);
        out->icc_len = in->icc_len;
    }
    return TS_OK;
}

ts_status ts_engine_submit(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out,
                           void *tag, int image, ts_err *err)
{
    return ts_engine_submit_to(e, chain, in, out, NULL, tag, image, err);
}

ts_status ts_engine_submit_to(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out,
                              const ts_allocator *out_alloc, void *tag, int image, ts_err *err)
{
    memset(out, 0, sizeof *out);
    if (e->dead) return engine_died(e, NULL, err);
    if (use_device(e, err) != TS_OK) return err ? err->status : TS_E_DEVICE;
    if (!in || !in->data || in->w < 1 || in->h < 1 || in->c < 1 || in->c > 4)
        return ts_err_set(err, TS_E_ARG, "GPU engine: input image %d is empty or has %d channels", image,
                          in ? in->c : 0);
    /* Idle for a while: re-read the clock so event times stay precise. */
    if (!e->head && ts_now() - e->calib_t > 10.0) {
        ts_status cs = calibrate(e, err);
        if (cs != TS_OK) return engine_died(e, err ? err->msg : "calibration failed", err);
    }
    layout L;
    ts_status st = layout_make(e, chain, in, &L, err);
    if (st != TS_OK) return st;
    st = reserve_all(e, &L, tile_count(&L), err);
    if (st == TS_OK) st = alloc_output(e, in, &L, out_alloc, out, err);
    if (st != TS_OK) {
        layout_free(&L);
        return st == TS_E_DEVICE ? submit_failed(e, NULL, out, st, err) : st;
    }
    job *j = calloc(1, sizeof *j);
    if (!j) {
        layout_free(&L);
        ts_image_free(out);
        return ts_err_set(err, TS_E_NOMEM, "out of memory for a GPU job");
    }
    j->tag = tag;
    j->image = image;
    enum cudaMemoryType in_type = memory_type(in->data), out_type = memory_type(out->data);
    L.in_device = in_type == cudaMemoryTypeDevice;
    L.out_device = out_type == cudaMemoryTypeDevice;
    L.in_pageable = !L.in_device && in_type != cudaMemoryTypeHost;
    L.out_pageable = !L.out_device && out_type != cudaMemoryTypeHost;
    for (int y = 0; y < L.out_h && st == TS_OK; y += L.th)
        for (int x = 0; x < L.out_w && st == TS_OK; x += L.tw) {
            ts_rect t = {x, y, x + L.tw <= L.out_w ? L.tw : L.out_w - x, y + L.th <= L.out_h ? L.th : L.out_h - y};
            lane *l = &e->lanes[e->next_lane];
            e->next_lane = (e->next_lane + 1) % e->n_lanes;
            st = enqueue_tile(e, j, l, &L, t, in, out, err);
        }
    layout_free(&L);
    if (st != TS_OK) return submit_failed(e, j, out, st, err);
    if (e->tail) e->tail->next = j;
    else e->head = j;
    e->tail = j;
    e->n_pending++;
    e->n_submitted++;
    return TS_OK;
}

/* Turn a completed job's marks into trace events on the ts_now() clock:
 * each tile's first mark is placed against the calibration event, the
 * rest against the tile's first mark (short spans keep full precision). */
static void trace_job(ts_engine *e, job *j)
{
    double *t = malloc(sizeof *t * (size_t)(j->n_marks ? j->n_marks : 1));
    if (!t) return;
    for (int i = 0; i < j->n_tiles; i++) {
        int a = j->tiles[i].first, b = j->tiles[i].last;
        float ms = 0;
        cudaEventElapsedTime(&ms, e->calib, j->marks[a]);
        t[a] = e->calib_t + ms * 1e-3;
        for (int m = a + 1; m <= b; m++) {
            ms = 0;
            cudaEventElapsedTime(&ms, j->marks[a], j->marks[m]);
            t[m] = t[a] + ms * 1e-3;
        }
    }
    for (int i = 0; i < j->n_spans; i++) {
        const span *s = &j->spans[i];
        char named[64];
        const char *stage = s->stage;
        if (e->name[0]) {   /* several engines: a line per device in the stage table */
            snprintf(named, sizeof named, "%s %s", s->stage, e->name);
            stage = named;
        }
        ts_trace_add(e->trace, e->lanes[s->lane].trace_lane, stage, t[s->m0], t[s->m1], s->bytes, j->image);
    }
    free(t);
}

int ts_engine_collect(ts_engine *e, void **tag, ts_status *status, ts_err *err)
{
    job *j = e->head;
    if (!j) return 0;
    cudaSetDevice(e->device);   /* events wait wherever; the event clock and frees want the engine's device */
    cudaError_t ce = cudaSuccess;
    for (int i = 0; i < j->n_tiles && ce == cudaSuccess; i++) ce = cudaEventSynchronize(j->marks[j->tiles[i].last]);
    ts_status st = TS_OK;
    if (ce != cudaSuccess) st = engine_died(e, cudaGetErrorString(ce), err);
    else if (e->dead) st = engine_died(e, NULL, err);
    else {
        e->n_done++;
        if (e->trace) trace_job(e, j);
    }
    e->head = j->next;
    if (!e->head) e->tail = NULL;
    e->n_pending--;
    if (tag) *tag = j->tag;
    if (status) *status = st;
    job_free(e, j);
    return 1;
}

ts_status ts_gpu_run(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out, ts_err *err)
{
    if (e->n_pending)
        return ts_err_set(err, TS_E_ARG, "ts_gpu_run: %d submitted images are still to be collected", e->n_pending);
    ts_status st = ts_engine_submit(e, chain, in, out, NULL, 0, err);
    if (st != TS_OK) return st;
    ts_status done = TS_OK;
    ts_engine_collect(e, NULL, &done, err);
    return done;
}

int ts_engine_device_index(const ts_engine *e) { return e->device; }

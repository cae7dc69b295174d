/* batch.c - `tilestream run`: files and folders in, processed images out.
 *
 * Worker threads (--jobs) decode and encode; the ops run either in the
 * worker itself (CPU backend) or on the GPU engine, which one thread feeds
 * with decoded images and drains in submission order. Workers prefer
 * encoding to decoding, so finished images leave memory first. */
#include "codec_session.h"
#include "outputs.h"
#include "pool.h"
#include "buffers.h"
#include "engine_internal.h"
#include "tilestream.h"
#include "trace_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ inputs */

/* Number the inputs by their place in the list sorted by path (what {n}
 * and --shard go by, so every process of a sharded run agrees), then keep
 * the shard's share, in the order the inputs were given. */
static const ts_input_list *sort_list;
static int by_input(const void *a, const void *b)
{
    return strcmp(sort_list->v[*(const int *)a].path, sort_list->v[*(const int *)b].path);
}

static ts_status number_and_shard(ts_input_list *l, const ts_shard *shard, int **numbers, ts_err *err)
{
    int *order = malloc(sizeof(int) * (size_t)(l->n + 1)), *num = malloc(sizeof(int) * (size_t)(l->n + 1));
    if (!order || !num) { free(order); free(num); return ts_err_set(err, TS_E_NOMEM, "out of memory listing inputs"); }
    for (int i = 0; i < l->n; i++) order[i] = i;
    sort_list = l;  /* qsort has no context argument; inputs are listed on one thread */
    qsort(order, (size_t)l->n, sizeof *order, by_input);
    for (int rank = 0; rank < l->n; rank++) num[order[rank]] = rank + 1;
    int kept = 0;
    for (int i = 0; i < l->n; i++) {
        if (!ts_shard_takes(shard, (size_t)(num[i] - 1))) {
            free(l->v[i].path); free(l->v[i].rel); free(l->v[i].error);
            continue;
        }
        l->v[kept] = l->v[i];
        num[kept++] = num[i];
    }
    l->n = kept;
    free(order);
    *numbers = num;
    return TS_OK;
}

static uint64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* ------------------------------------------------------------ the run */

/* A job goes PENDING -> PROBING -> PROBED (its size known: what it will
 * cost) -> DECODING (admitted: its bytes reserved) -> DECODED -> ON_GPU ->
 * PROCESSED -> ENCODING -> DONE; on the CPU DECODING runs straight to DONE. */
enum { ST_PENDING, ST_PROBING, ST_PROBED, ST_DECODING, ST_DECODED, ST_ON_GPU, ST_PROCESSED, ST_ENCODING, ST_DONE };

enum { MAX_ENGINES = 16 };

typedef struct job {
    ts_image in, out;
    int state;
    ts_format out_format;
    uint64_t cost;            /* bytes reserved against the budget while admitted */
    int reserved;
    int scale;                /* decode at 1/scale (shrink on load); 1 = whole */
    ts_chain *chain;          /* this image's chain when shrunk on load, else NULL */
    int out_on_device;        /* out stays on the GPU for nvJPEG to encode */
    int cpu_decode;           /* not for nvJPEG (not JPEG, not 3 channels, 12-bit): libjpeg-turbo's */
} job;

/* A FIFO of job indices; each index enters a queue at most once. */
typedef struct queue {
    int *at;
    int head, tail;
} queue;

static void q_push(queue *q, int i) { q->at[q->tail++] = i; }
static int q_empty(const queue *q) { return q->head == q->tail; }
static int q_pop(queue *q) { return q->at[q->head++]; }

typedef struct engine_slot {
    struct batch *b;
    ts_engine *e;
    int index, device, depth;
} engine_slot;

typedef struct batch {
    const ts_batch_opts *o;
    ts_batch_result *r;
    job *jobs;
    ts_chain *chains[9];      /* [orientation]: the chain with that EXIF orientation applied */
    engine_slot engines[MAX_ENGINES];
    int n_engines;
    ts_pool *pool;            /* CPU ops: the tiles of every image in flight share these threads */
    ts_allocator decode_alloc;/* GPU runs: pinned when a pool has room, else pageable; CPU runs: the pool's buffers */
    int use_gpu;
    int wants_jpeg;           /* some input or output is a JPEG: nvJPEG may take part */
    int nworkers;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int next_probe;           /* next job to probe */
    int next_admit;           /* next job to admit, in input order */
    queue decoded;            /* waiting for a GPU engine */
    int decode_ahead;         /* GPU runs: decoded images left waiting for an engine at most */
    queue processed;          /* waiting for an encoder */
    int gpu_left;             /* jobs not yet handed to an engine nor finished */
    int decodes_left;         /* jobs not yet decoded (or failed to) */
    uint64_t budget, bytes_in_flight;
    int n_in_flight;
    int done;
    int fatal;                /* a device error: stop everything */
    ts_err fatal_err;
    int pinned_decodes, pageable_decodes;
    ts_codec_session *codecs; /* nvJPEG where it takes a file, else the CPU codecs */
} batch;

static int stopping(const batch *b) { return b->fatal || (b->o->stop && *b->o->stop); }

static void fail(batch *b, int i, ts_status st, const ts_err *e)
{
    ts_image_result *res = &b->r->images[i];
    res->status = st;
    snprintf(res->error, sizeof res->error, "%s", e->msg);
}

/* Called with the lock held. */
static void finish(batch *b, int i)
{
    job *j = &b->jobs[i];
    ts_image_result *res = &b->r->images[i];
    if (j->state < ST_ON_GPU && b->use_gpu) b->gpu_left--;
    ts_image_free(&j->in);
    ts_image_free(&j->out);
    ts_chain_free(j->chain);
    j->chain = NULL;
    if (j->reserved) {
        b->bytes_in_flight -= j->cost;
        b->n_in_flight--;
        j->reserved = 0;
    }
    j->state = ST_DONE;
    b->done++;
    if (res->skipped) b->r->n_skipped++;
    else if (res->status == TS_OK) {
        b->r->n_ok++;
        b->r->pixels_in += (uint64_t)res->w * (uint64_t)res->h;
        b->r->pixels_out += (uint64_t)res->out_w * (uint64_t)res->out_h;
    } else b->r->n_failed++;
    if (b->o->on_image) b->o->on_image(b->o->ctx, res, b->done, b->r->n_images);
    pthread_cond_broadcast(&b->changed);
}

static void trace(batch *b, int lane, const char *stage, double t0, double t1, uint64_t bytes, int image)
{
    if (b->o->trace) ts_trace_add(b->o->trace, lane, stage, t0, t1, bytes, image);
}

static size_t image_bytes(const ts_image *img) { return (size_t)img->w * (size_t)img->h * ts_pixel_bytes(img); }

static const ts_chain *chain_for(batch *b, const job *j)
{
    if (j->chain) return j->chain;
    int o = b->o->keep_orientation ? 1 : j->in.orientation;
    return b->chains[o >= 1 && o <= 8 ? o : 1];
}

/* Shrink on load (ts_chain_shrink_on_load) for a JPEG of w x h stored
 * pixels with orientation o: the DCT scale, and in *chain the chain for
 * the reduced image; 1 = decode whole. nvJPEG decodes whole images only. */
static int shrink_plan(batch *b, int w, int h, int o, ts_chain **chain)
{
    *chain = NULL;
    if (b->o->no_shrink_on_load || b->o->codec == TS_CODEC_GPU) return 1;
    return ts_chain_shrink_on_load(b->chains[1], w, h, b->o->keep_orientation ? 1 : o, chain);
}

/* ---------------------------------------------------------------- probing */

/* What job i will hold in memory once decoded: its pixels (at the decode
 * scale), a progressive JPEG's coefficient arrays while decoding, and the
 * output; on the CPU also the ops' tile buffers (counted as two images'
 * worth; the tiles in flight hold less on the usual chains). Decides
 * shrink on load.
 * Without a readable header the decode will fail anyway: the file's size. */
static void probe(batch *b, int i)
{
    ts_image_result *res = &b->r->images[i];
    job *j = &b->jobs[i];
    ts_image_info info;
    ts_err e = { 0 };
    j->scale = 1;
    if (ts_image_probe(res->input, &info, &e) != TS_OK) {
        j->cost = file_size(res->input);
        return;
    }
    if (info.format == TS_FMT_JPEG && info.bit_depth == 8) j->scale = shrink_plan(b, info.w, info.h, info.orientation, &j->chain);
    /* Progressive JPEGs are for nvJPEG too: not its hardware decoder, but
     * its GPU_HYBRID backend, which leaves the cores nearly free where
     * libjpeg-turbo keeps them busy (codec_nvjpeg.c). */
    j->cpu_decode = info.format != TS_FMT_JPEG || info.c != 3 || info.bit_depth != 8;
    int c = info.c, o = b->o->keep_orientation ? 1 : info.orientation;
    uint64_t w = ((uint64_t)info.w + (uint64_t)j->scale - 1) / (uint64_t)j->scale;
    uint64_t h = ((uint64_t)info.h + (uint64_t)j->scale - 1) / (uint64_t)j->scale;
    uint64_t px = (uint64_t)c * (uint64_t)info.type, in = w * h * px, out = in;
    const ts_chain *chain = j->chain ? j->chain : b->chains[o >= 1 && o <= 8 ? o : 1];
    int ow = 0, oh = 0;
    if (ts_chain_out_size(chain, (int)w, (int)h, c, &ow, &oh, NULL) == TS_OK) out = (uint64_t)ow * (uint64_t)oh * px;
    j->cost = in + out;
    if (info.format == TS_FMT_JPEG && info.progressive) j->cost += (uint64_t)info.w * info.h * (uint64_t)c * 2;
    if (!b->use_gpu && ts_chain_length(chain) > 0) j->cost += 2 * (in > out ? in : out);
}

/* ---------------------------------------------------------------- stages */

/* --max-pixels holds for every image the chain makes, not only inputs
 * (scale=40 on a photo would otherwise write gigabytes): 0 and job i
 * failed, its decoded input freed, when one is over. */
static int sizes_within_limit(batch *b, int i)
{
    job *j = &b->jobs[i];
    if (j->in.exif_dropped)
        snprintf(b->r->images[i].warning, sizeof b->r->images[i].warning, "its EXIF block does not parse: not copied");
    ts_err e = { 0 }, named;
    ts_status st = ts_chain_check_pixels(chain_for(b, j), j->in.w, j->in.h, j->in.c, b->o->max_pixels, &e);
    if (st == TS_OK) return 1;
    ts_image_free(&j->in);
    ts_err_set(&named, st, "%s: %s", b->r->images[i].input, e.msg);
    fail(b, i, st, &named);
    return 0;
}

/* Decode job i (no lock held) on worker w. Returns 1 if it is ready for
 * the ops. JPEGs that suit nvJPEG go to it when the run has it (the
 * session decides and falls back to the CPU decoders inside). With
 * --codec auto the first files wait for nvJPEG's set-up: handing them to
 * the CPU codecs meanwhile, in input order or out of it, made the folder
 * job slower every way it was tried (docs/measurements/batch.md). */
static int decode(batch *b, int i, int lane, int w)
{
    ts_image_result *res = &b->r->images[i];
    job *j = &b->jobs[i];
    ts_err e = { 0 };
    ts_load_opts lo = { b->o->max_pixels, b->decode_alloc.alloc ? &b->decode_alloc : NULL, b->o->accept_damaged,
                         b->o->max_work };
    double t0 = ts_now();
    int on_gpu = 0;
    ts_status st = ts_codec_session_load(b->codecs, w, res->input, &lo, j->scale,
                                         !j->cpu_decode && !b->o->accept_damaged, &j->in, &on_gpu, &e);
    double t1 = ts_now();
    res->decode_s = t1 - t0;
    res->in_bytes = file_size(res->input);
    if (st != TS_OK) { fail(b, i, st, &e); return 0; }
    if (!sizes_within_limit(b, i)) return 0;
    res->w = j->in.w * j->scale; res->h = j->in.h * j->scale; res->c = j->in.c; res->type = j->in.type;
    trace(b, lane, on_gpu ? "decode (gpu)" : j->scale > 1 ? "decode (shrunk)" : "decode", t0, t1, image_bytes(&j->in), i);
    return 1;
}

static void cpu_ops(batch *b, int i, int lane)
{
    job *j = &b->jobs[i];
    ts_image_result *res = &b->r->images[i];
    ts_err e = { 0 };
    double t0 = ts_now();
    ts_status st = ts_cpu_run_pool(chain_for(b, j), &j->in, b->o->tile_w, b->o->tile_h, b->pool, &j->out, &e);
    double t1 = ts_now();
    res->ops_s = t1 - t0;
    if (st != TS_OK) {
        ts_err named;
        ts_err_set(&named, st, "%s: %s", res->input, e.msg);
        fail(b, i, st, &named);
        return;
    }
    trace(b, lane, "ops (cpu)", t0, t1, image_bytes(&j->in) + image_bytes(&j->out), i);
}

/* The pixels of an image on the device back to the host, for the CPU writers. */
static ts_status engine_to_host(void *ctx, ts_image *img, ts_err *err)
{
    batch *b = ctx;
    return ts_engine_image_to_host(b->engines[0].e, img, err);
}

static void encode(batch *b, int i, int lane, int w)
{
    job *j = &b->jobs[i];
    ts_image_result *res = &b->r->images[i];
    ts_err e = { 0 };
    ts_save_opts so = { j->out_format, b->o->quality, b->o->png_level, 0 };
    /* Carry the ICC profile, EXIF and XMP over; the writers set the EXIF
     * orientation to 1 where the chain applied it, else keep the input's. */
    ts_image_copy_metadata(&j->out, &j->in, NULL);
    if (b->o->keep_orientation) j->out.orientation = j->in.orientation;
    res->out_w = j->out.w; res->out_h = j->out.h;
    double t0 = ts_now();
    int on_gpu = 0;
    ts_status st = ts_make_parent_dirs(res->output, &e);
    if (st == TS_OK)
        st = ts_codec_session_save(b->codecs, w, res->output, &j->out, &j->out_on_device, &so, engine_to_host, b,
                                   &on_gpu, &e);
    double t1 = ts_now();
    res->encode_s = t1 - t0;
    if (st != TS_OK) { fail(b, i, st, &e); return; }
    res->out_bytes = file_size(res->output);
    trace(b, lane, on_gpu ? "encode (gpu)" : "encode", t0, t1, image_bytes(&j->out), i);
}

/* ---------------------------------------------------------------- workers */

enum { WORK_ENCODE, WORK_DECODE, WORK_PROBE, WORK_NONE = -1, WORK_ALL_DONE = -2 };

/* Once stopping: every job not yet admitted is failed, so that done
 * reaches n_images. Lock held. */
static void drain_unstarted(batch *b)
{
    for (int i = b->next_admit; i < b->r->n_images; i++) {
        job *j = &b->jobs[i];
        if (j->state != ST_PENDING && j->state != ST_PROBED) continue;
        ts_err e;
        ts_err_set(&e, b->fatal ? TS_E_DEVICE : TS_E_INTERRUPTED, "%s: not processed: %s", b->r->images[i].input,
                   b->fatal ? "the run stopped after a device error" : "interrupted");
        fail(b, i, e.status, &e);
        finish(b, i);
    }
    if (b->next_probe < b->r->n_images) b->next_probe = b->r->n_images;
}

/* Reserve job i's bytes: it fits when the budget has room, or when nothing
 * else is in flight (an image larger than the budget runs alone). */
static int admit(batch *b, int i)
{
    job *j = &b->jobs[i];
    if (b->bytes_in_flight > 0 && b->bytes_in_flight + j->cost > b->budget) return 0;
    j->reserved = 1;
    j->state = ST_DECODING;
    b->bytes_in_flight += j->cost;
    b->n_in_flight++;
    if (b->bytes_in_flight > b->r->memory_peak) b->r->memory_peak = b->bytes_in_flight;
    if (b->n_in_flight > b->r->max_in_flight) b->r->max_in_flight = b->n_in_flight;
    return 1;
}

/* Whether the budget and, on the GPU, the engines have room for another
 * decode. No further ahead of the engines than they take in flight:
 * images decoded earlier only wait, fill the budget and leave outputs in
 * pageable memory, whose copies are slow (docs/measurements/batch.md). */
static int room_to_decode(batch *b)
{
    if (b->use_gpu && b->decoded.tail - b->decoded.head >= b->decode_ahead) return 0;
    return b->next_admit < b->r->n_images && b->jobs[b->next_admit].state == ST_PROBED && admit(b, b->next_admit);
}

/* Work for a CPU worker, chosen under the lock: encoding first (it frees
 * memory), then decoding the next image in input order when there is room
 * for it, then probing ahead so that the next sizes are known. */
static int next_work(batch *b, int *i)
{
    for (;;) {
        if (!q_empty(&b->processed)) {
            *i = q_pop(&b->processed);
            b->jobs[*i].state = ST_ENCODING;
            return WORK_ENCODE;
        }
        if (stopping(b)) drain_unstarted(b);
        if (b->done == b->r->n_images) return WORK_ALL_DONE;
        while (b->next_admit < b->r->n_images && b->jobs[b->next_admit].state == ST_DONE) b->next_admit++;
        if (room_to_decode(b)) {
            *i = b->next_admit++;
            if (b->o->on_image_begin) b->o->on_image_begin(b->o->ctx, &b->r->images[*i], b->done, b->r->n_images);
            return WORK_DECODE;
        }
        while (b->next_probe < b->r->n_images && b->jobs[b->next_probe].state == ST_DONE) b->next_probe++;
        if (b->next_probe < b->r->n_images && b->next_probe - b->next_admit < 2 * b->nworkers) {
            *i = b->next_probe++;
            b->jobs[*i].state = ST_PROBING;
            return WORK_PROBE;
        }
        pthread_cond_wait(&b->changed, &b->lock);
    }
}

typedef struct worker_arg { batch *b; int lane, index; } worker_arg;

/* Run one piece of work (no lock held); returns 1 when the job is done. */
static int do_work(batch *b, int kind, int i, int lane, int w)
{
    ts_image_result *res = &b->r->images[i];
    if (kind == WORK_PROBE) {
        probe(b, i);
        return 0;
    }
    if (kind == WORK_ENCODE) {
        if (res->status == TS_OK) encode(b, i, lane, w);
        return 1;
    }
    int decoded = decode(b, i, lane, w);
    if (__atomic_sub_fetch(&b->decodes_left, 1, __ATOMIC_ACQ_REL) == 0) ts_codec_session_end_decoding(b->codecs);
    if (!decoded) return 1;
    if (b->use_gpu) return 0;
    cpu_ops(b, i, lane);
    if (res->status == TS_OK) encode(b, i, lane, w);
    return 1;
}

static void *worker(void *p)
{
    worker_arg *wa = p;
    batch *b = wa->b;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        int i = -1, kind = next_work(b, &i);
        if (kind == WORK_ALL_DONE) break;
        pthread_mutex_unlock(&b->lock);
        ts_pool_busy(b->pool, 1); /* codecs count against the CPU ops' thread limit too */
        int finished = do_work(b, kind, i, wa->lane, wa->index);
        ts_pool_busy(b->pool, 0);
        pthread_mutex_lock(&b->lock);
        if (finished) finish(b, i);
        else if (kind == WORK_PROBE) b->jobs[i].state = ST_PROBED;
        else if (b->fatal) {
            ts_err e;
            fail(b, i, ts_err_set(&e, TS_E_DEVICE, "%s: not processed: the run stopped after a device error",
                                  b->r->images[i].input), &e);
            finish(b, i);
        } else {
            b->jobs[i].state = ST_DECODED;
            q_push(&b->decoded, i);
        }
        pthread_cond_broadcast(&b->changed);
    }
    pthread_mutex_unlock(&b->lock);
    /* its nvJPEG state is released here, beside the other workers', not
     * one after another at the end */
    ts_codec_session_worker_done(b->codecs, wa->index);
    return NULL;
}

/* ---------------------------------------------------------------- GPU feeders */

static void device_failed(batch *b, int i, ts_status st, const ts_err *e)
{
    fail(b, i, st, e);
    if (st == TS_E_DEVICE && !b->fatal) { b->fatal = 1; b->fatal_err = *e; }
    finish(b, i);
}

/* On a device error the images waiting for an engine are not processed. */
static void drain_decoded(batch *b)
{
    while (!q_empty(&b->decoded)) {
        int i = q_pop(&b->decoded);
        ts_err e;
        ts_err_set(&e, TS_E_DEVICE, "%s: not processed: the run stopped after a device error", b->r->images[i].input);
        fail(b, i, e.status, &e);
        finish(b, i);
    }
}

/* One per engine: takes decoded images from the shared queue (so a faster
 * device takes more), keeps up to `depth` in flight on its engine, and
 * hands finished ones to the encoders. */
static void *gpu_feeder(void *p)
{
    engine_slot *es = p;
    batch *b = es->b;
    int in_flight = 0;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        if (b->fatal) drain_decoded(b);
        if (!q_empty(&b->decoded) && in_flight < es->depth) {
            int i = q_pop(&b->decoded);
            job *j = &b->jobs[i];
            j->state = ST_ON_GPU;
            b->gpu_left--;
            pthread_cond_broadcast(&b->changed);   /* room to decode another */
            pthread_mutex_unlock(&b->lock);
            ts_err e = { 0 };
            double t0 = ts_now();
            /* A JPEG output that nvJPEG will encode stays on the device. */
            j->out_on_device = ts_codec_session_on_device(b->codecs) &&
                               j->out_format == TS_FMT_JPEG && j->in.c == 3 && j->in.type == TS_U8;
            ts_status st = ts_engine_submit_to(es->e, chain_for(b, j), &j->in, &j->out,
                                               j->out_on_device ? ts_codec_session_device_allocator(b->codecs) : NULL,
                                               (void *)(intptr_t)i, i, &e);
            if (st == TS_E_NOMEM && j->out_on_device) {   /* the device is full: the output goes to the host */
                j->out_on_device = 0;
                memset(&e, 0, sizeof e);
                st = ts_engine_submit(es->e, chain_for(b, j), &j->in, &j->out, (void *)(intptr_t)i, i, &e);
            }
            b->r->images[i].ops_s = ts_now() - t0;
            pthread_mutex_lock(&b->lock);
            if (st == TS_OK) in_flight++;
            else device_failed(b, i, st, &e);
            continue;
        }
        if (in_flight > 0) {
            pthread_mutex_unlock(&b->lock);
            void *tag = NULL;
            ts_status st = TS_OK;
            ts_err e = { 0 };
            double t0 = ts_now();
            int got = ts_engine_collect(es->e, &tag, &st, &e);
            double t1 = ts_now();
            pthread_mutex_lock(&b->lock);
            if (!got) { in_flight = 0; continue; }
            in_flight--;
            int i = (int)(intptr_t)tag;
            b->r->images[i].ops_s += t1 - t0;
            b->r->engine_images[es->index]++;
            if (st == TS_OK) {
                b->jobs[i].state = ST_PROCESSED;
                q_push(&b->processed, i);
            } else device_failed(b, i, st, &e);
            pthread_cond_broadcast(&b->changed);
            continue;
        }
        if (b->gpu_left == 0 || b->fatal) break;
        pthread_cond_wait(&b->changed, &b->lock);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Run the chain once on small RGB and RGBA images so that CUDA loads the
 * kernels it uses (modules load lazily, a few ms each on first launch)
 * before any stage is timed. */
static void gpu_warm_up(batch *b, ts_engine *e)
{
    for (int c = 3; c <= 4; c++) {
        ts_image img = { 0 }, out = { 0 };
        ts_err er = { 0 };
        if (ts_image_alloc(&img, 16, 16, c, TS_U8, 0, NULL, &er) != TS_OK) continue;
        for (size_t i = 0; i < img.stride * 16; i++) img.data[i] = (unsigned char)(i * 37);
        ts_gpu_run(e, b->chains[1], &img, &out, &er);
        ts_image_free(&out);
        ts_image_free(&img);
    }
}

/* Decodes of a GPU run go to pinned memory when some engine's pool has
 * room (copies from it overlap), else to pageable memory from the first
 * pool's fallback (the engine stages it). Counted for the result. */
static void *decode_alloc(void *ctx, size_t bytes)
{
    batch *b = ctx;
    for (int k = 0; k < b->n_engines; k++) {
        ts_allocator a = ts_engine_pinned_allocator(b->engines[k].e);
        void *p = a.alloc(a.ctx, bytes);
        if (p) {
            __atomic_add_fetch(&b->pinned_decodes, 1, __ATOMIC_RELAXED);
            return p;
        }
    }
    __atomic_add_fetch(&b->pageable_decodes, 1, __ATOMIC_RELAXED);
    ts_allocator a = ts_engine_allocator(b->engines[0].e);
    return a.alloc(a.ctx, bytes);
}

static void decode_free(void *ctx, void *p)
{
    batch *b = ctx;
    ts_allocator a = ts_engine_allocator(b->engines[0].e);
    a.free(a.ctx, p);
}

/* One engine per entry of --gpus, each with its own pinned pool (its
 * share of the pinned limit), streams and slots. */
static ts_status start_engines(batch *b, ts_err *err)
{
    const ts_batch_opts *o = b->o;
    int devices[MAX_ENGINES], n_dev = ts_gpu_count(NULL);
    int n = ts_engine_parse_gpus(o->gpus, n_dev, devices, MAX_ENGINES, err);
    if (n < 0) return err ? err->status : TS_E_ARG;
    if (n == 0) return ts_err_set(err, TS_E_DEVICE, "no CUDA device for the GPU engines");
    b->codecs = ts_codec_session_create(o->codec, 1, b->wants_jpeg, devices[0]);
    if (!b->codecs) return ts_err_set(err, TS_E_NOMEM, "out of memory");
    int streams = o->streams > 0 ? o->streams : 3;
    if (n * streams > 16) streams = 16 / n > 0 ? 16 / n : 1;  /* TSK_SLOTS coefficient slots in all */
    /* Pinned memory is locked RAM: half the budget at most; images past it
     * decode into pageable memory (staged, slower). */
    uint64_t pinned = b->budget / 2;
    for (int k = 0; k < n; k++) {
        char name[32];
        int again = 0;
        for (int m = 0; m < k; m++) again += devices[m] == devices[k];
        if (again) snprintf(name, sizeof name, "gpu%d.%d", devices[k], again);
        else snprintf(name, sizeof name, "gpu%d", devices[k]);
        ts_engine_opts eo;
        memset(&eo, 0, sizeof eo);
        eo.streams = streams;
        eo.tile_w = o->tile_w;
        eo.tile_h = o->tile_h;
        eo.path = o->path;
        eo.trace = o->trace;
        eo.device = devices[k];
        eo.pinned_limit = (size_t)(pinned / (uint64_t)n);
        eo.name = n > 1 ? name : NULL;
        engine_slot *es = &b->engines[k];
        ts_status st = ts_engine_create(&eo, &es->e, err);
        if (st != TS_OK) return st;
        es->b = b;
        es->index = k;
        es->device = devices[k];
        es->depth = 2 * streams;   /* two images per stream keep every stream busy */
        b->decode_ahead += es->depth;
        b->n_engines++;
        b->r->engine_device[k] = devices[k];
        gpu_warm_up(b, es->e);
    }
    b->r->n_engines = n;
    if (n > 1) {
        char names[128] = "";
        for (int k = 0; k < n; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%d", k ? "," : "", devices[k]);
        snprintf(b->r->device + strlen(b->r->device), sizeof b->r->device - strlen(b->r->device), " x %d engines (devices %s)", n, names);
    }
    ts_err perr = { 0 };
    ts_engine_peak_rates(b->engines[0].e, &b->r->peak, &perr); /* zeros if it fails: the table then omits shares */
    if (o->trace) ts_trace_clear(o->trace);   /* drop the warm-up's events */
    b->decode_alloc = (ts_allocator){ decode_alloc, decode_free, b };
    /* every engine on the codec's device: decoded pixels and JPEG outputs need not cross the bus */
    int one_device = 1;
    for (int k = 0; k < n; k++) one_device &= devices[k] == devices[0];
    if (one_device) ts_codec_session_keep_on_device(b->codecs, 1, ts_engine_device_allocator(b->engines[0].e));
    if (b->o->codec != TS_CODEC_GPU) return TS_OK;   /* auto: settled where a file first needs it */
    return ts_codec_session_wait(b->codecs, err);
}

static void batch_cleanup(batch *b)
{
    for (int i = 0; i < 9; i++) ts_chain_free(b->chains[i]);
    ts_codec_session_free(b->codecs);
    for (int k = 0; k < b->n_engines; k++) ts_engine_destroy(b->engines[k].e);
    if (b->jobs && b->r->images)
        for (int i = 0; i < b->r->n_images; i++) ts_chain_free(b->jobs[i].chain);
    free(b->jobs);
    free(b->decoded.at);
    free(b->processed.at);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->changed);
}

static const ts_batch_result *sort_result;
static int by_output(const void *a, const void *b)
{
    int c = strcmp(sort_result->images[*(const int *)a].output, sort_result->images[*(const int *)b].output);
    return c ? c : *(const int *)a - *(const int *)b;
}

/* Two inputs that would write the same output (a --name without {dir} or
 * {n}, or a.png and a.jpg with --format jpg): the first in the list keeps
 * it, the others are refused, each named. */
static void refuse_duplicate_outputs(batch *b)
{
    int n = 0, *order = malloc(sizeof(int) * (size_t)(b->r->n_images + 1));
    if (!order) return;
    for (int i = 0; i < b->r->n_images; i++)
        if (b->jobs[i].state != ST_DONE) order[n++] = i;
    sort_result = b->r;
    qsort(order, (size_t)n, sizeof *order, by_output);
    for (int k = 1; k < n; k++) {
        ts_image_result *first = &b->r->images[order[k - 1]], *res = &b->r->images[order[k]];
        if (strcmp(first->output, res->output)) continue;
        ts_err e;
        fail(b, order[k], ts_err_set(&e, TS_E_EXISTS, "%s: not processed: %s is also the output of %s", res->input,
                                     res->output, first->input), &e);
        b->jobs[order[k]].state = ST_DONE;
        order[k] = order[k - 1];  /* compare the next with the one that keeps the name */
    }
    free(order);
}

/* Plan the outputs: formats, names, skip/refuse rules. Every image refused
 * or skipped here is reported now, before any work. Returns the number of
 * images that need work. */
static int plan_outputs(batch *b, ts_input_list *l, const int *numbers, const ts_output_guard *guard)
{
    const ts_batch_opts *o = b->o;
    int work = 0;
    for (int i = 0; i < l->n; i++) {
        ts_image_result *res = &b->r->images[i];
        job *j = &b->jobs[i];
        ts_input *in = &l->v[i];
        res->index = i;
        res->input = in->path;
        in->path = NULL;
        ts_format in_fmt = ts_format_from_path(res->input);
        j->out_format = o->format != TS_FMT_UNKNOWN ? o->format : in_fmt != TS_FMT_UNKNOWN ? in_fmt : TS_FMT_PNG;
        ts_err e = { 0 };
        res->output = in->error ? NULL : ts_output_path(o, in->rel, j->out_format, numbers[i], &e);
        if (in->error) {
            fail(b, i, ts_err_set(&e, TS_E_IO, "%s", in->error), &e);
            res->output = strdup("");
            j->state = ST_DONE;
        } else if (!res->output) {
            ts_err named;
            fail(b, i, ts_err_set(&named, e.status, "%s: %s", res->input, e.msg), &named);
            res->output = strdup("");
            j->state = ST_DONE;
        } else if (ts_output_guard_check(guard, res->input, res->output, o->overwrite, &e) != TS_OK) {
            fail(b, i, e.status, &e);
            j->state = ST_DONE;
        } else if (o->skip_existing && file_size(res->output) > 0) {
            res->skipped = 1;
            j->state = ST_DONE;
        }
    }
    refuse_duplicate_outputs(b);
    for (int i = 0; i < l->n; i++) {
        ts_image_result *res = &b->r->images[i];
        if (b->jobs[i].state != ST_DONE) { work++; continue; }
        b->done++;
        if (res->skipped) b->r->n_skipped++;
        else b->r->n_failed++;
        if (o->on_image) o->on_image(o->ctx, res, b->done, b->r->n_images);
    }
    return work;
}

/* What killed runs left in the folders this run writes to goes first. */
static void sweep_temps(batch *b)
{
    char **outputs = malloc(sizeof(char *) * (size_t)(b->r->n_images + 1));
    int n = 0;
    if (!outputs) return;
    for (int i = 0; i < b->r->n_images; i++)
        if (b->jobs[i].state != ST_DONE) outputs[n++] = b->r->images[i].output;
    ts_outputs_sweep_temps(outputs, n);
    free(outputs);
}

/* Every image succeeded (TS_OK), or the first failure's status. */
static ts_status final_status(const ts_batch_opts *o, const batch *b, ts_err *err)
{
    const ts_batch_result *r = b->r;
    if (b->fatal)
        return ts_err_set(err, TS_E_DEVICE, "%s (completed %d of %d images)", b->fatal_err.msg, r->n_ok, r->n_images);
    if (o->stop && *o->stop)
        return ts_err_set(err, TS_E_INTERRUPTED, "interrupted after %d of %d images", r->n_ok, r->n_images);
    for (int i = 0; r->n_failed > 0 && i < r->n_images; i++)
        if (r->images[i].status != TS_OK && !r->images[i].skipped)
            return ts_err_set(err, r->images[i].status, "%d of %d images %s; first: %s", r->n_failed, r->n_images,
                              o->dry_run ? "would fail" : "failed", r->images[i].error);
    return TS_OK;
}

/* Start the workers and the feeders, wait for them. */
static ts_status run_threads(batch *b, ts_err *err)
{
    const ts_batch_opts *o = b->o;
    ts_status st = TS_OK;
    pthread_t threads[257], feeders[MAX_ENGINES];
    worker_arg args[256];
    int started = 0, fed = 0;
    for (int w = 0; w < b->nworkers; w++) {
        char lane[32];
        snprintf(lane, sizeof lane, "cpu worker %d", w);
        args[w].b = b;
        args[w].index = w;
        args[w].lane = o->trace ? ts_trace_lane(o->trace, lane) : 0;
        if (pthread_create(&threads[w], NULL, worker, &args[w]) == 0) started++;
        else break;
    }
    for (int k = 0; k < b->n_engines; k++)
        if (pthread_create(&feeders[fed], NULL, gpu_feeder, &b->engines[k]) == 0) fed++;
    if (started == 0 || (b->use_gpu && fed == 0)) {
        /* no threads at all: do the CPU work on this thread */
        if (started == 0 && !b->use_gpu) { args[0].b = b; args[0].lane = 0; args[0].index = 0; worker(&args[0]); }
        else {
            st = ts_err_set(err, TS_E_NOMEM, "cannot start worker threads");
            pthread_mutex_lock(&b->lock);
            b->fatal = 1;
            b->fatal_err = *err;
            pthread_cond_broadcast(&b->changed);
            pthread_mutex_unlock(&b->lock);
        }
    }
    for (int w = 0; w < started; w++) pthread_join(threads[w], NULL);
    for (int k = 0; k < fed; k++) pthread_join(feeders[k], NULL);
    return st;
}

ts_status ts_batch_run(const ts_batch_opts *o, ts_batch_result *r, ts_err *err)
{
    batch b;
    ts_input_list l = { 0 };
    memset(&b, 0, sizeof b);
    memset(r, 0, sizeof *r);
    b.o = o;
    b.r = r;
    pthread_mutex_init(&b.lock, NULL);
    pthread_cond_init(&b.changed, NULL);
    double t_start = ts_now();

    ts_status st = TS_OK;
    for (int k = 1; k <= 8 && st == TS_OK; k++) {
        st = ts_chain_parse(o->chain_text ? o->chain_text : "", &b.chains[k], err);
        if (st == TS_OK) st = ts_chain_prepend_orientation(b.chains[k], k, err);
    }
    if (st == TS_OK && !o->outdir) st = ts_err_set(err, TS_E_ARG, "no output folder (-o OUTDIR)");
    if (st == TS_OK) st = ts_outputs_check_before_work(o, err);
    if (st == TS_OK) st = ts_inputs_collect(o->inputs, o->n_inputs, o->outdir, &l, err);
    int *numbers = NULL;
    /* every input of the run, other shards' too, before the shard is taken */
    ts_output_guard *guard = NULL;
    if (st == TS_OK && !(guard = ts_output_guard_make(o->outdir, &l))) st = ts_err_set(err, TS_E_NOMEM, "out of memory");
    if (st == TS_OK) st = number_and_shard(&l, &o->shard, &numbers, err);
    if (st == TS_OK && l.n == 0)
        st = o->shard.count > 1 ? ts_err_set(err, TS_E_ARG, "no PNG or JPEG files for shard %d of %d in the inputs",
                                             o->shard.index, o->shard.count)
                                : ts_err_set(err, TS_E_ARG, "no PNG or JPEG files found in the inputs");
    if (st == TS_OK) st = ts_engine_pick_device(o->device, r->device, sizeof r->device, r->device_note,
                                                  sizeof r->device_note, &b.use_gpu, err);
    if (st == TS_OK && o->codec == TS_CODEC_GPU && !b.use_gpu)
        st = ts_err_set(err, TS_E_ARG, "--codec gpu needs the GPU (--device gpu or auto with a CUDA device)");
    if (st == TS_OK) {
        r->n_images = l.n;
        r->images = calloc((size_t)l.n, sizeof *r->images);
        b.jobs = calloc((size_t)l.n, sizeof *b.jobs);
        b.decoded.at = malloc(sizeof(int) * (size_t)l.n);
        b.processed.at = malloc(sizeof(int) * (size_t)l.n);
        if (!r->images || !b.jobs || !b.decoded.at || !b.processed.at) st = ts_err_set(err, TS_E_NOMEM, "out of memory");
    }
    if (st != TS_OK) {
        ts_inputs_free(&l);
        ts_output_guard_free(guard);
        free(numbers);
        free(r->images);
        r->images = NULL;
        r->n_images = 0;
        batch_cleanup(&b);
        return st;
    }
    if (o->on_start) o->on_start(o->ctx, r);
    int work = plan_outputs(&b, &l, numbers, guard);
    ts_inputs_free(&l);
    ts_output_guard_free(guard);
    free(numbers);
    if (!o->dry_run) sweep_temps(&b);
    b.budget = o->memory ? o->memory : ts_default_memory_budget();
    r->memory_budget = b.budget;
    b.gpu_left = work;
    b.decodes_left = work;
    for (int i = 0; i < r->n_images && !b.wants_jpeg; i++)
        b.wants_jpeg = b.jobs[i].state != ST_DONE &&
                       (b.jobs[i].out_format == TS_FMT_JPEG || ts_format_from_path(r->images[i].input) == TS_FMT_JPEG);

    /* The engines start before the first decode, so that decodes land in
     * pinned memory; starting them beside the first decodes, or pinning
     * the whole pool up front, were both slower (docs/measurements/batch.md). */
    if (!o->dry_run && work > 0 && b.use_gpu && (st = start_engines(&b, err)) == TS_OK && !b.codecs)
        st = ts_err_set(err, TS_E_NOMEM, "out of memory");
    if (st == TS_OK && !b.codecs && !(b.codecs = ts_codec_session_create(o->codec, b.use_gpu, 0, 0)))
        st = ts_err_set(err, TS_E_NOMEM, "out of memory");
    if (st != TS_OK) {
        batch_cleanup(&b);
        return st;
    }
    if (o->dry_run) {
        for (int i = 0; i < r->n_images; i++)
            if (b.jobs[i].state != ST_DONE && o->on_image) o->on_image(o->ctx, &r->images[i], i + 1, r->n_images);
        st = final_status(o, &b, err);
        batch_cleanup(&b);
        r->wall_s = ts_now() - t_start;
        return st;
    }

    b.nworkers = o->jobs > 0 ? o->jobs : cpu_count();
    if (b.nworkers > 256) b.nworkers = 256;
    if (!b.use_gpu && (b.pool = ts_pool_create(b.nworkers)) != NULL) {   /* NULL: each image on its worker's thread */
        /* decodes and outputs reuse the pixels of finished images; idle ones
         * beyond an eighth of the budget go back to the system */
        uint64_t keep = b.budget / 8;
        if (keep < ts_buffers_default_keep()) ts_pool_keep(b.pool, (size_t)keep);
        b.decode_alloc = ts_pool_allocator(b.pool);
    }
    double t_work = ts_now();
    r->setup_s = t_work - t_start;
    st = run_threads(&b, err);
    ts_codec_session_wait(b.codecs, NULL);   /* for its note, when no file needed it */
    snprintf(r->codec_note, sizeof r->codec_note, "%s", ts_codec_session_note(b.codecs));
    double t_done = ts_now();
    r->work_s = t_done - t_work;
    ts_pool_free(b.pool);
    r->decoded_pinned = b.pinned_decodes;
    r->decoded_pageable = b.pageable_decodes;
    ts_codec_session_counts(b.codecs, &r->gpu_decoded, &r->gpu_encoded);
    for (int i = 0; i < r->n_images; i++) r->shrunk_on_load += b.jobs[i].scale > 1 && r->images[i].status == TS_OK && !r->images[i].skipped;
    if (st == TS_OK) st = final_status(o, &b, err);
    batch_cleanup(&b);
    r->finish_s = ts_now() - t_done;
    r->wall_s = ts_now() - t_start;
    return st;
}

void ts_batch_result_free(ts_batch_result *r)
{
    for (int i = 0; i < r->n_images; i++) {
        free(r->images[i].input);
        free(r->images[i].output);
    }
    free(r->images);
    memset(r, 0, sizeof *r);
}

/* gpu_feed.c - the GPU side of `run`: the engines (one per entry of
 * --gpus, with nvJPEG set up beside them) and a feeder thread per engine
 * that takes decoded images from the shared queue, keeps a few in flight
 * on its engine and hands finished ones to the encoders. */
#include "batch_internal.h"
#include "trace_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* One engine per entry of --gpus (engine_set.c), a feeder for each. */
ts_status ts_batch_start_engines(batch *b, ts_err *err)
{
    const ts_batch_opts *o = b->o;
    int devices[TS_MAX_ENGINES], n_dev = ts_gpu_count(NULL);
    int n = ts_engine_parse_gpus(o->gpus, n_dev, devices, TS_MAX_ENGINES, err);
    if (n < 0) return err ? err->status : TS_E_ARG;
    if (n == 0) return ts_err_set(err, TS_E_DEVICE, "no CUDA device for the GPU engines");
    /* nvJPEG sets up on a thread of its own while the engines start */
    if (!(b->codecs = ts_codec_session_create(o->codec, 1, b->wants_jpeg, devices[0])))
        return ts_err_set(err, TS_E_NOMEM, "out of memory");
    /* Pinned memory is locked RAM: half the budget at most; images past it
     * decode into pageable memory (staged, slower). */
    ts_engine_set_opts eo = { o->streams, o->tile_w, o->tile_h, o->path, o->trace, b->budget / 2, b->chains[1] };
    ts_status st = ts_engine_set_start(&b->set, &eo, devices, n, err);
    if (st != TS_OK) return st;
    for (int k = 0; k < n; k++) {
        engine_slot *es = &b->engines[k];
        es->b = b;
        es->e = b->set.e[k];
        es->index = k;
        es->depth = 2 * b->set.streams;   /* two images per stream keep every stream busy */
        b->decode_ahead += es->depth;
        b->r->engine_device[k] = devices[k];
    }
    b->r->n_engines = n;
    if (n > 1) {
        char names[128] = "";
        for (int k = 0; k < n; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%d", k ? "," : "", devices[k]);
        snprintf(b->r->device + strlen(b->r->device), sizeof b->r->device - strlen(b->r->device), " x %d engines (devices %s)", n, names);
    }
    ts_err perr = { 0 };
    ts_engine_peak_rates(b->set.e[0], &b->r->peak, &perr); /* zeros if it fails: the table then omits shares */
    if (o->trace) ts_trace_clear(o->trace);   /* drop the warm-up's events */
    b->decode_alloc = ts_engine_set_decode_allocator(&b->set);
    /* every engine on the codec's device: decoded pixels and JPEG outputs need not cross the bus */
    if (ts_engine_set_one_device(&b->set))
        ts_codec_session_keep_on_device(b->codecs, 1, ts_engine_device_allocator(b->set.e[0]));
    if (o->codec != TS_CODEC_GPU) return TS_OK;   /* auto: settled where a file first needs it */
    return ts_codec_session_wait(b->codecs, err);
}

/* The pixels of an image on the device back to the host, for the CPU writers. */
ts_status ts_batch_engine_to_host(void *ctx, ts_image *img, ts_err *err)
{
    batch *b = ctx;
    return ts_engine_image_to_host(b->set.e[0], img, err);
}

static void device_failed(batch *b, int i, ts_status st, const ts_err *e)
{
    ts_batch_fail(b, i, st, e);
    if (st == TS_E_DEVICE && !b->fatal) { b->fatal = 1; b->fatal_err = *e; }
    ts_batch_finish(b, i);
}

/* On a device error the images waiting for an engine are not processed. */
static void drain_decoded(batch *b)
{
    while (!q_empty(&b->decoded)) {
        int i = q_pop(&b->decoded);
        ts_err e;
        ts_err_set(&e, TS_E_DEVICE, "%s: not processed: the run stopped after a device error", b->r->images[i].input);
        ts_batch_fail(b, i, e.status, &e);
        ts_batch_finish(b, i);
    }
}

/* One per engine: takes decoded images from the shared queue (so a faster
 * device takes more), keeps up to `depth` in flight on its engine, and
 * hands finished ones to the encoders. */
void *ts_batch_gpu_feeder(void *p)
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
            ts_status st = ts_engine_submit_to(es->e, ts_batch_chain_for(b, j), &j->in, &j->out,
                                               j->out_on_device ? ts_codec_session_device_allocator(b->codecs) : NULL,
                                               (void *)(intptr_t)i, i, &e);
            if (st == TS_E_NOMEM && j->out_on_device) {   /* the device is full: the output goes to the host */
                j->out_on_device = 0;
                memset(&e, 0, sizeof e);
                st = ts_engine_submit(es->e, ts_batch_chain_for(b, j), &j->in, &j->out, (void *)(intptr_t)i, i, &e);
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

/* gpu_feed.c - the GPU side of `run`: starting it (gpu_start.c makes it),
 * installing it once made, a feeder thread per engine that takes decoded
 * images from the shared queue, keeps a few in flight on its engine and
 * hands finished ones to the encoders, and the decoded images that come
 * to it from ordinary memory (an auto run's CPU images, --device gpu's
 * first ones). */
#include "batch_internal.h"
#include "trace_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* A phase of the GPU's start, [t0, t1] on the ts_now() clock, into the
 * report (relative to the run's origin) and the trace's "gpu start" lane. */
static void phase(batch *b, int lane, double *to, const char *name, double t0, double t1)
{
    if (t0 <= 0 || t1 < t0) return;
    to[0] = t0 - b->t_origin;
    to[1] = t1 - b->t_origin;
    ts_batch_trace(b, lane, name, t0, t1, 0, TS_TRACE_PHASE);
}

static void record_phases(batch *b, const ts_gpu_side *s)
{
    ts_run_phases *p = &b->r->phases;
    if (p->gpu_probe[0] >= 0) return;   /* once */
    int lane = b->o->trace ? ts_trace_lane(b->o->trace, "gpu start") : 0;
    /* a pure GPU run found the devices before its start (which found them again at once) */
    const double *probe = b->mode == RUN_GPU && b->probe[1] > 0 ? b->probe : s->probe;
    phase(b, lane, p->gpu_probe, "find the devices", probe[0], probe[1]);
    phase(b, lane, p->gpu_engines, "engines", s->engines[0], s->engines[1]);
    phase(b, lane, p->gpu_warmup, "warm-up", s->warmup[0], s->warmup[1]);
    phase(b, lane, p->gpu_rates, "bus and copy rates", s->rates[0], s->rates[1]);
    phase(b, lane, p->nvjpeg, "nvJPEG", s->nvjpeg[0], s->nvjpeg[1]);
}

/* --device auto: the GPU's engines are up, nvJPEG's set-up is left
 * (called from its thread). */
static void gpu_soon(void *p)
{
    batch *b = p;
    pthread_mutex_lock(&b->lock);
    b->gpu_soon = ts_now();
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}

/* --device auto: the GPU's start is done (called from its thread). */
static void gpu_arrived(void *p)
{
    batch *b = p;
    pthread_mutex_lock(&b->lock);
    b->gpu_arrived = 1;
    pthread_cond_broadcast(&b->changed);
    pthread_mutex_unlock(&b->lock);
}

/* --device auto: when the GPU is worth starting. A start costs the GPU's
 * set-up before its first image (0.4-0.6 s on the machines measured) and,
 * at exit, the driver's teardown of what it made (0.1-0.15 s, even when it
 * is only half made: docs/PERFORMANCE.md); with less CPU work left than
 * GPU_WORTH_S the job ends sooner without it. The CPU's pace is its own:
 * bytes of input per second of one worker over the images it has
 * finished, so that the small files that finish first do not skew it. */
#define GPU_WORTH_S 1.0
/* with no image finished yet after this long, the images are large: start */
#define GPU_UNMEASURED_S 0.25
/* more images than this per worker: a long job, started at once (waiting
 * for the pace gained nothing measurable at 16 a worker: docs/PERFORMANCE.md) */
#define GPU_DEFER_PER_WORKER 8

void ts_batch_gpu_defer(batch *b)
{
    if (b->done + GPU_DEFER_PER_WORKER * b->nworkers < b->r->n_images || getenv("TS_TEST_GPU_START_DELAY_MS")) {
        ts_err e = { 0 };   /* tests: a slow start, begun at once */
        if (ts_batch_gpu_start(b, &e) != TS_OK) snprintf(b->r->gpu_note, sizeof b->r->gpu_note, "no GPU: %.180s", e.msg);
        return;
    }
    b->gpu_deferred = 1;
    for (int i = 0; i < b->r->n_images; i++) {
        struct stat sb;
        if (b->jobs[i].state != ST_DONE && stat(b->r->images[i].input, &sb) == 0) b->work_bytes += (uint64_t)sb.st_size;
    }
}

/* Lock held. Whether to start it now; *wait_s: when to ask again at the
 * latest (nothing measured yet). */
static int gpu_worth_starting(batch *b, double *wait_s)
{
    double ran = ts_now() - b->t_origin - b->r->phases.inputs[1];   /* since the work began */
    *wait_s = -1;
    if (b->cpu_seconds <= 0 || b->cpu_bytes == 0) {
        if (ran >= GPU_UNMEASURED_S) return 1;
        *wait_s = GPU_UNMEASURED_S - ran;
        return 0;
    }
    double per_worker = (double)b->cpu_bytes / b->cpu_seconds;
    double left = b->work_bytes > b->done_bytes ? (double)(b->work_bytes - b->done_bytes) : 0.0;
    double projected = left / (per_worker * b->nworkers);
    if (projected > b->gpu_projected) b->gpu_projected = projected;
    return projected > GPU_WORTH_S;
}

/* A start on its own thread (--device auto, or --device gpu decoding
 * while it starts), on the run's own thread while the workers work:
 * start it when it is worth it (--device auto), install the GPU side as
 * soon as its start is done, until the job is. Never holds the run's lock
 * while asking the start (gpu_start.h). With the GPU alone, a start that
 * brings no engine stops the run. */
void ts_batch_gpu_coordinate(batch *b)
{
    int asked = 0;
    pthread_mutex_lock(&b->lock);
    while (b->done < b->r->n_images) {
        double wait_s = -1;
        if (b->gpu_deferred && !b->fatal && !(b->o->stop && *b->o->stop) && gpu_worth_starting(b, &wait_s)) {
            b->gpu_deferred = 0;
            pthread_mutex_unlock(&b->lock);
            ts_err e = { 0 };
            ts_status st = ts_batch_gpu_start(b, &e);
            pthread_mutex_lock(&b->lock);
            if (st != TS_OK) snprintf(b->r->gpu_note, sizeof b->r->gpu_note, "no GPU: %.180s", e.msg);
            continue;
        }
        if (b->gpu_arrived && !asked) {
            asked = 1;
            pthread_mutex_unlock(&b->lock);
            ts_status st = TS_OK;
            ts_err e = { 0 };
            ts_gpu_side *side = ts_gpu_start_side(b->gpu_start, &st, &e);
            pthread_mutex_lock(&b->lock);
            if (side && !b->fatal && !(b->o->stop && *b->o->stop)) ts_batch_gpu_install(b, side, st, &e);
            b->gpu_soon = 0;   /* installed, or not to be: the workers need not hold back */
            pthread_cond_broadcast(&b->changed);
            if (b->mode == RUN_GPU && !b->gpu && !b->fatal) {
                b->fatal = 1;
                ts_err_set(&b->fatal_err, TS_E_DEVICE, "%s", b->r->gpu_note[0] ? b->r->gpu_note : "no GPU");
                pthread_cond_broadcast(&b->changed);
            }
            continue;
        }
        if (b->gpu_soon > 0 && !b->gpu_arrived) {   /* wake the workers when their hold ends */
            double left = b->gpu_soon + TS_GPU_SOON_HOLD_S - ts_now();
            if (left <= 0) {
                b->gpu_soon = 0;   /* a slow set-up: the CPU goes on */
                pthread_cond_broadcast(&b->changed);
            }
            else if (wait_s < 0 || left < wait_s) wait_s = left;
        }
        if (wait_s > 0) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            long ns = until.tv_nsec + (long)(wait_s * 1e9) + 1000000L;
            until.tv_sec += ns / 1000000000L;
            until.tv_nsec = ns % 1000000000L;
            pthread_cond_timedwait(&b->changed, &b->lock, &until);
        } else {
            pthread_cond_wait(&b->changed, &b->lock);
        }
    }
    pthread_mutex_unlock(&b->lock);
}

/* Start the GPU side: now (--device gpu), or on a thread of its own that
 * the workers do not wait for (--device auto; --device gpu with the CPU
 * codecs, which decode meanwhile). */
ts_status ts_batch_gpu_start(batch *b, ts_err *err)
{
    const ts_batch_opts *o = b->o;
    /* Pinned memory is locked RAM: half the budget at most. */
    ts_gpu_start_opts go = { o->device, o->codec, o->gpus, o->chain_text, o->streams, o->tile_w, o->tile_h, o->path,
                             b->budget / 2, b->wants_jpeg, !o->skip_rates };
    int on_thread = b->mode == RUN_CPU_THEN_GPU || b->early_decode;
    if (!(b->gpu_start = ts_gpu_start_begin(&go, on_thread, b->mode == RUN_CPU_THEN_GPU ? gpu_soon : NULL, gpu_arrived, b)))
        return ts_err_set(err, TS_E_NOMEM, "out of memory");
    if (on_thread) return TS_OK;
    ts_status st = TS_OK;
    ts_gpu_side *side = ts_gpu_start_side(b->gpu_start, &st, err);
    if (st != TS_OK) return st;
    pthread_mutex_lock(&b->lock);
    ts_batch_gpu_install(b, side, st, err);
    pthread_mutex_unlock(&b->lock);
    return b->gpu ? TS_OK : ts_err_set(err, TS_E_DEVICE, "%s", b->r->gpu_note);
}

/* The GPU side is done starting (st its outcome): with engines, images
 * admitted from now on go to it, a feeder thread per engine. Lock held. */
void ts_batch_gpu_install(batch *b, ts_gpu_side *side, ts_status st, const ts_err *e)
{
    ts_batch_result *r = b->r;
    record_phases(b, side);
    if (st != TS_OK || side->set.n == 0) {
        snprintf(r->gpu_note, sizeof r->gpu_note, "no GPU: %.180s", st != TS_OK ? e->msg : side->note);
        return;
    }
    b->gpu_alloc = ts_engine_set_decode_allocator(&side->set);
    r->peak = side->peak;
    if (b->o->trace) ts_engine_set_attach_trace(&side->set, b->o->trace);
    b->decode_ahead = 0;
    for (int k = 0; k < side->set.n; k++) {
        engine_slot *es = &b->engines[k];
        es->b = b;
        es->e = side->set.e[k];
        es->index = k;
        es->depth = 2 * side->set.streams;   /* two images per stream keep every stream busy */
        if (pthread_create(&b->feeders[b->n_feeders], NULL, ts_batch_gpu_feeder, es) != 0) break;
        b->n_feeders++;
        b->feeders_running++;
        b->decode_ahead += es->depth;
        r->engine_device[k] = side->set.device[k];
    }
    if (b->n_feeders == 0) {
        snprintf(r->gpu_note, sizeof r->gpu_note, "no GPU: cannot start its feeder threads");
        return;
    }
    r->n_engines = b->n_feeders;
    if (b->mode == RUN_GPU) snprintf(r->device, sizeof r->device, "%s", side->device);   /* with its engines */
    b->gpu = side;
    __atomic_store_n(&b->gpu_codecs, side->codecs, __ATOMIC_RELEASE);
    r->phases.gpu_ready = ts_now() - b->t_origin;
    snprintf(r->gpu_note, sizeof r->gpu_note, "took images from %.2f s on", r->phases.gpu_ready);
    pthread_cond_broadcast(&b->changed);
}

/* --device auto, the job done: name what the GPU's start came to, and the
 * device the run's images went to. Only the run's thread is left. */
void ts_batch_gpu_after(batch *b)
{
    ts_batch_result *r = b->r;
    if (b->gpu) {
        if (r->n_on_gpu > 0 && r->n_on_cpu > 0)
            snprintf(r->device, sizeof r->device, "%.140s and the CPU", b->gpu->device);
        else if (r->n_on_gpu > 0) snprintf(r->device, sizeof r->device, "%s", b->gpu->device);
        return;
    }
    if (b->gpu_deferred && !r->gpu_note[0]) {
        if (b->gpu_projected > 0)
            snprintf(r->gpu_note, sizeof r->gpu_note,
                     "not started: the CPU's work left was never projected past %.0f s (at most %.2f s)", GPU_WORTH_S,
                     b->gpu_projected);
        else snprintf(r->gpu_note, sizeof r->gpu_note, "not started: the job ended before the CPU had measured its pace");
    }
    if (!b->gpu_start) return;
    ts_status st = TS_OK;
    ts_err e = { 0 };
    ts_gpu_side *side = ts_gpu_start_side(b->gpu_start, &st, &e);
    double now = ts_now() - b->t_origin;
    if (!side) {
        snprintf(r->gpu_note, sizeof r->gpu_note, "not used: the job ended at %.2f s, before the GPU had started", now);
        return;
    }
    record_phases(b, side);
    if (st != TS_OK || side->set.n == 0)
        snprintf(r->gpu_note, sizeof r->gpu_note, "no GPU: %.180s", st != TS_OK ? e.msg : side->note);
    else snprintf(r->gpu_note, sizeof r->gpu_note, "not used: it was ready at %.2f s, when no image was left to start",
                  side->ready - b->t_origin);
}

/* A CPU image decoded once the GPU is there (and has room in its queue)
 * has its ops run there instead: they are most of the CPU's time for an
 * image, and its worker is free again at once for the GPU's decodes and
 * encodes. The CPU keeps the images whose ops it has begun. Only while a
 * feeder runs (they wait for the last decode, but may have ended just
 * before this one's). */
int ts_batch_gpu_take_decoded(batch *b, int i)
{
    job *j = &b->jobs[i];
    pthread_mutex_lock(&b->lock);
    int go = b->gpu && b->feeders_running > 0 && !b->fatal && !(b->o->stop && *b->o->stop) &&
             b->decoded.tail - b->decoded.head < b->decode_ahead;
    if (go) {
        j->on_gpu = 1;
        b->r->images[i].on_gpu = 1;
        b->gpu_left++;
    }
    pthread_mutex_unlock(&b->lock);
    return go;
}

/* Its pixels are pinned: in place, where an early image was decoded into
 * memory for that (pinning pages already touched takes a fraction of the
 * time of a copy into a pool, which also grows the pool while the first
 * images wait: docs/PERFORMANCE.md); else moved into the engines' pinned
 * memory where a pool has room, the worker's copy beside the others, where
 * the engine would stage a pageable image on the driver's one callback
 * thread. */
void ts_batch_gpu_pin(batch *b, int i, int lane)
{
    job *j = &b->jobs[i];
    double t0 = ts_now();
    if (ts_engine_pin_in_place(&j->in)) {
        ts_batch_trace(b, lane, "pinned in place", t0, ts_now(), ts_batch_image_bytes(&j->in), i);
        return;
    }
    ts_allocator pinned = ts_engine_set_pinned_allocator(&b->gpu->set);
    ts_image px;
    if (ts_image_alloc(&px, j->in.w, j->in.h, j->in.c, j->in.type, 0, &pinned, NULL) != TS_OK) return;
    size_t row = (size_t)j->in.w * ts_pixel_bytes(&j->in);
    for (int y = 0; y < j->in.h; y++)
        memcpy(px.data + (size_t)y * px.stride, j->in.data + (size_t)y * j->in.stride, row);
    ts_image pixels_only = { .data = j->in.data, .alloc = j->in.alloc };
    ts_image_free(&pixels_only);
    j->in.data = px.data;
    j->in.stride = px.stride;
    j->in.alloc = px.alloc;
    ts_batch_trace(b, lane, "to pinned", t0, ts_now(), ts_batch_image_bytes(&j->in), i);
}

/* The pixels of an image on the device back to the host, for the CPU writers. */
ts_status ts_batch_engine_to_host(void *ctx, ts_image *img, ts_err *err)
{
    batch *b = ctx;
    return ts_engine_image_to_host(b->gpu->set.e[0], img, err);
}

static void device_failed(batch *b, int i, ts_status st, const ts_err *e)
{
    ts_batch_fail(b, i, st, e);
    if (st == TS_E_DEVICE && !b->fatal) { b->fatal = 1; b->fatal_err = *e; }
    ts_batch_finish(b, i);
}

/* The next image for an engine, counted out of the early backlog. Lock held. */
static int pop_decoded(batch *b)
{
    int i = q_pop(&b->decoded);
    if (b->jobs[i].backlog) {
        b->jobs[i].backlog = 0;
        b->backlog--;
    }
    return i;
}

/* On a device error the images waiting for an engine are not processed. */
static void drain_decoded(batch *b)
{
    while (!q_empty(&b->decoded)) ts_batch_not_processed(b, pop_decoded(b));
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
            int i = pop_decoded(b);
            job *j = &b->jobs[i];
            j->state = ST_ON_GPU;
            b->gpu_left--;
            pthread_cond_broadcast(&b->changed);   /* room to decode another */
            pthread_mutex_unlock(&b->lock);
            ts_err e = { 0 };
            double t0 = ts_now();
            /* A JPEG output that nvJPEG will encode stays on the device. */
            j->out_on_device = ts_codec_session_on_device(b->gpu_codecs) &&
                               j->out_format == TS_FMT_JPEG && j->in.c == 3 && j->in.type == TS_U8;
            ts_status st = ts_engine_submit_to(es->e, ts_batch_chain_for(b, j), &j->in, &j->out,
                                               j->out_on_device ? ts_codec_session_device_allocator(b->gpu_codecs) : NULL,
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
        /* the end: nothing left for the GPU, and no CPU image left to
         * decode (one may still come to it) unless the run is stopping */
        int cpu_may_come = !(b->o->stop && *b->o->stop) && __atomic_load_n(&b->decodes_left, __ATOMIC_ACQUIRE) > 0;
        if ((b->gpu_left == 0 && b->to_admit == 0 && !cpu_may_come) || b->fatal) break;
        pthread_cond_wait(&b->changed, &b->lock);
    }
    b->feeders_running--;
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

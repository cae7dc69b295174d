/* batch.c - `tilestream run`: files and folders in, processed images out.
 *
 * Worker threads (--jobs) probe, decode and encode; the ops run either in
 * the worker itself (CPU backend) or on the GPU engines, fed by a thread
 * each (gpu_feed.c) with decoded images and drained in submission order.
 * With --device auto both take part: the GPU starts on a thread of its own
 * (gpu_start.c) while the workers run the first images on the CPU, and
 * takes every image admitted once it is ready; a job that ends first never
 * waits for it. Workers prefer encoding to decoding, so finished images
 * leave memory first, and an image is decoded only once the memory budget
 * admits it.
 * What the run reads (inputs.c), what one image goes through (stages.c),
 * where it writes and what it refuses (outputs.c) and which codec takes a
 * file (codec/codec_session.c) are decided in their own rooms. */
#include "batch_internal.h"
#include "buffers.h"
#include "outputs.h"
#include "trace_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ the run */

static int stopping(const batch *b) { return b->fatal || (b->o->stop && *b->o->stop); }

void ts_batch_fail(batch *b, int i, ts_status st, const ts_err *e)
{
    ts_image_result *res = &b->r->images[i];
    res->status = st;
    snprintf(res->error, sizeof res->error, "%s", e->msg);
}

/* Called with the lock held. */
void ts_batch_finish(batch *b, int i)
{
    job *j = &b->jobs[i];
    ts_image_result *res = &b->r->images[i];
    if (j->reserved && j->on_gpu && j->state < ST_ON_GPU) b->gpu_left--;
    if (!j->reserved && j->state < ST_DECODING) b->to_admit--;
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
    b->done_bytes += res->in_bytes;
    if (res->skipped) b->r->n_skipped++;
    else if (res->status == TS_OK) {
        b->r->n_ok++;
        if (!res->on_gpu) {
            b->cpu_bytes += res->in_bytes;
            b->cpu_seconds += res->decode_s + res->ops_s + res->encode_s;
        }
        b->r->pixels_in += (uint64_t)res->w * (uint64_t)res->h;
        b->r->pixels_out += (uint64_t)res->out_w * (uint64_t)res->out_h;
        if (res->on_gpu) b->r->n_on_gpu++;
        else b->r->n_on_cpu++;
        double t = ts_now() - b->t_origin;
        if (b->r->phases.first_image < 0) b->r->phases.first_image = t;
        b->r->phases.last_image = t;
    } else if (res->not_started) b->r->n_not_started++;   /* a stop or a device error came first */
    else b->r->n_failed++;
    if (b->o->on_image) b->o->on_image(b->o->ctx, res, b->done, b->r->n_images);
    pthread_cond_broadcast(&b->changed);
}

void ts_batch_trace(batch *b, int lane, const char *stage, double t0, double t1, uint64_t bytes, int image)
{
    if (b->o->trace) ts_trace_add(b->o->trace, lane, stage, t0, t1, bytes, image);
}

size_t ts_batch_image_bytes(const ts_image *img) { return (size_t)img->w * (size_t)img->h * ts_pixel_bytes(img); }

const ts_chain *ts_batch_chain_for(batch *b, const job *j) { return j->chain ? j->chain : b->chain; }

/* ---------------------------------------------------------------- workers */

enum { WORK_ENCODE, WORK_PIN, WORK_DECODE, WORK_PROBE, WORK_NONE = -1, WORK_ALL_DONE = -2 };

/* Job i fails unprocessed: a device error or a stop came first. Lock held. */
void ts_batch_not_processed(batch *b, int i)
{
    ts_err e;
    ts_err_set(&e, b->fatal ? TS_E_DEVICE : TS_E_INTERRUPTED, "%s: not processed: %s", b->r->images[i].input,
               b->fatal ? "the run stopped after a device error" : "interrupted");
    ts_batch_fail(b, i, e.status, &e);
    b->r->images[i].not_started = 1;
    ts_batch_finish(b, i);
}

/* Once stopping: every job not yet admitted, and every one decoded for a
 * GPU that never came, is failed, so that done reaches n_images. Lock held. */
static void drain_unstarted(batch *b)
{
    for (int i = b->next_admit; i < b->r->n_images; i++) {
        job *j = &b->jobs[i];
        if (j->state == ST_PENDING || j->state == ST_PROBED) ts_batch_not_processed(b, i);
    }
    while (!q_empty(&b->early)) ts_batch_not_processed(b, q_pop(&b->early));
    if (b->next_probe < b->r->n_images) b->next_probe = b->r->n_images;
}

/* Reserve job i's bytes on the backend it goes to (the GPU once it is
 * there: it finishes an image with less of the CPU's time): it fits when
 * the budget has room, or when nothing else is in flight (an image larger
 * than the budget runs alone). */
static int admit(batch *b, int i)
{
    job *j = &b->jobs[i];
    int on_gpu = b->gpu != NULL || b->mode == RUN_GPU;
    uint64_t cost = j->cost + (on_gpu ? 0 : j->cpu_extra);
    if (b->bytes_in_flight > 0 && b->bytes_in_flight + cost > b->budget) return 0;
    j->cost = cost;
    j->on_gpu = on_gpu;
    j->early = on_gpu && !b->gpu;
    b->r->images[i].on_gpu = on_gpu;
    b->gpu_left += on_gpu;
    b->to_admit--;
    j->reserved = 1;
    j->state = ST_DECODING;
    b->bytes_in_flight += j->cost;
    b->n_in_flight++;
    if (b->bytes_in_flight > b->r->memory_peak) b->r->memory_peak = b->bytes_in_flight;
    if (b->n_in_flight > b->r->max_in_flight) b->r->max_in_flight = b->n_in_flight;
    return 1;
}

/* Whether the GPU side leaves room for another decode (the budget's room
 * is admit's). No further ahead of the engines than they take in flight:
 * images decoded earlier only wait, fill the budget and leave outputs in
 * pageable memory, whose copies are slow (docs/measurements/batch.md). */
enum { TS_EARLY_PER_WORKER = 3 };

static int room_to_decode(batch *b)
{
    /* no further ahead of the engines than their depth, except while the
     * early images wait for them: the GPU's first seconds work through that
     * backlog, and the depth would hold the cores idle meanwhile
     * (docs/PERFORMANCE.md); the budget still bounds the bytes */
    if (b->gpu && b->backlog == 0 && q_empty(&b->early) && b->decoded.tail - b->decoded.head >= b->decode_ahead)
        return 0;
    /* --device gpu, before the engines are up: TS_EARLY_PER_WORKER images a
     * worker (the budget still bounds their bytes), so that the workers keep
     * decoding through the engines' start instead of waiting on it with one
     * image each; the pinned pool pins room for all of them when the engines
     * come (docs/BATCH.md). */
    if (!b->gpu && b->mode == RUN_GPU && b->early.tail - b->early.head >= b->early_per_worker * b->nworkers) return 0;
    /* --device auto, the GPU's engines up and only nvJPEG's set-up left (a
     * few tenths of a second): an image begun on the CPU now would end
     * after the GPU could have done it, and keep a core from the GPU's
     * decodes and encodes (docs/BATCH.md). The workers finish what they
     * hold and wait, for TS_GPU_SOON_HOLD_S at most. */
    if (!b->gpu && b->gpu_soon > 0 && ts_now() - b->gpu_soon < TS_GPU_SOON_HOLD_S) return 0;
    return 1;
}

/* The image to decode next, or -1: the next in input order, except among
 * a job's last 2 x workers images, where the largest one probed goes first.
 * A job ends when its last encode does; with large images last, a few
 * cores finish them while the others have nothing left (docs/PERFORMANCE.md,
 * the replay of a traced run). Lock held. */
static int next_to_decode(batch *b)
{
    const int n = b->r->n_images, first = b->next_admit;
    if (first >= n) return -1;
    if (n - first > 2 * b->nworkers) return b->jobs[first].state == ST_PROBED ? first : -1;
    int best = -1;
    for (int k = first; k < n; k++)
        if (b->jobs[k].state == ST_PROBED && (best < 0 || b->jobs[k].cost > b->jobs[best].cost)) best = k;
    return best;
}

/* Work for a CPU worker, chosen under the lock: encoding first (it frees
 * memory), then moving an early image into pinned memory once the GPU is
 * there, then decoding the next image in input order when there is room
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
        /* one worker at a time: pinning takes the driver's lock, and a
         * crowd of workers pinning at once waited on it for the whole
         * backlog (docs/PERFORMANCE.md) while one went on; the others
         * decode meanwhile */
        if (b->gpu && !q_empty(&b->early) && !b->pinning) {
            *i = q_pop(&b->early);
            b->pinning = 1;
            return WORK_PIN;
        }
        if (b->done == b->r->n_images) return WORK_ALL_DONE;
        /* the first image not yet admitted (the last ones go out of order) */
        while (b->next_admit < b->r->n_images && b->jobs[b->next_admit].state > ST_PROBED) b->next_admit++;
        int k = room_to_decode(b) ? next_to_decode(b) : -1;
        if (k >= 0 && admit(b, k)) {
            *i = k;
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
        ts_batch_probe(b, i);
        return 0;
    }
    if (kind == WORK_ENCODE) {
        if (res->status == TS_OK) ts_batch_encode(b, i, lane, w);
        return 1;
    }
    if (kind == WORK_PIN) {
        ts_batch_gpu_pin(b, i, lane);
        b->jobs[i].early = 0;
        return 0;
    }
    int decoded = ts_batch_decode(b, i, lane, w);
    ts_codec_session *gpu_codecs = __atomic_load_n(&b->gpu_codecs, __ATOMIC_ACQUIRE);
    if (__atomic_sub_fetch(&b->decodes_left, 1, __ATOMIC_ACQ_REL) == 0 && gpu_codecs)
        ts_codec_session_end_decoding(gpu_codecs);
    if (!decoded) return 1;
    if (b->jobs[i].on_gpu) return 0;
    if (ts_batch_gpu_take_decoded(b, i)) {
        ts_batch_gpu_pin(b, i, lane);
        return 0;
    }
    ts_batch_cpu_ops(b, i, lane);
    if (res->status == TS_OK) ts_batch_encode(b, i, lane, w);
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
        if (kind == WORK_PIN) b->pinning = 0;
        if (finished) ts_batch_finish(b, i);
        else if (kind == WORK_PROBE) b->jobs[i].state = ST_PROBED;
        else if (b->fatal) ts_batch_not_processed(b, i);
        else {
            b->jobs[i].state = ST_DECODED;
            if (kind == WORK_PIN) {
                b->jobs[i].backlog = 1;
                b->backlog++;
            }
            q_push(b->jobs[i].early ? &b->early : &b->decoded, i);
        }
        pthread_cond_broadcast(&b->changed);
    }
    ts_codec_session *gpu_codecs = b->gpu ? b->gpu->codecs : NULL;
    pthread_mutex_unlock(&b->lock);
    /* its nvJPEG state is released here, beside the other workers', not
     * one after another at the end */
    if (gpu_codecs) ts_codec_session_worker_done(gpu_codecs, wa->index);
    return NULL;
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void batch_cleanup(batch *b)
{
    ts_chain_free(b->chain);
    ts_codec_session_free(b->cpu_codecs);
    ts_gpu_start_release(b->gpu_start, b->o->background_release);
    if (b->jobs && b->r->images)
        for (int i = 0; i < b->r->n_images; i++) ts_chain_free(b->jobs[i].chain);
    free(b->jobs);
    free(b->decoded.at);
    free(b->early.at);
    free(b->processed.at);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->changed);
}

/* Plan the outputs (outputs.c): every image refused or skipped there is
 * reported now, before any work. needs and formats: room for each image.
 * Returns the number that need work. */
static int plan_outputs(batch *b, ts_input_list *l, const int *numbers, const ts_output_guard *guard, int *needs,
                        ts_format *formats)
{
    const ts_batch_opts *o = b->o;
    int work = 0;
    ts_outputs_plan(o, l, numbers, guard, b->r->images, formats, needs);
    for (int i = 0; i < l->n; i++) {
        ts_image_result *res = &b->r->images[i];
        b->jobs[i].out_format = formats[i];
        if (needs[i]) { work++; continue; }
        b->jobs[i].state = ST_DONE;
        b->done++;
        if (res->skipped) b->r->n_skipped++;
        else b->r->n_failed++;
        if (o->on_image) o->on_image(o->ctx, res, b->done, b->r->n_images);
    }
    if (!o->dry_run) ts_outputs_sweep_temps(b->r->images, needs, l->n);
    return work;
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

/* Start the workers, wait for them and for the GPU's feeders. */
static ts_status run_threads(batch *b, ts_err *err)
{
    const ts_batch_opts *o = b->o;
    ts_status st = TS_OK;
    pthread_t threads[TS_JOBS_MAX];
    worker_arg args[TS_JOBS_MAX];
    int started = 0;
    for (int w = 0; w < b->nworkers; w++) {
        char lane[32];
        snprintf(lane, sizeof lane, "cpu worker %d", w);
        args[w].b = b;
        args[w].index = w;
        args[w].lane = o->trace ? ts_trace_lane(o->trace, lane) : 0;
        if (pthread_create(&threads[w], NULL, worker, &args[w]) == 0) started++;
        else break;
    }
    if (started == 0 && b->mode != RUN_GPU) {
        /* no threads at all: do the CPU work on this thread */
        args[0].b = b; args[0].lane = 0; args[0].index = 0;
        worker(&args[0]);
    } else if (started == 0) {
        st = ts_err_set(err, TS_E_NOMEM, "cannot start worker threads");
        pthread_mutex_lock(&b->lock);
        b->fatal = 1;
        b->fatal_err = *err;
        pthread_cond_broadcast(&b->changed);
        pthread_mutex_unlock(&b->lock);
    } else if (b->mode == RUN_CPU_THEN_GPU || b->early_decode) ts_batch_gpu_coordinate(b);
    for (int w = 0; w < started; w++) pthread_join(threads[w], NULL);
    for (int k = 0; k < b->n_feeders; k++) pthread_join(b->feeders[k], NULL);
    return st;
}

static void phases_clear(ts_run_phases *p)
{
    double *v = (double *)p;
    for (size_t k = 0; k < sizeof *p / sizeof *v; k++) v[k] = -1;
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
    b.t_origin = o->process_start > 0 && o->process_start <= t_start ? o->process_start : t_start;
    phases_clear(&r->phases);
    if (b.t_origin < t_start) { r->phases.program[0] = 0; r->phases.program[1] = t_start - b.t_origin; }

    ts_status st = ts_batch_opts_check(o, err);
    if (st == TS_OK) st = ts_chain_parse(o->chain_text ? o->chain_text : "", &b.chain, err);
    if (st == TS_OK && !o->outdir) st = ts_err_set(err, TS_E_ARG, "no output folder (-o OUTDIR)");
    if (st == TS_OK) st = ts_outputs_check_before_work(o, err);
    memset(b.background, 255, sizeof b.background);
    ts_err why;
    if (st == TS_OK && o->background && ts_colour_parse(o->background, b.background, &why) != TS_OK)
        st = ts_err_set(err, TS_E_ARG, "--background: %s", why.msg);
    if (st == TS_OK) st = ts_inputs_collect(o->inputs, o->n_inputs, o->outdir, &l, err);
    int *numbers = NULL, *needs = NULL;
    ts_format *formats = NULL;
    /* every input of the run, other shards' too, before the shard is taken */
    ts_output_guard *guard = NULL;
    if (st == TS_OK && !(guard = ts_output_guard_make(o->outdir, &l))) st = ts_err_set(err, TS_E_NOMEM, "out of memory");
    if (st == TS_OK) st = ts_inputs_number_and_shard(&l, &o->shard, &numbers, err);
    if (st == TS_OK && l.n == 0)
        st = o->shard.count > 1 ? ts_err_set(err, TS_E_ARG, "no PNG or JPEG files for shard %d of %d in the inputs",
                                             o->shard.index, o->shard.count)
                                : ts_err_set(err, TS_E_ARG, "no PNG or JPEG files found in the inputs");
    /* --device auto starts on the CPU at once; finding the GPU (the
     * driver's start) is the first step of its own start. */
    int use_gpu = 0;
    if (o->device == TS_DEVICE_AUTO && o->codec != TS_CODEC_GPU && !o->dry_run && ts_gpu_built()) {
        b.mode = RUN_CPU_THEN_GPU;
        snprintf(r->device, sizeof r->device, "cpu");
        snprintf(r->device_note, sizeof r->device_note, "--device auto: the GPU takes images once it has started");
    } else if (st == TS_OK && o->device == TS_DEVICE_GPU && o->codec == TS_CODEC_CPU && !o->dry_run &&
               ts_gpu_built()) {
        /* --device gpu with the CPU codecs: the workers decode the first
         * images while the GPU starts (early_decode below), so finding the
         * devices (the driver's start) is the start's first step, not a
         * wait before any work; without one the run stops when the start
         * fails, before any image is written */
        b.mode = RUN_GPU;
        snprintf(r->device, sizeof r->device, "gpu");
        snprintf(r->device_note, sizeof r->device_note, "asked for with --device gpu");
    } else if (st == TS_OK) {
        b.probe[0] = ts_now();   /* the GPU's first phase, here inside `inputs` */
        st = ts_engine_pick_device(o->device, r->device, sizeof r->device, r->device_note, sizeof r->device_note,
                                   &use_gpu, err);
        b.probe[1] = ts_now();
        if (st == TS_OK) b.mode = use_gpu ? RUN_GPU : RUN_CPU;
    }
    if (st == TS_OK && o->codec == TS_CODEC_GPU && b.mode != RUN_GPU)
        st = ts_err_set(err, TS_E_ARG, "--codec gpu needs the GPU (--device gpu or auto with a CUDA device)");
    if (st == TS_OK) {
        r->n_images = l.n;
        r->images = calloc((size_t)l.n, sizeof *r->images);
        b.jobs = calloc((size_t)l.n, sizeof *b.jobs);
        b.decoded.at = malloc(sizeof(int) * (size_t)l.n);
        b.early.at = malloc(sizeof(int) * (size_t)l.n);
        b.processed.at = malloc(sizeof(int) * (size_t)l.n);
        needs = malloc(sizeof *needs * (size_t)l.n);
        formats = malloc(sizeof *formats * (size_t)l.n);
        if (!r->images || !b.jobs || !b.decoded.at || !b.early.at || !b.processed.at || !needs || !formats)
            st = ts_err_set(err, TS_E_NOMEM, "out of memory");
    }
    if (st != TS_OK) {
        ts_inputs_free(&l);
        ts_output_guard_free(guard);
        free(numbers);
        free(needs);
        free(formats);
        free(r->images);
        r->images = NULL;
        r->n_images = 0;
        batch_cleanup(&b);
        return st;
    }
    if (o->on_start) o->on_start(o->ctx, r);
    int work = plan_outputs(&b, &l, numbers, guard, needs, formats);
    ts_inputs_free(&l);
    ts_output_guard_free(guard);
    free(numbers);
    free(needs);
    free(formats);
    b.budget = o->memory ? o->memory : ts_default_memory_budget();
    r->memory_budget = b.budget;
    b.to_admit = work;
    b.decodes_left = work;
    for (int i = 0; i < r->n_images && !b.wants_jpeg; i++)
        b.wants_jpeg = b.jobs[i].state != ST_DONE &&
                       (b.jobs[i].out_format == TS_FMT_JPEG || ts_format_from_path(r->images[i].input) == TS_FMT_JPEG);

    r->phases.inputs[0] = t_start - b.t_origin;
    r->phases.inputs[1] = ts_now() - b.t_origin;
    b.nworkers = o->jobs > 0 ? o->jobs : cpu_count();   /* --jobs is at most TS_JOBS_MAX (ts_batch_opts_check) */
    if (b.nworkers > TS_JOBS_MAX) b.nworkers = TS_JOBS_MAX;
    /* --device auto with no more images than workers: each worker takes one
     * at once and the job ends within an image's time, long before a GPU
     * could start; its start would only take cores from them. */
    if (b.mode == RUN_CPU_THEN_GPU && work <= b.nworkers) {
        b.mode = RUN_CPU;
        snprintf(r->gpu_note, sizeof r->gpu_note, "not started: %d image%s, one a CPU worker", work, work == 1 ? "" : "s");
    }
    /* --device gpu: decodes should land in pinned memory, which takes the
     * engines. With nvJPEG the first files wait for it. With the CPU codecs
     * the workers decode the first images into ordinary memory while the
     * engines start, as many as they can then move into pinned memory at
     * once (room_to_decode): decoding every image beside the start into
     * ordinary memory, or pinning the whole pool up front, were both slower
     * than waiting (docs/measurements/batch.md). */
    b.early_decode = b.mode == RUN_GPU && (o->codec == TS_CODEC_CPU || !b.wants_jpeg);
    b.early_alloc = ts_engine_pinnable_allocator();
    /* measurements: TS_TEST_EARLY_PER_WORKER=N tries another cap */
    const char *early = getenv("TS_TEST_EARLY_PER_WORKER");
    b.early_per_worker = early && atoi(early) > 0 ? atoi(early) : TS_EARLY_PER_WORKER;
    if (!o->dry_run && work > 0 && b.mode == RUN_CPU_THEN_GPU) ts_batch_gpu_defer(&b);
    else if (!o->dry_run && work > 0 && b.mode != RUN_CPU) st = ts_batch_gpu_start(&b, err);
    if (st == TS_OK && !(b.cpu_codecs = ts_codec_session_create(TS_CODEC_CPU, 0, 0, 0)))
        st = ts_err_set(err, TS_E_NOMEM, "out of memory");
    if (st != TS_OK) {
        batch_cleanup(&b);
        return st;
    }
    if (o->dry_run) {
        /* each input's header is read, so the plan fails where the run would: missing, unreadable, not an image */
        for (int i = 0; i < r->n_images; i++) {
            if (b.jobs[i].state == ST_DONE) continue;
            ts_image_info info;
            ts_err e = { 0 };
            if (ts_image_probe(r->images[i].input, &info, &e) != TS_OK) {
                ts_batch_fail(&b, i, e.status, &e);
                r->n_failed++;
            }
            if (o->on_image) o->on_image(o->ctx, &r->images[i], i + 1, r->n_images);
        }
        st = final_status(o, &b, err);
        batch_cleanup(&b);
        r->wall_s = ts_now() - t_start;
        return st;
    }

    if (b.mode != RUN_GPU && (b.pool = ts_pool_create(b.nworkers)) != NULL) {   /* NULL: each image on its worker's thread */
        /* decodes and outputs reuse the pixels of finished images; idle ones
         * beyond an eighth of the budget go back to the system */
        uint64_t keep = b.budget / 8;
        if (keep < ts_buffers_default_keep()) ts_pool_keep(b.pool, (size_t)keep);
        b.cpu_alloc = ts_pool_allocator(b.pool);
    }
    double t_work = ts_now();
    r->setup_s = t_work - t_start;
    st = run_threads(&b, err);
    double t_done = ts_now();
    r->work_s = t_done - t_work;
    r->phases.work[0] = t_work - b.t_origin;
    r->phases.work[1] = t_done - b.t_origin;
    ts_pool_free(b.pool);
    if (b.mode == RUN_CPU_THEN_GPU) ts_batch_gpu_after(&b);
    ts_codec_session *used = b.gpu ? b.gpu->codecs : b.cpu_codecs;
    snprintf(r->codec_note, sizeof r->codec_note, "%s", ts_codec_session_note(used));
    if (b.gpu) {
        r->decoded_pinned = b.gpu->set.pinned_decodes;
        r->decoded_pageable = b.gpu->set.pageable_decodes;
        for (int k = 0; k < b.gpu->set.n; k++) r->pinned_bytes += ts_engine_pinned_bytes(b.gpu->set.e[k]);
        ts_codec_session_counts(b.gpu->codecs, &r->gpu_decoded, &r->gpu_encoded);
    }
    r->flattened = b.flattened;
    for (int i = 0; i < r->n_images; i++) r->shrunk_on_load += b.jobs[i].scale > 1 && r->images[i].status == TS_OK && !r->images[i].skipped;
    if (st == TS_OK) st = final_status(o, &b, err);
    batch_cleanup(&b);
    double t_end = ts_now();
    r->phases.teardown[0] = t_done - b.t_origin;
    r->phases.teardown[1] = t_end - b.t_origin;
    r->finish_s = t_end - t_done;
    r->wall_s = t_end - t_start;
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

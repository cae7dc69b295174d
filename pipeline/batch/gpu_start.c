/* gpu_start.c - the GPU side of a run made ready, on the caller's thread or
 * on one of its own (gpu_start.h).
 *
 * A start on its own thread may outlive the run: a job shorter than the
 * driver's start ends first and must not wait for it. So the start owns
 * everything it makes (its copies of the options included) and frees it
 * itself when the run has let go; the run learns of it only through the
 * soon and ready calls, made under the start's lock so that a release
 * either comes before one (no call) or after it returns. */
#include "gpu_start.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ts_gpu_start {
    ts_gpu_start_opts o;
    char *gpus, *chain_text;  /* the start's own copies */
    void (*soon)(void *ctx), (*ready)(void *ctx);
    void *ctx;
    pthread_mutex_t lock;
    int done;                 /* the side is made (or failed) */
    int released;             /* the run let go: the thread frees everything */
    ts_status st;
    ts_err err;
    ts_gpu_side side;
};

/* ---------------------------------------------- threads left behind */

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t threads_ended = PTHREAD_COND_INITIALIZER;
static int threads_pending;
static int gpu_used;          /* some start has called into CUDA (atomic) */

int ts_gpu_used(void) { return __atomic_load_n(&gpu_used, __ATOMIC_ACQUIRE); }

static void thread_began(int d)
{
    pthread_mutex_lock(&threads_lock);
    threads_pending += d;
    if (threads_pending == 0) pthread_cond_broadcast(&threads_ended);
    pthread_mutex_unlock(&threads_lock);
}

int ts_gpu_threads_pending(void)
{
    pthread_mutex_lock(&threads_lock);
    int n = threads_pending;
    pthread_mutex_unlock(&threads_lock);
    return n;
}

void ts_gpu_threads_join(void)
{
    pthread_mutex_lock(&threads_lock);
    while (threads_pending > 0) pthread_cond_wait(&threads_ended, &threads_lock);
    pthread_mutex_unlock(&threads_lock);
}

/* Run fn(arg) on a detached thread counted in ts_gpu_threads_pending; on
 * this one when no thread can be made. */
static void run_detached(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    pthread_attr_t at;
    thread_began(1);
    int made = pthread_attr_init(&at) == 0;
    if (made) {
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        made = pthread_create(&t, &at, fn, arg) == 0;
        pthread_attr_destroy(&at);
    }
    if (!made) fn(arg);
}

/* ---------------------------------------------------------- the start */

/* One engine per entry of --gpus, the codec session on the first one's
 * device (nvJPEG sets up on a thread of its own meanwhile), the rates, then
 * nvJPEG settled: the side is ready only when every part of it is. */
static void make(ts_gpu_start *g)
{
    ts_gpu_side *s = &g->side;
    /* tests: a start slower than any job, to show the run does not wait for it */
    const char *delay = getenv("TS_TEST_GPU_START_DELAY_MS");
    if (delay) usleep((useconds_t)(atoi(delay) > 0 ? atoi(delay) : 0) * 1000u);
    s->probe[0] = ts_now();
    __atomic_store_n(&gpu_used, 1, __ATOMIC_RELEASE);
    int use_gpu = 0;
    g->st = ts_engine_pick_device(g->o.device, s->device, sizeof s->device, s->note, sizeof s->note, &use_gpu, &g->err);
    s->probe[1] = ts_now();
    if (g->st != TS_OK || !use_gpu) return;
    int devices[TS_MAX_ENGINES];
    int n = ts_engine_parse_gpus(g->gpus, ts_gpu_count(NULL), devices, TS_MAX_ENGINES, &g->err);
    if (n < 0) { g->st = g->err.status; return; }
    if (n == 0) { g->st = ts_err_set(&g->err, TS_E_DEVICE, "no CUDA device for the GPU engines"); return; }
    if (!(s->codecs = ts_codec_session_create(g->o.codec, 1, g->o.wants_jpeg, devices[0]))) {
        g->st = ts_err_set(&g->err, TS_E_NOMEM, "out of memory");
        return;
    }
    ts_chain *warm = NULL;
    if (ts_chain_parse(g->chain_text, &warm, NULL) != TS_OK) warm = NULL;   /* parsed by the run already */
    /* Pinned memory is locked RAM: the caller's limit (half the budget);
     * images past it decode into pageable memory (staged, slower). */
    ts_engine_set_opts eo = { g->o.streams, g->o.tile_w, g->o.tile_h, g->o.path, NULL, g->o.pinned_limit, warm };
    s->engines[0] = ts_now();
    g->st = ts_engine_set_start(&s->set, &eo, devices, n, &g->err);
    ts_chain_free(warm);
    s->engines[1] = s->engines[0] + s->set.context_s;
    s->warmup[0] = s->engines[1];
    s->warmup[1] = s->warmup[0] + s->set.warmup_s;
    if (g->st != TS_OK) return;
    if (n > 1) {
        char names[128] = "";
        for (int k = 0; k < n; k++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%d", k ? "," : "", devices[k]);
        snprintf(s->device + strlen(s->device), sizeof s->device - strlen(s->device), " x %d engines (devices %s)", n, names);
    }
    if (g->o.rates) {
        /* zeros if it fails or is not asked for: the table then omits shares */
        s->rates[0] = ts_now();
        ts_err perr = { 0 };
        ts_engine_peak_rates(s->set.e[0], &s->peak, &perr);
        s->rates[1] = ts_now();
    }
    /* every engine on the codec's device: decoded pixels and JPEG outputs need not cross the bus */
    if (ts_engine_set_one_device(&s->set))
        ts_codec_session_keep_on_device(s->codecs, 1, ts_engine_device_allocator(s->set.e[0]));
    /* the engines are up; only nvJPEG's set-up is left */
    pthread_mutex_lock(&g->lock);
    if (!g->released && g->soon) g->soon(g->ctx);
    pthread_mutex_unlock(&g->lock);
    ts_err cerr = { 0 };
    if (ts_codec_session_wait(s->codecs, &cerr) != TS_OK && g->o.codec == TS_CODEC_GPU) {
        g->st = cerr.status;
        g->err = cerr;
    }
    ts_codec_session_setup_times(s->codecs, &s->nvjpeg[0], &s->nvjpeg[1]);
    s->ready = ts_now();
}

static void side_free(ts_gpu_side *s)
{
    ts_codec_session_free(s->codecs);
    s->codecs = NULL;
    ts_engine_set_free(&s->set);
}

static void start_free(ts_gpu_start *g)
{
    side_free(&g->side);
    pthread_mutex_destroy(&g->lock);
    free(g->gpus);
    free(g->chain_text);
    free(g);
}

static void *start_thread(void *p)
{
    ts_gpu_start *g = p;
    make(g);
    pthread_mutex_lock(&g->lock);
    g->done = 1;
    int released = g->released;
    if (!released && g->ready) g->ready(g->ctx);
    pthread_mutex_unlock(&g->lock);
    if (released) start_free(g);
    thread_began(-1);
    return NULL;
}

static char *copy(const char *text)
{
    return text ? strdup(text) : NULL;
}

ts_gpu_start *ts_gpu_start_begin(const ts_gpu_start_opts *o, int on_thread, void (*soon)(void *ctx),
                                 void (*ready)(void *ctx), void *ctx)
{
    ts_gpu_start *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->o = *o;
    g->gpus = copy(o->gpus);
    g->chain_text = copy(o->chain_text ? o->chain_text : "");
    if ((o->gpus && !g->gpus) || !g->chain_text) {
        free(g->gpus);
        free(g->chain_text);
        free(g);
        return NULL;
    }
    g->o.gpus = g->gpus;
    g->o.chain_text = g->chain_text;
    g->soon = on_thread ? soon : NULL;
    g->ready = ready;
    g->ctx = ctx;
    pthread_mutex_init(&g->lock, NULL);
    if (on_thread) run_detached(start_thread, g);
    else {
        make(g);
        g->done = 1;
    }
    return g;
}

ts_gpu_side *ts_gpu_start_side(ts_gpu_start *g, ts_status *st, ts_err *err)
{
    pthread_mutex_lock(&g->lock);
    int done = g->done;
    pthread_mutex_unlock(&g->lock);
    if (!done) return NULL;
    *st = g->st;
    if (err && g->st != TS_OK) *err = g->err;
    return &g->side;
}

static void *release_thread(void *p)
{
    start_free(p);
    thread_began(-1);
    return NULL;
}

void ts_gpu_start_release(ts_gpu_start *g, int in_background)
{
    if (!g) return;
    pthread_mutex_lock(&g->lock);
    int done = g->done;
    g->released = 1;
    pthread_mutex_unlock(&g->lock);
    if (!done) return;   /* the start's thread frees it all when it ends */
    if (in_background && g->side.set.n > 0) run_detached(release_thread, g);
    else start_free(g);
}

/* codec_session.c - a run's codecs: nvJPEG first where it may take a file,
 * the CPU codecs for the rest and for whatever nvJPEG refuses.
 *
 * nvJPEG's set-up (the CUDA context, then nvjpegCreateEx with the hardware
 * backend) is long, so a thread does it while the run starts its engines;
 * the first load or save that could use it waits for it (settle, once).
 * With --codec auto, a device without the hardware JPEG decoder drops
 * nvJPEG: its hybrid backend decodes Huffman on one CPU core per image, no
 * faster than libjpeg-turbo on the same core. Each worker has its own
 * coder (nvJPEG state, stream, buffers), made on first use. */
#include "codec_session.h"
#include "gpu_codec.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ts_codec_session {
    ts_codec want;
    int device;
    ts_gpu_codec *codec;       /* NULL: CPU codecs only */
    int hardware;              /* the hardware decoder is there */
    pthread_t thread;          /* makes codec */
    int thread_running;
    ts_status made;            /* the thread's outcome */
    ts_err why;
    pthread_mutex_t lock;
    int ready;                 /* settled: codec is final (atomic) */
    ts_status settled;         /* the settle's outcome, for later waits */
    ts_err settle_err;
    int on_device;             /* pixels stay on the device */
    ts_allocator device_alloc;
    ts_gpu_coder *coders[TS_SESSION_WORKERS];
    int coder_failed[TS_SESSION_WORKERS];
    int gpu_decoded, gpu_encoded;
    double setup_t0, setup_t1;  /* nvJPEG's set-up, on the ts_now() clock (0: none) */
    char note[160];
};

static void *make_codec(void *p)
{
    ts_codec_session *s = p;
    s->setup_t0 = ts_now();
    s->made = ts_gpu_codec_create(s->device, &s->codec, &s->hardware, &s->why);
    s->setup_t1 = ts_now();
    return NULL;
}

ts_codec_session *ts_codec_session_create(ts_codec want, int on_gpu, int wants_jpeg, int device)
{
    ts_codec_session *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    pthread_mutex_init(&s->lock, NULL);
    s->want = want;
    s->device = device;
    s->ready = 1;
    if (!on_gpu) snprintf(s->note, sizeof s->note, "cpu (the run is on the CPU)");
    else if (want == TS_CODEC_CPU) snprintf(s->note, sizeof s->note, "cpu (asked for with --codec cpu)");
    if (!on_gpu || want == TS_CODEC_CPU || !wants_jpeg) return s;   /* no JPEG: nvJPEG's set-up buys nothing */
    s->ready = 0;
    if (pthread_create(&s->thread, NULL, make_codec, s) == 0) s->thread_running = 1;
    else make_codec(s);
    return s;
}

void ts_codec_session_keep_on_device(ts_codec_session *s, int every_engine_there, ts_allocator alloc)
{
    s->on_device = every_engine_there;
    s->device_alloc = alloc;
}

/* With s->lock held, once. */
static ts_status settle(ts_codec_session *s, ts_err *err)
{
    if (s->thread_running) {
        pthread_join(s->thread, NULL);
        s->thread_running = 0;
    }
    if (s->made != TS_OK) {
        s->on_device = 0;
        if (s->want == TS_CODEC_GPU) return ts_err_set(err, TS_E_DEVICE, "--codec gpu: %s", s->why.msg);
        snprintf(s->note, sizeof s->note, "cpu (%.140s)", s->why.msg);
        return TS_OK;
    }
    if (!s->hardware && s->want == TS_CODEC_AUTO) {
        ts_gpu_codec_destroy(s->codec);
        s->codec = NULL;
        s->on_device = 0;
        snprintf(s->note, sizeof s->note, "cpu (no hardware JPEG decoder on this GPU; --codec gpu uses nvJPEG's hybrid one)");
        return TS_OK;
    }
    snprintf(s->note, sizeof s->note, "nvJPEG on device %d (%s decoder%s), CPU for what it does not take", s->device,
             s->hardware ? "hardware" : "hybrid", s->on_device ? ", pixels kept on the device" : "");
    return TS_OK;
}

ts_status ts_codec_session_wait(ts_codec_session *s, ts_err *err)
{
    if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&s->lock);
        if (!s->ready) {
            s->settled = settle(s, &s->settle_err);
            __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&s->lock);
    }
    if (s->settled != TS_OK && err) *err = s->settle_err;
    return s->settled;
}

int ts_codec_session_on_device(ts_codec_session *s)
{
    return __atomic_load_n(&s->ready, __ATOMIC_ACQUIRE) && s->codec && s->on_device;
}

const ts_allocator *ts_codec_session_device_allocator(ts_codec_session *s) { return &s->device_alloc; }

/* Worker w's coder, made on first use; NULL without nvJPEG. */
static ts_gpu_coder *coder_for(ts_codec_session *s, int w)
{
    ts_codec_session_wait(s, NULL);
    if (!s->codec || w < 0 || w >= TS_SESSION_WORKERS || s->coder_failed[w]) return NULL;
    if (!s->coders[w] && ts_gpu_coder_create(s->codec, &s->coders[w], NULL) != TS_OK) s->coder_failed[w] = 1;
    return s->coders[w];
}

ts_status ts_codec_session_load(ts_codec_session *s, int w, const char *path, const ts_load_opts *lo, int scale,
                                int gpu_ok, ts_image *img, int *on_gpu, ts_err *err)
{
    ts_gpu_coder *k = gpu_ok && scale == 1 ? coder_for(s, w) : NULL;
    *on_gpu = 0;
    if (k) {
        int cpu = 1;
        ts_status st = ts_gpu_decode_file(k, path, lo, s->on_device ? &s->device_alloc : NULL, img, &cpu, err);
        if (!cpu) {
            if (st == TS_OK) __atomic_add_fetch(&s->gpu_decoded, 1, __ATOMIC_RELAXED);
            *on_gpu = 1;
            return st;
        }
        memset(err, 0, sizeof *err);   /* not for nvJPEG: the CPU decoder decides and names any damage */
    }
    return ts_image_load_scaled(path, lo, scale, img, err);
}

ts_status ts_codec_session_save(ts_codec_session *s, int w, const char *path, ts_image *img, int *on_device,
                                const ts_save_opts *so, ts_to_host_fn to_host, void *ctx, int *on_gpu, ts_err *err)
{
    ts_save_opts use;
    *on_gpu = 0;
    ts_status st = ts_save_opts_resolve(path, so, &use, err);
    if (st != TS_OK) return st;
    ts_gpu_coder *k = use.format == TS_FMT_JPEG ? coder_for(s, w) : NULL;
    if (k) {
        int cpu = 1;
        st = ts_gpu_save_jpeg(k, path, img, *on_device, use.quality, &cpu, err);
        if (!cpu) {   /* else nothing was written: the CPU writer does it */
            if (st == TS_OK) __atomic_add_fetch(&s->gpu_encoded, 1, __ATOMIC_RELAXED);
            *on_gpu = 1;
            return st;
        }
    }
    if (*on_device) {   /* nvJPEG did not take it: the pixels come to the host for the CPU writer */
        ts_err why = { 0 };
        st = to_host(ctx, img, &why);
        if (st != TS_OK) return ts_err_set(err, st, "%s: %s", path, why.msg);
        *on_device = 0;
    }
    memset(err, 0, sizeof *err);
    return ts_image_save(path, img, &use, err);
}

void ts_codec_session_end_decoding(ts_codec_session *s)
{
    if (__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE) && s->codec) ts_gpu_codec_end_decoding(s->codec);
}

void ts_codec_session_worker_done(ts_codec_session *s, int w)
{
    if (w < 0 || w >= TS_SESSION_WORKERS) return;
    ts_gpu_coder_destroy(s->coders[w]);
    s->coders[w] = NULL;
}

const char *ts_codec_session_note(const ts_codec_session *s) { return s->note; }

void ts_codec_session_setup_times(const ts_codec_session *s, double *t0, double *t1)
{
    *t0 = s->setup_t0;
    *t1 = s->setup_t1;
}

void ts_codec_session_counts(const ts_codec_session *s, int *gpu_decoded, int *gpu_encoded)
{
    *gpu_decoded = s->gpu_decoded;
    *gpu_encoded = s->gpu_encoded;
}

void ts_codec_session_free(ts_codec_session *s)
{
    if (!s) return;
    if (s->thread_running) pthread_join(s->thread, NULL);   /* a run stopped before it needed nvJPEG */
    for (int w = 0; w < TS_SESSION_WORKERS; w++) ts_gpu_coder_destroy(s->coders[w]);
    ts_gpu_codec_destroy(s->codec);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

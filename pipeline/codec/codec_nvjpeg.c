/* codec_nvjpeg.c - JPEG on the GPU with nvJPEG (see gpu_codec.h).
 *
 * Decode: the header, limits and metadata are read on the CPU
 * (ts_jpeg_load_header), the file's bytes read into a pinned buffer, and
 * on the hardware backend nvjpegDecodeBatchedSupported decides whether the
 * hardware decoder takes it (baseline, single scan, not 4:1:0 or 4:1:1).
 * The files it takes are decoded in batches by one thread (the batcher),
 * whatever the workers have queued meanwhile; the rest (progressive files
 * above all), and every file on a card without the hardware decoder, by
 * the GPU_HYBRID backend on the worker's own decoder. Every file nvJPEG
 * refuses goes back to the caller for libjpeg-turbo. The strict-bitstream
 * flag makes nvJPEG refuse damaged data instead of decoding guesses, so
 * the CPU decoder names it.
 * The RGB pixels stay on the device when the caller gives a device
 * allocator (the engine then copies device to device), else they come back
 * to host memory from the caller's allocator.
 *
 * Encode: the image goes up (unless it is already on the device),
 * nvjpegEncodeImage codes it at the CPU
 * writer's quality with 4:2:0 chroma (what libjpeg's defaults give), and
 * the bitstream comes back and is written with the image's EXIF, XMP and
 * ICC by ts_jpeg_write_bitstream. Every nvJPEG and CUDA status is checked
 * and named with the file. */
#include "gpu_codec.h"

#ifndef TS_HAVE_NVJPEG

static ts_status no_nvjpeg(ts_err *err)
{
    return ts_err_set(err, TS_E_DEVICE, "GPU JPEG codec: this tilestream was built without nvJPEG");
}

int ts_gpu_codec_built(void) { return 0; }

ts_status ts_gpu_codec_create(int device, ts_gpu_codec **out, int *hardware, ts_err *err)
{
    (void)device;
    *out = NULL;
    *hardware = 0;
    return no_nvjpeg(err);
}

void ts_gpu_codec_destroy(ts_gpu_codec *c) { (void)c; }
int ts_gpu_codec_wait_hardware(ts_gpu_codec *c) { (void)c; return 0; }
void ts_gpu_codec_end_decoding(ts_gpu_codec *c) { (void)c; }

ts_status ts_gpu_coder_create(ts_gpu_codec *c, ts_gpu_coder **out, ts_err *err)
{
    (void)c;
    *out = NULL;
    return no_nvjpeg(err);
}

void ts_gpu_coder_destroy(ts_gpu_coder *k) { (void)k; }

ts_status ts_gpu_decode_file(ts_gpu_coder *k, const char *path, const ts_load_opts *opts,
                             const ts_allocator *device_alloc, ts_image *img, int *cpu, ts_err *err)
{
    (void)k; (void)path; (void)opts; (void)device_alloc; (void)img;
    *cpu = 1;
    return no_nvjpeg(err);
}

ts_status ts_gpu_save_jpeg(ts_gpu_coder *k, const char *path, const ts_image *img, int on_device, int quality,
                           int *cpu, ts_err *err)
{
    (void)k; (void)path; (void)img; (void)on_device; (void)quality;
    *cpu = 1;
    return no_nvjpeg(err);
}

#else

#include "codec_formats.h"
#include "pinned.h"

#include <cuda_runtime_api.h>
#include <errno.h>
#include <nvjpeg.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* One file for the hardware decoder, queued by a worker for the batcher. */
typedef struct hw_request {
    const unsigned char *data;
    size_t len;
    nvjpegImage_t out;
    nvjpegStatus_t status;
    int done;
    struct hw_request *next;
} hw_request;

enum { HW_BATCH_MAX = 32 };

struct ts_gpu_codec {
    int device;
    int hardware;             /* NVJPEG_BACKEND_HARDWARE: batched decode on the JPEG engines */
    nvjpegHandle_t h;
    /* The batcher (hardware decoder only): one thread decodes the files the
     * workers queue, as many at a time as are waiting. One call spreads a
     * batch over the card's JPEG engines; one file a call (each worker on
     * its own) leaves them mostly idle. */
    pthread_mutex_t lock;
    pthread_cond_t wake, finished;
    hw_request *head, *tail;
    int stopping, batcher_running, locks_made;
    pthread_t batcher;
    nvjpegJpegState_t batch_state;
    int batch_size;           /* what batch_state is initialised for */
    nvjpegStatus_t state_status; /* of making batch_state (by the batcher) */
    int state_made;           /* the batcher has tried to make batch_state */
    int batch_ready;          /* ... and made it: files may queue for the batcher */
    cudaStream_t batch_stream;
    cudaEvent_t batch_done;
};

/* What the hardware decoder does not take (progressive files above all),
 * and every file where the card has no hardware decoder, is decoded by the
 * GPU_HYBRID backend through nvJPEG's decoupled API: the CPU part
 * (nvjpegDecodeJpegHost) on the calling worker, the rest on the coder's
 * stream. It takes such files faster than libjpeg-turbo and with far less
 * CPU time; the HYBRID backend (Huffman on the CPU) was rejected, slower
 * on both (docs/measurements/pipeline.md). */
typedef struct hybrid_decoder {
    nvjpegJpegDecoder_t dec;
    nvjpegJpegState_t state;
    nvjpegBufferPinned_t pinned;
    nvjpegBufferDevice_t device;
    nvjpegDecodeParams_t params;
    int made, failed;
} hybrid_decoder;

struct ts_gpu_coder {
    ts_gpu_codec *c;
    cudaStream_t stream;
    cudaEvent_t done;         /* recorded on stream to wait without spinning */
    hybrid_decoder hyb;       /* made on first use */
    nvjpegJpegStream_t parsed;
    nvjpegEncoderState_t enc;
    nvjpegEncoderParams_t params;
    int quality;              /* what params hold (0 = not set yet) */
    unsigned char *dev;       /* interleaved RGB of one image */
    size_t dev_cap;
    unsigned char *bits;      /* pinned: a file's bytes, or a bitstream */
    size_t bits_cap;
};

static const char *nvjpeg_name(nvjpegStatus_t s)
{
    switch (s) {
    case NVJPEG_STATUS_SUCCESS: return "success";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "not initialised";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "invalid parameter";
    case NVJPEG_STATUS_BAD_JPEG: return "bad JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "JPEG not supported";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "allocator failure";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "execution failed";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "internal error";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "implementation not supported";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "incomplete bitstream";
    default: return "unknown status";
    }
}

static ts_status nv_fail(nvjpegStatus_t s, const char *path, const char *what, ts_err *err)
{
    return ts_err_set(err, TS_E_DEVICE, "%s: nvJPEG %s: %s (status %d)", path, what, nvjpeg_name(s), (int)s);
}

static ts_status cu_fail(cudaError_t e, const char *path, const char *what, ts_err *err)
{
    return ts_err_set(err, TS_E_DEVICE, "%s: %s: %s", path, what, cudaGetErrorString(e));
}

int ts_gpu_codec_built(void) { return 1; }

/* Wait for what is queued on stream. cudaStreamSynchronize spins a core
 * until the GPU is done; an event made with cudaEventBlockingSync lets the
 * thread sleep, leaving the core to other workers' CPU work meanwhile (a
 * worker waits long on a progressive file's GPU_HYBRID decode, and the
 * spinning was most of that decoder's CPU time;
 * docs/measurements/pipeline.md). */
static cudaError_t wait_for(cudaStream_t stream, cudaEvent_t done)
{
    cudaError_t ce = cudaEventRecord(done, stream);
    return ce == cudaSuccess ? cudaEventSynchronize(done) : ce;
}

static cudaError_t make_wait_event(cudaEvent_t *e)
{
    return cudaEventCreateWithFlags(e, cudaEventBlockingSync | cudaEventDisableTiming);
}

/* Page-locked memory for nvJPEG (its allocator) and the coders' bitstreams,
 * pinned as the engines' pools are (engine/pinned.h): cudaHostAlloc alone
 * pins slowly, and nvJPEG grows its buffers as larger files come. The
 * first page holds the block's size and how it was pinned: nvJPEG's free
 * gives only the pointer. */
enum { PIN_HEAD = 4096 };
typedef struct pin_head { size_t total; int registered; } pin_head;

static int pinned_malloc(void **out, size_t size, unsigned flags)
{
    (void)flags;
    pin_head h = { (size + PIN_HEAD + 4095) / 4096 * 4096, 0 };
    unsigned char *base = ts_pinned_alloc(h.total, &h.registered);
    if (!base) return (int)cudaErrorMemoryAllocation;
    memcpy(base, &h, sizeof h);
    *out = base + PIN_HEAD;
    return 0;
}

static int pinned_free(void *p)
{
    if (!p) return 0;
    unsigned char *base = (unsigned char *)p - PIN_HEAD;
    pin_head h;
    memcpy(&h, base, sizeof h);
    /* as cudaFreeHost does: nvJPEG may free a buffer that a copy still reads */
    cudaDeviceSynchronize();
    ts_pinned_free(base, h.total, h.registered);
    return 0;
}

static nvjpegPinnedAllocator_t pinned_allocator = { pinned_malloc, pinned_free };

/* Decode n files in one call; on failure (a damaged file spoils the batch)
 * each alone, so that only the bad ones go back to the CPU decoder. */
static void decode_batch(ts_gpu_codec *c, hw_request **r, int n)
{
    const unsigned char *data[HW_BATCH_MAX];
    size_t len[HW_BATCH_MAX];
    nvjpegImage_t out[HW_BATCH_MAX];
    for (int i = 0; i < n; i++) {
        data[i] = r[i]->data;
        len[i] = r[i]->len;
        out[i] = r[i]->out;
    }
    nvjpegStatus_t s = NVJPEG_STATUS_SUCCESS;
    if (c->state_status != NVJPEG_STATUS_SUCCESS) s = c->state_status;
    else if (c->batch_size != n) {
        s = nvjpegDecodeBatchedInitialize(c->h, c->batch_state, n, 1, NVJPEG_OUTPUT_RGBI);
        c->batch_size = s == NVJPEG_STATUS_SUCCESS ? n : 0;
    }
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegDecodeBatched(c->h, c->batch_state, data, len, out, c->batch_stream);
    if (s == NVJPEG_STATUS_SUCCESS && wait_for(c->batch_stream, c->batch_done) != cudaSuccess) {
        cudaGetLastError();
        s = NVJPEG_STATUS_EXECUTION_FAILED;
    }
    if (s == NVJPEG_STATUS_SUCCESS || n == 1) {
        for (int i = 0; i < n; i++) r[i]->status = s;
        return;
    }
    for (int i = 0; i < n; i++) decode_batch(c, &r[i], 1);
}

static void *batcher_main(void *p)
{
    ts_gpu_codec *c = p;
    cudaSetDevice(c->device);
    /* Made here, not in ts_gpu_codec_create, where its slow making would
     * hold up the folder job's set-up: meanwhile the workers already decode
     * progressive files, encode and queue files for it
     * (docs/measurements/pipeline.md). Failing, it fails every file queued
     * here, which the CPU decoder then takes (none comes, see
     * decode_on_device). */
    c->state_status = nvjpegJpegStateCreate(c->h, &c->batch_state);
    pthread_mutex_lock(&c->lock);
    c->state_made = 1;
    if (c->state_status == NVJPEG_STATUS_SUCCESS) __atomic_store_n(&c->batch_ready, 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&c->finished);
    for (;;) {
        while (!c->head && !c->stopping) pthread_cond_wait(&c->wake, &c->lock);
        if (!c->head) break;
        hw_request *r[HW_BATCH_MAX];
        int n = 0;
        while (c->head && n < HW_BATCH_MAX) {
            r[n++] = c->head;
            c->head = c->head->next;
        }
        if (!c->head) c->tail = NULL;
        pthread_mutex_unlock(&c->lock);
        decode_batch(c, r, n);
        pthread_mutex_lock(&c->lock);
        for (int i = 0; i < n; i++) r[i]->done = 1;
        pthread_cond_broadcast(&c->finished);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

/* Queue one file for the batcher and wait until it is decoded (the pixels
 * are on the device when this returns, *s says how it went). 0 when the
 * batcher has stopped (ts_gpu_codec_end_decoding): nothing was queued. */
static int hw_decode(ts_gpu_codec *c, const unsigned char *data, size_t len, const nvjpegImage_t *out,
                     nvjpegStatus_t *s)
{
    hw_request r = {data, len, *out, NVJPEG_STATUS_SUCCESS, 0, NULL};
    pthread_mutex_lock(&c->lock);
    if (c->stopping) {
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    if (c->tail) c->tail->next = &r;
    else c->head = &r;
    c->tail = &r;
    pthread_cond_signal(&c->wake);
    while (!r.done) pthread_cond_wait(&c->finished, &c->lock);
    pthread_mutex_unlock(&c->lock);
    *s = r.status;
    return 1;
}

/* The batcher decodes what is queued already, then ends; the files that
 * come later go to the GPU_HYBRID decoder. */
static void stop_batcher(ts_gpu_codec *c)
{
    if (!c->batcher_running) return;
    pthread_mutex_lock(&c->lock);
    c->stopping = 1;
    __atomic_store_n(&c->batch_ready, 0, __ATOMIC_RELEASE);
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->batcher, NULL);
    c->batcher_running = 0;
}

static ts_status start_batcher(ts_gpu_codec *c, ts_err *err)
{
    cudaError_t ce = cudaStreamCreateWithFlags(&c->batch_stream, cudaStreamNonBlocking);
    if (ce == cudaSuccess) ce = make_wait_event(&c->batch_done);
    if (ce != cudaSuccess) return cu_fail(ce, "nvJPEG", "cudaStreamCreate", err);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    pthread_cond_init(&c->finished, NULL);
    c->locks_made = 1;
    if (pthread_create(&c->batcher, NULL, batcher_main, c) != 0)
        return ts_err_set(err, TS_E_NOMEM, "nvJPEG: cannot start the decode thread");
    c->batcher_running = 1;
    return TS_OK;
}

ts_status ts_gpu_codec_create(int device, ts_gpu_codec **out, int *hardware, ts_err *err)
{
    *out = NULL;
    *hardware = 0;
    cudaError_t ce = cudaSetDevice(device);
    if (ce != cudaSuccess) return cu_fail(ce, "nvJPEG", "selecting the CUDA device", err);
    ts_gpu_codec *c = calloc(1, sizeof *c);
    if (!c) return ts_err_set(err, TS_E_NOMEM, "nvJPEG: out of memory");
    c->device = device;
    /* Strict: damaged data is refused (the CPU decoder then names it), as
     * libjpeg's warnings are refused; a library that does not know the
     * flag gets the handle without it. Without hardware engines the
     * hardware backend fails, and the default (hybrid) one serves --codec gpu. */
    static const struct { nvjpegBackend_t backend; unsigned flags; } tries[] = {
        {NVJPEG_BACKEND_HARDWARE, NVJPEG_FLAGS_BITSTREAM_STRICT}, {NVJPEG_BACKEND_HARDWARE, 0},
        {NVJPEG_BACKEND_DEFAULT, NVJPEG_FLAGS_BITSTREAM_STRICT}, {NVJPEG_BACKEND_DEFAULT, 0}};
    nvjpegStatus_t s = NVJPEG_STATUS_NOT_INITIALIZED;
    for (int i = 0; i < 4; i++) {
        s = nvjpegCreateEx(tries[i].backend, NULL, &pinned_allocator, tries[i].flags, &c->h);
        if (s == NVJPEG_STATUS_SUCCESS) {
            c->hardware = tries[i].backend == NVJPEG_BACKEND_HARDWARE;
            break;
        }
    }
    if (s != NVJPEG_STATUS_SUCCESS) {
        free(c);
        return nv_fail(s, "nvJPEG", "nvjpegCreateEx", err);
    }
    if (c->hardware) {
        ts_status st = start_batcher(c, err);
        if (st != TS_OK) {
            ts_gpu_codec_destroy(c);
            return st;
        }
    }
    *hardware = c->hardware;
    *out = c;
    return TS_OK;
}

void ts_gpu_codec_destroy(ts_gpu_codec *c)
{
    if (!c) return;
    cudaSetDevice(c->device);
    stop_batcher(c);
    if (c->locks_made) {
        pthread_mutex_destroy(&c->lock);
        pthread_cond_destroy(&c->wake);
        pthread_cond_destroy(&c->finished);
    }
    if (c->batch_state) nvjpegJpegStateDestroy(c->batch_state);
    if (c->batch_stream) cudaStreamDestroy(c->batch_stream);
    if (c->batch_done) cudaEventDestroy(c->batch_done);
    nvjpegDestroy(c->h);
    free(c);
}

void ts_gpu_codec_end_decoding(ts_gpu_codec *c)
{
    if (!c) return;
    cudaSetDevice(c->device);
    stop_batcher(c);
    if (c->batch_state) nvjpegJpegStateDestroy(c->batch_state);
    c->batch_state = NULL;
}

int ts_gpu_codec_wait_hardware(ts_gpu_codec *c)
{
    if (!c || !c->batcher_running) return 0;
    pthread_mutex_lock(&c->lock);
    while (!c->state_made) pthread_cond_wait(&c->finished, &c->lock);
    pthread_mutex_unlock(&c->lock);
    return __atomic_load_n(&c->batch_ready, __ATOMIC_ACQUIRE);
}

static void hybrid_destroy(hybrid_decoder *d)
{
    if (d->params) nvjpegDecodeParamsDestroy(d->params);
    if (d->state) nvjpegJpegStateDestroy(d->state);
    if (d->pinned) nvjpegBufferPinnedDestroy(d->pinned);
    if (d->device) nvjpegBufferDeviceDestroy(d->device);
    if (d->dec) nvjpegDecoderDestroy(d->dec);
    memset(d, 0, sizeof *d);
}

void ts_gpu_coder_destroy(ts_gpu_coder *k)
{
    if (!k) return;
    cudaSetDevice(k->c->device);
    if (k->stream) cudaStreamSynchronize(k->stream);
    if (k->params) nvjpegEncoderParamsDestroy(k->params);
    if (k->enc) nvjpegEncoderStateDestroy(k->enc);
    if (k->parsed) nvjpegJpegStreamDestroy(k->parsed);
    hybrid_destroy(&k->hyb);
    cudaFree(k->dev);
    pinned_free(k->bits);
    if (k->stream) cudaStreamDestroy(k->stream);
    if (k->done) cudaEventDestroy(k->done);
    free(k);
}

ts_status ts_gpu_coder_create(ts_gpu_codec *c, ts_gpu_coder **out, ts_err *err)
{
    *out = NULL;
    cudaError_t ce = cudaSetDevice(c->device);
    if (ce != cudaSuccess) return cu_fail(ce, "nvJPEG", "selecting the CUDA device", err);
    ts_gpu_coder *k = calloc(1, sizeof *k);
    if (!k) return ts_err_set(err, TS_E_NOMEM, "nvJPEG: out of memory");
    k->c = c;
    ts_status st = TS_OK;
    nvjpegStatus_t s = NVJPEG_STATUS_SUCCESS;
    ce = cudaStreamCreateWithFlags(&k->stream, cudaStreamNonBlocking);
    if (ce == cudaSuccess) ce = make_wait_event(&k->done);
    if (ce != cudaSuccess) st = cu_fail(ce, "nvJPEG", "cudaStreamCreate", err);
    /* No hardware decode state here: the batcher's does that decoding, and
     * hardware states are slow to make, slower still when the workers make
     * theirs at once. The GPU_HYBRID decoder, cheap to make, is made when a
     * file first needs it (docs/measurements/pipeline.md). */
    if (st == TS_OK && (s = nvjpegJpegStreamCreate(c->h, &k->parsed)) != NVJPEG_STATUS_SUCCESS)
        st = nv_fail(s, "nvJPEG", "nvjpegJpegStreamCreate", err);
    if (st == TS_OK && (s = nvjpegEncoderStateCreate(c->h, &k->enc, k->stream)) != NVJPEG_STATUS_SUCCESS)
        st = nv_fail(s, "nvJPEG", "nvjpegEncoderStateCreate", err);
    if (st == TS_OK && (s = nvjpegEncoderParamsCreate(c->h, &k->params, k->stream)) != NVJPEG_STATUS_SUCCESS)
        st = nv_fail(s, "nvJPEG", "nvjpegEncoderParamsCreate", err);
    if (st == TS_OK && (s = nvjpegEncoderParamsSetSamplingFactors(k->params, NVJPEG_CSS_420, k->stream)) !=
                           NVJPEG_STATUS_SUCCESS)
        st = nv_fail(s, "nvJPEG", "nvjpegEncoderParamsSetSamplingFactors", err);
    if (st != TS_OK) {
        ts_gpu_coder_destroy(k);
        return st;
    }
    *out = k;
    return TS_OK;
}

/* Grow the coder's device or pinned buffer (after its stream is idle). */
static ts_status reserve(ts_gpu_coder *k, int pinned, size_t need, const char *path, ts_err *err)
{
    unsigned char **buf = pinned ? &k->bits : &k->dev;
    size_t *cap = pinned ? &k->bits_cap : &k->dev_cap;
    if (need <= *cap) return TS_OK;
    /* Grow rarely: every cudaFreeHost and cudaFree waits for the whole
     * device. Bitstreams start at 16 MB, pixels at 64 MB, then double. */
    size_t c = *cap ? *cap * 2 : pinned ? (size_t)16 << 20 : (size_t)64 << 20;
    if (c < need + need / 4) c = need + need / 4;
    cudaError_t ce = cudaStreamSynchronize(k->stream);
    if (ce == cudaSuccess) {
        if (pinned) pinned_free(*buf);
        else cudaFree(*buf);
        *buf = NULL;
        *cap = 0;
        ce = pinned ? (cudaError_t)pinned_malloc((void **)buf, c, 0) : cudaMalloc((void **)buf, c);
    }
    if (ce != cudaSuccess) return cu_fail(ce, path, pinned ? "pinned buffer for nvJPEG" : "device buffer for nvJPEG", err);
    *cap = c;
    return TS_OK;
}

/* ---------------------------------------------------------------- decode */

/* The file's bytes into the pinned buffer; *len set. */
static ts_status read_all(ts_gpu_coder *k, FILE *f, const char *path, uint64_t size, size_t *len, ts_err *err)
{
    if (size == 0 || size > ((uint64_t)1 << 31)) return ts_err_set(err, TS_E_FORMAT, "%s: size unknown", path);
    ts_status st = reserve(k, 1, (size_t)size, path, err);
    if (st != TS_OK) return st;
    rewind(f);
    *len = fread(k->bits, 1, (size_t)size, f);
    if (*len != (size_t)size) return ts_err_set(err, TS_E_IO, "%s: read error: %s", path, strerror(errno));
    return TS_OK;
}

/* The coder's GPU_HYBRID decoder, made on first use. */
static nvjpegStatus_t hybrid_ready(ts_gpu_coder *k)
{
    hybrid_decoder *d = &k->hyb;
    if (d->made) return NVJPEG_STATUS_SUCCESS;
    if (d->failed) return NVJPEG_STATUS_NOT_INITIALIZED;
    nvjpegHandle_t h = k->c->h;
    nvjpegStatus_t s = nvjpegDecoderCreate(h, NVJPEG_BACKEND_GPU_HYBRID, &d->dec);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegDecoderStateCreate(h, d->dec, &d->state);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegBufferPinnedCreate(h, &pinned_allocator, &d->pinned);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegBufferDeviceCreate(h, NULL, &d->device);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegStateAttachPinnedBuffer(d->state, d->pinned);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegStateAttachDeviceBuffer(d->state, d->device);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegDecodeParamsCreate(h, &d->params);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegDecodeParamsSetOutputFormat(d->params, NVJPEG_OUTPUT_RGBI);
    if (s != NVJPEG_STATUS_SUCCESS) {
        hybrid_destroy(d);
        d->failed = 1;   /* this worker's files go to libjpeg-turbo */
        return s;
    }
    d->made = 1;
    return s;
}

/* Decode data with the GPU_HYBRID decoder, queued on k->stream on return
 * (the caller waits for it there).
 * On a progressive file the host part is short and the GPU part long, and
 * the GPU parts of several threads overlap only so far. Every worker uses
 * it all the same: sending the files beyond 4 or 8 such decodes at once to
 * libjpeg-turbo was tried and made the folder job no faster
 * (docs/measurements/pipeline.md). */
static nvjpegStatus_t hybrid_decode(ts_gpu_coder *k, const unsigned char *data, size_t len, nvjpegImage_t *out)
{
    ts_gpu_codec *c = k->c;
    hybrid_decoder *d = &k->hyb;
    nvjpegStatus_t s = hybrid_ready(k);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegJpegStreamParse(c->h, data, len, 0, 0, k->parsed);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegDecodeJpegHost(c->h, d->dec, d->state, d->params, k->parsed);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegDecodeJpegTransferToDevice(c->h, d->dec, d->state, k->parsed, k->stream);
    if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegDecodeJpegDevice(c->h, d->dec, d->state, out, k->stream);
    return s;
}

/* Decode the bytes in k->bits as interleaved RGB of w x h: into dst (rows
 * pitch bytes apart, on the device) or, when dst is NULL, into k->dev. The
 * hardware decoder takes what nvjpegDecodeBatchedSupported accepts
 * (baseline, one scan); the rest goes to the GPU_HYBRID decoder. */
static ts_status decode_on_device(ts_gpu_coder *k, const char *path, size_t len, int w, int h, unsigned char *dst,
                                  size_t pitch, int *cpu, ts_err *err)
{
    ts_gpu_codec *c = k->c;
    nvjpegStatus_t s;
    const unsigned char *data = k->bits;
    int batched = 0;
    if (!ts_jpeg_ends_with_eoi(data, len)) {
        *cpu = 1;
        return ts_err_set(err, TS_E_FORMAT, "%s: does not end with EOI: left to libjpeg-turbo", path);
    }
    /* Until the batcher has its state (made on its own thread, some time
     * after the handle), the GPU_HYBRID decoder takes baseline files too,
     * instead of the workers waiting for it. */
    if (c->hardware && __atomic_load_n(&c->batch_ready, __ATOMIC_ACQUIRE)) {
        int supported = -1;
        s = nvjpegJpegStreamParseHeader(c->h, data, len, k->parsed);
        if (s == NVJPEG_STATUS_SUCCESS) s = nvjpegDecodeBatchedSupported(c->h, k->parsed, &supported);
        batched = s == NVJPEG_STATUS_SUCCESS && supported == 0;
    }
    if (!dst) {
        ts_status st = reserve(k, 0, (size_t)w * 3 * (size_t)h, path, err);
        if (st != TS_OK) return st;
        dst = k->dev;
        pitch = (size_t)w * 3;
    }
    nvjpegImage_t out;
    memset(&out, 0, sizeof out);
    out.channel[0] = dst;
    out.pitch[0] = pitch;
    if (!batched || !hw_decode(c, data, len, &out, &s)) {   /* hw_decode: complete on return */
        batched = 0;
        s = hybrid_decode(k, data, len, &out);
    }
    if (s != NVJPEG_STATUS_SUCCESS) {
        *cpu = 1;   /* refused or damaged: the CPU decoder decides and names it */
        return nv_fail(s, path, batched ? "nvjpegDecodeBatched" : "GPU_HYBRID decode", err);
    }
    return TS_OK;
}

static void take_metadata(ts_image *img, ts_image *meta);

/* Pixels of k->dev into img (allocated from a), meta's metadata moved in. */
static ts_status download(ts_gpu_coder *k, const char *path, ts_image *meta, const ts_load_limits *lim,
                          const ts_allocator *a, int w, int h, ts_image *img, ts_err *err)
{
    ts_err why = {0};
    ts_status st = ts_image_alloc(img, w, h, 3, TS_U8, lim->max_pixels, a, &why);
    if (st != TS_OK) return ts_err_set(err, st, "%s: %s", path, why.msg);
    cudaError_t ce = cudaMemcpy2DAsync(img->data, img->stride, k->dev, (size_t)w * 3, (size_t)w * 3, (size_t)h,
                                       cudaMemcpyDeviceToHost, k->stream);
    if (ce == cudaSuccess) ce = wait_for(k->stream, k->done);
    if (ce != cudaSuccess) {
        ts_image_free(img);
        return cu_fail(ce, path, "nvJPEG decode (or copying its pixels back)", err);
    }
    take_metadata(img, meta);
    return TS_OK;
}

/* Decode straight into img, allocated on the device from a. */
static ts_status decode_into_device_image(ts_gpu_coder *k, const char *path, ts_image *meta, const ts_load_limits *lim,
                                          const ts_allocator *a, size_t len, int w, int h, ts_image *img, int *cpu,
                                          ts_err *err)
{
    ts_err why = {0};
    ts_status st = ts_image_alloc(img, w, h, 3, TS_U8, lim->max_pixels, a, &why);
    if (st != TS_OK) {
        *cpu = 1;   /* the device is full: the CPU decoder into host memory still can */
        return ts_err_set(err, st, "%s: %s", path, why.msg);
    }
    st = decode_on_device(k, path, len, w, h, img->data, img->stride, cpu, err);
    cudaError_t ce = wait_for(k->stream, k->done);
    if (st == TS_OK && ce != cudaSuccess) st = cu_fail(ce, path, "nvJPEG decode", err);
    if (st != TS_OK) {
        ts_image_free(img);
        return st;
    }
    take_metadata(img, meta);
    return TS_OK;
}

/* meta's orientation and metadata moved into img. */
static void take_metadata(ts_image *img, ts_image *meta)
{
    img->orientation = meta->orientation;
    img->icc = meta->icc; img->icc_len = meta->icc_len;
    img->exif = meta->exif; img->exif_len = meta->exif_len;
    img->xmp = meta->xmp; img->xmp_len = meta->xmp_len;
    meta->icc = meta->exif = meta->xmp = NULL;
}

ts_status ts_gpu_decode_file(ts_gpu_coder *k, const char *path, const ts_load_opts *opts,
                             const ts_allocator *device_alloc, ts_image *img, int *cpu, ts_err *err)
{
    FILE *f = NULL;
    ts_format fmt;
    ts_load_limits lim;
    ts_image meta;
    ts_image_info info;
    size_t len = 0;
    memset(img, 0, sizeof *img);
    *cpu = 0;
    cudaError_t ce = cudaSetDevice(k->c->device);
    if (ce != cudaSuccess) { *cpu = 1; return cu_fail(ce, path, "selecting the CUDA device", err); }
    ts_status st = ts_open_for_load(path, opts, &f, &fmt, &lim, err);
    if (st != TS_OK) return st;
    if (fmt != TS_FMT_JPEG) {
        fclose(f);
        *cpu = 1;
        return ts_err_set(err, TS_E_FORMAT, "%s: not a JPEG", path);
    }
    st = ts_jpeg_load_header(f, path, &lim, &meta, &info, err);
    if (st != TS_OK) {
        fclose(f);
        *cpu = st != TS_E_LIMIT;   /* a header libjpeg reads badly: let its full decode name the cause */
        return st;
    }
    if (info.c != 3 || info.bit_depth != 8 || strcmp(info.color, "ycbcr")) {
        *cpu = 1;   /* grey, CMYK/YCCK, RGB-coded, 12-bit: libjpeg-turbo's */
        st = ts_err_set(err, TS_E_FORMAT, "%s: %s JPEG is decoded on the CPU", path, info.color);
    }
    if (st == TS_OK) st = read_all(k, f, path, lim.file_bytes, &len, err);
    fclose(f);
    /* More scans than the work budget's passes: libjpeg-turbo's progress
     * monitor counts the work of each scan and stops a bomb in time. */
    if (st == TS_OK && info.progressive && ts_jpeg_count_scans(k->bits, len) > TS_WORK_PASSES) {
        *cpu = 1;
        st = ts_err_set(err, TS_E_FORMAT, "%s: more than %d scans: decoded on the CPU", path, TS_WORK_PASSES);
    }
    if (st == TS_OK && device_alloc)
        st = decode_into_device_image(k, path, &meta, &lim, device_alloc, len, info.w, info.h, img, cpu, err);
    else if (st == TS_OK) {
        st = decode_on_device(k, path, len, info.w, info.h, NULL, 0, cpu, err);
        if (st == TS_OK) st = download(k, path, &meta, &lim, opts ? opts->allocator : NULL, info.w, info.h, img, err);
    }
    if (st != TS_OK && !*cpu && st == TS_E_DEVICE) *cpu = 1;   /* the CPU decoder still can */
    ts_image_free(&meta);
    return st;
}

/* ---------------------------------------------------------------- encode */

typedef struct bits_ctx {
    const ts_image *img;
    const unsigned char *bits;
    size_t len;
} bits_ctx;

static ts_status write_bits(FILE *f, const char *path, void *ctx, ts_err *err)
{
    bits_ctx *b = ctx;
    return ts_jpeg_write_bitstream(f, path, b->img, b->bits, b->len, err);
}

/* Encode img (in device memory when on_device, else host memory copied
 * up first); the bitstream lands in k->bits, *len set. */
static ts_status encode_on_device(ts_gpu_coder *k, const char *path, const ts_image *img, int on_device, int quality,
                                  size_t *len, ts_err *err)
{
    ts_gpu_codec *c = k->c;
    nvjpegStatus_t s = NVJPEG_STATUS_SUCCESS;
    size_t row = (size_t)img->w * 3, pitch = img->stride;
    unsigned char *pixels = img->data;
    ts_status st = TS_OK;
    cudaError_t ce = cudaSuccess;
    if (!on_device) {
        if ((st = reserve(k, 0, row * (size_t)img->h, path, err)) != TS_OK) return st;
        ce = cudaMemcpy2DAsync(k->dev, row, img->data, img->stride, row, (size_t)img->h, cudaMemcpyHostToDevice,
                               k->stream);
        if (ce != cudaSuccess) return cu_fail(ce, path, "copying pixels to the GPU encoder", err);
        pixels = k->dev;
        pitch = row;
    }
    if (quality != k->quality) {
        if ((s = nvjpegEncoderParamsSetQuality(k->params, quality, k->stream)) != NVJPEG_STATUS_SUCCESS)
            return nv_fail(s, path, "nvjpegEncoderParamsSetQuality", err);
        k->quality = quality;
    }
    nvjpegImage_t src;
    memset(&src, 0, sizeof src);
    src.channel[0] = pixels;
    src.pitch[0] = pitch;
    s = nvjpegEncodeImage(c->h, k->enc, k->params, &src, NVJPEG_INPUT_RGBI, img->w, img->h, k->stream);
    if (s != NVJPEG_STATUS_SUCCESS) return nv_fail(s, path, "nvjpegEncodeImage", err);
    size_t n = 0;
    s = nvjpegEncodeRetrieveBitstream(c->h, k->enc, NULL, &n, k->stream);
    if (s != NVJPEG_STATUS_SUCCESS) return nv_fail(s, path, "nvjpegEncodeRetrieveBitstream (size)", err);
    if ((ce = wait_for(k->stream, k->done)) != cudaSuccess) return cu_fail(ce, path, "nvJPEG encode", err);
    if ((st = reserve(k, 1, n, path, err)) != TS_OK) return st;
    s = nvjpegEncodeRetrieveBitstream(c->h, k->enc, k->bits, &n, k->stream);
    if (s != NVJPEG_STATUS_SUCCESS) return nv_fail(s, path, "nvjpegEncodeRetrieveBitstream", err);
    if ((ce = wait_for(k->stream, k->done)) != cudaSuccess) return cu_fail(ce, path, "nvJPEG encode", err);
    *len = n;
    return TS_OK;
}

ts_status ts_gpu_save_jpeg(ts_gpu_coder *k, const char *path, const ts_image *img, int on_device, int quality,
                           int *cpu, ts_err *err)
{
    *cpu = 0;
    if (!img || !img->data || img->type != TS_U8 || img->c != 3 || img->w < 1 || img->h < 1) {
        *cpu = 1;
        return ts_err_set(err, TS_E_FORMAT, "%s: only 8-bit RGB is encoded on the GPU", path);
    }
    ts_err range = { 0 };
    if (ts_option_check(TS_OPT_QUALITY, quality, &range) != TS_OK) {   /* the CPU writer names it too */
        *cpu = 1;
        return ts_err_set(err, TS_E_ARG, "%s: %s", path, range.msg);
    }
    cudaError_t ce = cudaSetDevice(k->c->device);
    if (ce != cudaSuccess) { *cpu = 1; return cu_fail(ce, path, "selecting the CUDA device", err); }
    size_t len = 0;
    ts_status st = encode_on_device(k, path, img, on_device, quality, &len, err);
    if (st != TS_OK) {
        *cpu = 1;   /* nothing written yet: the CPU writer can still do it */
        return st;
    }
    bits_ctx b = {img, k->bits, len};
    return ts_write_atomic(path, write_bits, &b, err);
}

#endif

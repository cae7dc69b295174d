/* gpu_start.h - the GPU side of a run made ready: the devices (--gpus), an
 * engine on each, warmed up, the bus and copy rates measured, and a codec
 * session with nvJPEG. Either on the caller's thread (--device gpu) or on a
 * thread of its own while the CPU backend works (--device auto), in which
 * case a run that ends first leaves it behind without waiting. Private to
 * the batch room. */
#ifndef TS_GPU_START_H
#define TS_GPU_START_H

#include "codec_session.h"
#include "engine_internal.h"
#include "tilestream.h"

typedef struct ts_gpu_side {
    ts_engine_set set;        /* no engines: no GPU (note says why) */
    ts_codec_session *codecs;
    ts_peak_rates peak;
    char device[160], note[256];
    /* the phases' [start, end] on the ts_now() clock, 0 where not reached */
    double probe[2], engines[2], warmup[2], rates[2], nvjpeg[2], ready;
} ts_gpu_side;

typedef struct ts_gpu_start_opts {
    ts_device device;         /* auto: no GPU is not an error, only a note */
    ts_codec codec;
    const char *gpus;         /* --gpus (copied) */
    const char *chain_text;   /* the run's chain, to warm the kernels up (copied) */
    int streams, tile_w, tile_h;
    ts_path path;
    uint64_t pinned_limit;
    int wants_jpeg;           /* some file of the run is a JPEG: nvJPEG may take part */
    int rates;                /* measure the bus and copy rates (ts_engine_peak_rates) */
} ts_gpu_start_opts;

typedef struct ts_gpu_start ts_gpu_start;

/* Start the GPU side: on a thread of its own when on_thread (soon(ctx) is
 * called from it once the engines are up and only nvJPEG's set-up is left,
 * ready(ctx) once done, unless left behind first; never with a lock of the
 * start held by the caller), else now. NULL when out of memory. */
ts_gpu_start *ts_gpu_start_begin(const ts_gpu_start_opts *o, int on_thread, void (*soon)(void *ctx),
                                 void (*ready)(void *ctx), void *ctx);
/* The side once done (never waits): NULL while starting. *st is the
 * start's outcome: TS_OK with no engines when auto found no GPU. */
ts_gpu_side *ts_gpu_start_side(ts_gpu_start *g, ts_status *st, ts_err *err);
/* The run is done with g. A finished side is released now, or on a thread
 * of its own when in_background; a start still under way is left to
 * release everything itself when it ends. Never waits for the start. */
void ts_gpu_start_release(ts_gpu_start *g, int in_background);

#endif

/* batch_internal.h - the state of a `run` shared by batch.c (jobs,
 * admission under the memory budget, workers, the run) and gpu_feed.c
 * (the engines and their feeders). Private to the batch room. */
#ifndef TS_BATCH_INTERNAL_H
#define TS_BATCH_INTERNAL_H

#include "codec_session.h"
#include "engine_internal.h"
#include "gpu_start.h"
#include "pool.h"
#include "tilestream.h"

#include <pthread.h>

/* A job goes PENDING -> PROBING -> PROBED (its size known: what it will
 * cost) -> DECODING (admitted: its bytes reserved, its backend chosen) ->
 * DECODED -> ON_GPU -> PROCESSED -> ENCODING -> DONE; on the CPU backend
 * DECODING runs straight to DONE. */
enum { ST_PENDING, ST_PROBING, ST_PROBED, ST_DECODING, ST_DECODED, ST_ON_GPU, ST_PROCESSED, ST_ENCODING, ST_DONE };

/* Which backends a run has: the CPU alone, the GPU alone, or the CPU from
 * the start and the GPU once its start (gpu_start.c) is done (--device
 * auto): images admitted from then on go to the GPU, the CPU keeps what
 * it has. With the GPU alone and the CPU codecs (early_decode), the
 * workers decode the first images while the GPU starts. */
enum { RUN_CPU, RUN_GPU, RUN_CPU_THEN_GPU };

typedef struct job {
    ts_image in, out;
    int state;
    ts_format out_format;
    uint64_t cost;            /* bytes reserved against the budget while admitted, on the GPU */
    uint64_t cpu_extra;       /* and on the CPU beside: the ops' tile buffers */
    int reserved;
    int on_gpu;               /* its backend, chosen at admission */
    int scale;                /* decode at 1/scale (shrink on load); 1 = whole */
    int orientation;          /* the EXIF orientation its chain applies (1 = none) */
    ts_chain *chain;          /* its chain (orientation, shrink on load), or NULL: the run's */
    int out_on_device;        /* out stays on the GPU for nvJPEG to encode */
    int cpu_decode;           /* not for nvJPEG (not JPEG, not 3 channels, 12-bit): libjpeg-turbo's */
    int early;                /* admitted to the GPU before it was there: decoded into pageable
                                 memory, then moved into pinned memory once it is */
    int backlog;              /* an early image, pinned, waiting in `decoded` for an engine */
} job;

/* A FIFO of job indices; each index enters a queue at most once. */
typedef struct queue {
    int *at;
    int head, tail;
} queue;

static inline void q_push(queue *q, int i) { q->at[q->tail++] = i; }
static inline int q_empty(const queue *q) { return q->head == q->tail; }
static inline int q_pop(queue *q) { return q->at[q->head++]; }

/* A GPU feeder's engine and how many images it keeps in flight. */
typedef struct engine_slot {
    struct batch *b;
    ts_engine *e;
    int index, depth;
} engine_slot;

typedef struct batch {
    const ts_batch_opts *o;
    ts_batch_result *r;
    job *jobs;
    ts_chain *chain;          /* the run's chain, parsed; each image's is made from it (job.chain) */
    int mode;                 /* RUN_CPU, RUN_GPU, RUN_CPU_THEN_GPU */
    ts_gpu_start *gpu_start;  /* the GPU side being made, or made */
    int gpu_deferred;         /* --device auto: not started until the CPU's pace says it is worth it */
    double gpu_projected;     /* the most CPU time left it projected (s) */
    uint64_t work_bytes;      /* input file bytes of the images to process (gpu_deferred) */
    uint64_t done_bytes;      /* of those, finished ones' */
    uint64_t cpu_bytes;       /* the CPU's finished images: their bytes, */
    double cpu_seconds;       /* and decode + ops + encode, each on one worker */
    int gpu_arrived;          /* its start is done: the run may install it */
    double gpu_soon;          /* when its engines were up, nvJPEG's set-up left (ts_now clock; 0: not, or over) */
    ts_gpu_side *gpu;         /* installed, with engines: admissions go to the GPU */
    ts_codec_session *gpu_codecs;  /* gpu->codecs once installed (atomic) */
    engine_slot engines[TS_MAX_ENGINES];
    pthread_t feeders[TS_MAX_ENGINES];
    int n_feeders;
    int feeders_running;      /* feeders not yet ended: an image may go to the GPU only while one is */
    ts_pool *pool;            /* CPU ops: the tiles of every image in flight share these threads */
    ts_allocator cpu_alloc;   /* the CPU's decodes: the pool's buffers (none: malloc) */
    ts_allocator gpu_alloc;   /* the GPU's: pinned when a pool has room, else pageable */
    ts_allocator early_alloc; /* early images': pinned in place once the GPU is there (none: malloc) */
    ts_codec_session *cpu_codecs;  /* libjpeg-turbo and libpng for the CPU's images */
    int wants_jpeg;           /* some input or output is a JPEG: nvJPEG may take part */
    int nworkers;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int next_probe;           /* next job to probe */
    int next_admit;           /* next job to admit, in input order */
    int to_admit;             /* jobs neither admitted nor finished */
    int early_decode;         /* --device gpu, CPU codecs: decode while the GPU starts */
    int early_per_worker;     /* ... at most this many images a worker (TS_EARLY_PER_WORKER) */
    queue early;              /* decoded before the GPU was there, for a worker to move into pinned memory */
    int pinning;              /* a worker is moving one of them (one at a time: next_work) */
    int backlog;              /* early images pinned and waiting for an engine (room_to_decode) */
    queue decoded;            /* waiting for a GPU engine */
    int decode_ahead;         /* decoded images left waiting for an engine at most */
    queue processed;          /* waiting for an encoder */
    int gpu_left;             /* jobs admitted to the GPU, not yet handed to an engine nor finished */
    int decodes_left;         /* jobs not yet decoded (or failed to) */
    uint64_t budget, bytes_in_flight;
    int n_in_flight;
    int done;
    int fatal;                /* a device error: stop everything */
    ts_err fatal_err;
    double t_origin;          /* what the phases count from (ts_now clock) */
    double probe[2];          /* --device gpu|cpu: finding the devices, before the start (ts_now clock) */
    unsigned char background[3]; /* alpha goes onto this where the output format has none */
    int flattened;            /* images it did (atomic) */
} batch;

/* --device auto: from the GPU's engines being up until it is installed,
 * at most this long, the workers begin no CPU image (batch.c) */
#define TS_GPU_SOON_HOLD_S 0.5

/* batch.c */
void ts_batch_fail(batch *b, int i, ts_status st, const ts_err *e);   /* job i failed with e */
void ts_batch_finish(batch *b, int i);                                 /* job i is done (lock held) */
void ts_batch_not_processed(batch *b, int i);  /* job i ends unprocessed: a stop or a device error came first (lock held) */
void ts_batch_trace(batch *b, int lane, const char *stage, double t0, double t1, uint64_t bytes, int image);
size_t ts_batch_image_bytes(const ts_image *img);
const ts_chain *ts_batch_chain_for(batch *b, const job *j);            /* the chain job j runs */

/* stages.c (worker w, trace lane lane, no lock held) */
void ts_batch_probe(batch *b, int i);                   /* job i's cost in memory, chain and decoder */
int ts_batch_decode(batch *b, int i, int lane, int w);  /* 1: job i decoded, ready for its ops */
void ts_batch_cpu_ops(batch *b, int i, int lane);       /* job i's chain on the CPU */
void ts_batch_encode(batch *b, int i, int lane, int w); /* job i written (temp name, then renamed) */

/* gpu_feed.c */
ts_status ts_batch_gpu_start(batch *b, ts_err *err);    /* now, or on its own thread (auto, early_decode) */
void ts_batch_gpu_defer(batch *b);                      /* --device auto: start once it is worth it */
void ts_batch_gpu_coordinate(batch *b);                 /* started on its thread: install it once made, until the job is done */
void ts_batch_gpu_install(batch *b, ts_gpu_side *side, ts_status st, const ts_err *e);  /* lock held */
void ts_batch_gpu_after(batch *b);                                      /* --device auto, the job done */
void *ts_batch_gpu_feeder(void *engine_slot_p);
int ts_batch_gpu_take_decoded(batch *b, int i);         /* 1: CPU job i, decoded, goes to the GPU for its ops */
void ts_batch_gpu_pin(batch *b, int i, int lane);       /* job i's decoded pixels into pinned memory, where there is room */
ts_status ts_batch_engine_to_host(void *batch_p, ts_image *img, ts_err *err);

#endif

/* batch_internal.h - the state of a `run` shared by batch.c (jobs,
 * admission under the memory budget, workers, the run) and gpu_feed.c
 * (the engines and their feeders). Private to the batch room. */
#ifndef TS_BATCH_INTERNAL_H
#define TS_BATCH_INTERNAL_H

#include "codec_session.h"
#include "engine_internal.h"
#include "pool.h"
#include "tilestream.h"

#include <pthread.h>

/* A job goes PENDING -> PROBING -> PROBED (its size known: what it will
 * cost) -> DECODING (admitted: its bytes reserved) -> DECODED -> ON_GPU ->
 * PROCESSED -> ENCODING -> DONE; on the CPU DECODING runs straight to DONE. */
enum { ST_PENDING, ST_PROBING, ST_PROBED, ST_DECODING, ST_DECODED, ST_ON_GPU, ST_PROCESSED, ST_ENCODING, ST_DONE };

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
    ts_chain *chains[9];      /* [orientation]: the chain with that EXIF orientation applied */
    ts_engine_set set;        /* GPU runs: the engines */
    engine_slot engines[TS_MAX_ENGINES];
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
    ts_codec_session *codecs; /* nvJPEG where it takes a file, else the CPU codecs */
    unsigned char background[3]; /* alpha goes onto this where the output format has none */
    int flattened;            /* images it did (atomic) */
} batch;

/* batch.c */
void ts_batch_fail(batch *b, int i, ts_status st, const ts_err *e);   /* job i failed with e */
void ts_batch_finish(batch *b, int i);                                 /* job i is done (lock held) */
void ts_batch_trace(batch *b, int lane, const char *stage, double t0, double t1, uint64_t bytes, int image);
size_t ts_batch_image_bytes(const ts_image *img);
const ts_chain *ts_batch_chain_for(batch *b, const job *j);            /* the chain job j runs */

/* gpu_feed.c */
ts_status ts_batch_start_engines(batch *b, ts_err *err);
void *ts_batch_gpu_feeder(void *engine_slot_p);
ts_status ts_batch_engine_to_host(void *batch_p, ts_image *img, ts_err *err);

#endif

/* pool.h - (internal) the CPU thread pool that runs the tiles of images.
 *
 * One pool is shared by everything that runs ops on the CPU at the same
 * time (a batch's images and each image's tiles), so a batch of N images
 * on N cores does not start N x N threads. A caller hands the pool a group
 * of n tasks and runs tasks of its own group itself; a pool thread starts
 * a task only while fewer than `threads` threads are computing in all,
 * callers and threads busy with other work (ts_pool_busy) included
 * (callers that arrive while it runs one may exceed the limit for that
 * one task). So one image alone gets every core, and N
 * images in flight on N cores each keep to their caller's thread. */
#ifndef TS_POOL_H
#define TS_POOL_H

#include "tilestream.h"

/* Run task(ctx, i) for i = 0..n-1, on the calling thread and, when pool is
 * not NULL, on the pool's threads; returns when all n have finished. */
typedef void (*ts_task_fn)(void *ctx, int i);
void ts_pool_run(ts_pool *pool, int n, ts_task_fn task, void *ctx);

/* A thread that computes outside the pool (a batch worker decoding and
 * encoding) counts against the limit while busy (1) until it says it is
 * done (0), so that pool threads leave it its core; its own ts_pool_run
 * calls meanwhile do not count it twice. A NULL pool ignores this. */
void ts_pool_busy(ts_pool *pool, int busy);

/* How many threads may compute at once (1 for a NULL pool). */
int ts_pool_threads(const ts_pool *pool);

/* Pixels for the images and tiles the pool's threads work on, from its
 * cache of buffers (buffers.h): freed ones are reused, not faulted in
 * again. A NULL pool's (or one whose cache could not be made) is malloc's:
 * a zeroed allocator. keep: the idle bytes the cache may hold. */
ts_allocator ts_pool_allocator(ts_pool *pool);
void ts_pool_keep(ts_pool *pool, size_t keep_bytes);

#endif

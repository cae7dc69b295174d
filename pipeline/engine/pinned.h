/* pinned.h - page-locked host memory, the one way the pipeline pins it
 * (pipeline/engine/pinned_cuda.c; CUDA builds only): the engines' pools and
 * nvJPEG's buffers. Internal. */
#ifndef TS_PINNED_H
#define TS_PINNED_H

#include <stddef.h>

/* size bytes (a multiple of 4096) of portable page-locked memory, or NULL.
 * *registered says how it was pinned, for ts_pinned_free. */
void *ts_pinned_alloc(size_t size, int *registered);
void ts_pinned_free(void *base, size_t size, int registered);

/* A pool of pinned memory handed out in size classes, up to limit bytes
 * pinned (0 = no limit). The allocation functions take the pool as their
 * context (a ts_allocator's); any pool's free takes any pool's chunk. */
typedef struct ts_pinned_pool ts_pinned_pool;
ts_pinned_pool *ts_pinned_pool_create(size_t limit);
void ts_pinned_pool_destroy(ts_pinned_pool *p);
/* Pinned, or NULL when the pool is at its limit (or pinning fails). */
void *ts_pinned_pool_alloc_pinned(void *pool, size_t bytes);
/* Pinned when the pool has room, else pageable (malloc). */
void *ts_pinned_pool_alloc(void *pool, size_t bytes);
void ts_pinned_pool_free(void *pool, void *ptr);
size_t ts_pinned_pool_bytes(ts_pinned_pool *p);

/* Blocks for pixels that may be pinned in place later: each on pages of
 * its own (mmap), a header page before the pixels saying its size and
 * whether it is pinned; the free unpins it. ts_pinnable_pin pins one
 * (cudaHostRegister of pages the decoder has already touched), 1 when it is
 * pinned now, 0 when p is not such a block or pinning fails. */
void *ts_pinnable_alloc(void *ctx, size_t bytes);
void ts_pinnable_free(void *ctx, void *p);
int ts_pinnable_pin(void *p);

#endif

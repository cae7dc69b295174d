/* buffers.h - (internal) a cache of large host buffers for pixels.
 *
 * Fresh memory costs a page fault per 4 KB page the first time it is
 * written (the kernel zeroes each page), and unmapping it makes every
 * thread of the process flush its TLB. A batch that mapped and unmapped
 * each image's pixels paid both for every image: a third of the CPU time
 * of a codec-only folder run went to the kernel. Buffers freed through this
 * cache are kept, up to keep_bytes in all, and handed to the next request
 * they fit, already faulted in; new ones of 1 MB and more are mapped 2 MB
 * aligned and asked for transparent huge pages (512x fewer faults where
 * the kernel allows them), smaller ones in steps of 64 KB. Only requests
 * under 32 KB go to malloc: a tile's buffers (tens to hundreds of KB) went
 * there before, and on the main thread glibc's heap grew and shrank for
 * every tile, so each tile faulted its pages in again (docs/PERFORMANCE.md,
 * "the CPU backend").
 *
 * Thread-safe. Buffers may outlive ts_buffers_release: the cache goes away
 * when its owner has released it and the last buffer is back. */
#ifndef TS_BUFFERS_H
#define TS_BUFFERS_H

#include "tilestream.h"

typedef struct ts_buffers ts_buffers;

ts_buffers *ts_buffers_create(size_t keep_bytes);
void ts_buffers_release(ts_buffers *c);
/* Bytes of idle buffers kept at most from now on (evicting the oldest). */
void ts_buffers_keep(ts_buffers *c, size_t keep_bytes);
/* alloc and free for ts_image_alloc and friends; ctx is the cache. */
ts_allocator ts_buffers_allocator(ts_buffers *c);

/* Counters, for tests: fresh mappings made, and requests served from idle buffers. */
typedef struct ts_buffers_stats { long mapped, reused; size_t idle_bytes; } ts_buffers_stats;
ts_buffers_stats ts_buffers_stats_of(ts_buffers *c);

/* The default keep: 1/16 of physical memory, at most 1 GB. */
size_t ts_buffers_default_keep(void);

#endif

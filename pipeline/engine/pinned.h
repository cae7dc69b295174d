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

#endif

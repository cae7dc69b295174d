/* pinned_cuda.c - page-locked host memory: an mmap'd block, its pages
 * faulted in here, then cudaHostRegister'ed; cudaHostAlloc is the
 * fallback. Portable either way: an image decoded into it may go to any
 * device's engine.
 *
 * cudaHostAlloc pins slowly and synchronises the device, and faulting the
 * pages in before registering lets the threads that grow pools at once do
 * that work side by side, where cudaHostRegister alone does not spread
 * over threads (docs/measurements/pipeline.md). */
#include "pinned.h"

#include <cuda_runtime.h>
#include <sys/mman.h>

void *ts_pinned_alloc(size_t size, int *registered)
{
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base != MAP_FAILED) {
#ifdef MADV_HUGEPAGE
        madvise(base, size, MADV_HUGEPAGE);   /* fewer pages to fault in and pin */
#endif
        for (size_t off = 0; off < size; off += 4096) ((volatile unsigned char *)base)[off] = 0;
        if (cudaHostRegister(base, size, cudaHostRegisterPortable) == cudaSuccess) {
            *registered = 1;
            return base;
        }
        cudaGetLastError(); /* not sticky: clear it so later calls start clean */
        munmap(base, size);
    }
    *registered = 0;
    base = NULL;
    if (cudaHostAlloc(&base, size, cudaHostAllocPortable) != cudaSuccess) {
        cudaGetLastError();
        return NULL;
    }
    return base;
}

void ts_pinned_free(void *base, size_t size, int registered)
{
    if (!base) return;
    if (registered) {
        cudaHostUnregister(base);
        munmap(base, size);
    } else {
        cudaFreeHost(base);
    }
}

/* The header page of a pinnable block: its pixels start PINNABLE_HEAD
 * bytes after it, so that the block is whole pages. */
typedef struct pinnable_head {
    size_t size;     /* bytes mapped, the header page included */
    int registered;
} pinnable_head;
enum { PINNABLE_HEAD = 4096 };

void *ts_pinnable_alloc(void *ctx, size_t bytes)
{
    (void)ctx;
    size_t size = (bytes + PINNABLE_HEAD + 4095) & ~(size_t)4095;
    if (size < bytes) return NULL;
    void *base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return NULL;
    pinnable_head *h = base;
    h->size = size;
    h->registered = 0;
    return (unsigned char *)base + PINNABLE_HEAD;
}

void ts_pinnable_free(void *ctx, void *p)
{
    (void)ctx;
    if (!p) return;
    pinnable_head *h = (pinnable_head *)((unsigned char *)p - PINNABLE_HEAD);
    if (h->registered && cudaHostUnregister(h) != cudaSuccess) cudaGetLastError();
    munmap(h, h->size);
}

int ts_pinnable_pin(void *p)
{
    if (!p) return 0;
    pinnable_head *h = (pinnable_head *)((unsigned char *)p - PINNABLE_HEAD);
    if (h->registered) return 1;
    if (cudaHostRegister(h, h->size, cudaHostRegisterPortable) != cudaSuccess) {
        cudaGetLastError(); /* not sticky */
        return 0;
    }
    h->registered = 1;
    return 1;
}

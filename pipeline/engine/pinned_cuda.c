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

/* peak_cuda.c - the rates this machine reaches (ts_engine_peak_rates),
 * timed at a run's start so that every stage's GB/s can be read as a share
 * of what the bus and the device allow in the same run. */
#include "engine_internal.h"

#include <cuda_runtime_api.h>
#include <string.h>

/* Median of 3 timed copies (after one warm-up), in GB/s of `bytes`. */
static double time_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, double bytes,
                        cudaStream_t s, cudaEvent_t a, cudaEvent_t b)
{
    float ms[3];
    cudaMemcpyAsync(dst, src, n, kind, s);
    for (int i = 0; i < 3; i++) {
        cudaEventRecord(a, s);
        cudaMemcpyAsync(dst, src, n, kind, s);
        cudaEventRecord(b, s);
        cudaEventSynchronize(b);
        cudaEventElapsedTime(&ms[i], a, b);
    }
    float lo = ms[0] < ms[1] ? ms[0] : ms[1], hi = ms[0] < ms[1] ? ms[1] : ms[0];
    float med = ms[2] < lo ? lo : ms[2] > hi ? hi : ms[2];
    return med > 0 ? bytes / (med * 1e-3) / 1e9 : 0;
}

ts_status ts_engine_peak_rates(ts_engine *e, ts_peak_rates *r, ts_err *err)
{
    const size_t n = (size_t)64 << 20;
    cudaError_t sel = cudaSetDevice(ts_engine_device_index(e));
    if (sel != cudaSuccess)
        return ts_err_set(err, TS_E_DEVICE, "selecting the CUDA device: %s", cudaGetErrorString(sel));
    ts_allocator pool = ts_engine_pinned_allocator(e);
    /* Pinned, always: from the pool when it has room (later images reuse
     * it), else a block of its own, so a small pinned_limit does not turn
     * this into a measurement of pageable copies. */
    unsigned char *host = pool.alloc(pool.ctx, n), *own = NULL;
    if (!host && cudaHostAlloc((void **)&own, n, cudaHostAllocDefault) == cudaSuccess) host = own;
    void *d0 = NULL, *d1 = NULL;
    cudaStream_t s = NULL;
    cudaEvent_t a = NULL, b = NULL;
    ts_status st = TS_OK;
    memset(r, 0, sizeof *r);
    if (!host || cudaMalloc(&d0, n) != cudaSuccess || cudaMalloc(&d1, n) != cudaSuccess ||
        cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreate(&a) != cudaSuccess || cudaEventCreate(&b) != cudaSuccess) {
        st = ts_err_set(err, TS_E_DEVICE, "measuring the bus: cannot allocate 2 x 64 MB: %s",
                        cudaGetErrorString(cudaGetLastError()));
    } else {
        memset(host, 0x5a, n);
        r->h2d_gbps = time_copy(d0, host, n, cudaMemcpyHostToDevice, (double)n, s, a, b);
        r->d2h_gbps = time_copy(host, d0, n, cudaMemcpyDeviceToHost, (double)n, s, a, b);
        r->d2d_gbps = time_copy(d1, d0, n, cudaMemcpyDeviceToDevice, 2.0 * (double)n, s, a, b);
        cudaError_t ce = cudaStreamSynchronize(s);
        if (ce != cudaSuccess) st = ts_err_set(err, TS_E_DEVICE, "measuring the bus: %s", cudaGetErrorString(ce));
    }
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    if (s) cudaStreamDestroy(s);
    cudaFree(d0);
    cudaFree(d1);
    if (own) cudaFreeHost(own);
    else if (host) pool.free(pool.ctx, host);
    return st;
}

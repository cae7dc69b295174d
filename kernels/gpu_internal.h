/* gpu_internal.h - (internal, CUDA only) what the kernel families share:
 * the family table the dispatcher uses, error checking, and the per-type
 * load/store rules (ts_pixel.h) on the device. */
#ifndef TSK_GPU_INTERNAL_H
#define TSK_GPU_INTERNAL_H

#include "tsk.h"
#include "ts_pixel.h"

#include <cuda_runtime.h>
#include <stdint.h>

/* One op family (one .cu file): its numbered versions and its launcher.
 * version_names[0] is "v1 ...", the textbook version; default_version is
 * the fastest, chosen from measurements. */
typedef struct tsk_family {
    const char *name;
    const char *const *version_names;
    int count;
    int default_version;
    ts_status (*apply)(const tsk_op *op, const ts_view *src, ts_view *dst,
                       const tsk_launch *l, ts_err *err);
    /* fma[v - 1] = 1 when version v fuses multiply-add (within 1 of the
     * reference on integers), 0 when it is bit-exact; NULL = all exact. */
    const unsigned char *fma;
} tsk_family;

extern "C" const tsk_family tsk_family_point;    /* MATRIX, PREMUL, UNPREMUL (point/point.cu) */
extern "C" const tsk_family tsk_family_orient;   /* ORIENT (orient/orient.cu) */
extern "C" const tsk_family tsk_family_conv_sep; /* CONV_SEP (conv/conv_sep.cu) */
extern "C" const tsk_family tsk_family_conv2d;   /* CONV_2D (conv/conv2d.cu) */
extern "C" const tsk_family tsk_family_sample;   /* SAMPLE (sample/sample.cu) */

/* Turn a CUDA error into a ts_err; returns TS_OK when e == cudaSuccess. */
static inline ts_status tsk_cuda_status(cudaError_t e, const char *what, ts_err *err)
{
    if (e == cudaSuccess) return TS_OK;
    return ts_err_set(err, TS_E_DEVICE, "%s: %s", what, cudaGetErrorString(e));
}
/* After a launch: the launch's own error (bad configuration etc.). */
#define TSK_LAUNCH_CHECK(what, err) tsk_cuda_status(cudaGetLastError(), (what), (err))

/* The version a launch asks for into *version: l->version 1..count, or
 * the family's default for 0 (or no launch). Any other number is TS_E_ARG
 * naming the family, for the caller to return (tsk_gpu_apply checks it
 * first; each family's launcher again where it picks). */
static inline ts_status tsk_pick_version(const tsk_family *f, const tsk_launch *l, int *version, ts_err *err)
{
    int v = l ? l->version : 0;
    *version = 0;  /* none, until the number is known */
    if (v < 0 || v > f->count)
        return ts_err_set(err, TS_E_ARG, "%s: no kernel version %d (versions 1..%d, 0 for the default)", f->name,
                          v, f->count);
    *version = v ? v : f->default_version;
    return TS_OK;
}

/* Channel element types: the largest value, load as float, store rounded. */
template <typename T> struct tsk_px;
template <> struct tsk_px<uint8_t> {
    static __device__ __forceinline__ float maxv() { return 255.0f; }
    static __device__ __forceinline__ float load(uint8_t v) { return (float)v; }
    static __device__ __forceinline__ uint8_t store(float x) { return (uint8_t)ts_round_sat(x, 255.0f); }
};
template <> struct tsk_px<uint16_t> {
    static __device__ __forceinline__ float maxv() { return 65535.0f; }
    static __device__ __forceinline__ float load(uint16_t v) { return (float)v; }
    static __device__ __forceinline__ uint16_t store(float x) { return (uint16_t)ts_round_sat(x, 65535.0f); }
};
template <> struct tsk_px<float> {
    static __device__ __forceinline__ float maxv() { return 1.0f; }
    static __device__ __forceinline__ float load(float v) { return v; }
    static __device__ __forceinline__ float store(float x) { return x; }
};

/* Row r of a view, as T*. */
template <typename T>
static __device__ __forceinline__ T *tsk_row(unsigned char *base, size_t pitch, int r)
{
    return (T *)(base + (size_t)r * pitch);
}

#endif

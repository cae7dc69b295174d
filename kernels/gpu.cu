/* gpu.cu - the CUDA side of tsk.h: picks the op family for a kernel op,
 * reports the device, and moves RGB in and out of RGBX. */
#include "gpu_internal.h"

#include <stdio.h>
#include <string.h>

/* The GPU launcher of every kernel kind (the rest of a kind's row is in
 * kinds.c). */
static const tsk_family *const families[] = {
    /* TSK_MATRIX */ &tsk_family_point,
    /* TSK_PREMUL */ &tsk_family_point,
    /* TSK_UNPREMUL */ &tsk_family_point,
    /* TSK_ORIENT */ &tsk_family_orient,
    /* TSK_CONV_SEP */ &tsk_family_conv_sep,
    /* TSK_CONV_2D */ &tsk_family_conv2d,
    /* TSK_SAMPLE */ &tsk_family_sample,
};
static_assert(sizeof families / sizeof families[0] == TSK_KIND_COUNT, "one family per kernel kind");

static const tsk_family *family_of(tsk_kind kind)
{
    return (int)kind >= 0 && kind < TSK_KIND_COUNT ? families[kind] : NULL;
}

extern "C" int tsk_version_count(tsk_kind kind)
{
    const tsk_family *f = family_of(kind);
    return f ? f->count : 0;
}

extern "C" const char *tsk_version_name(tsk_kind kind, int version)
{
    const tsk_family *f = family_of(kind);
    if (!f) return "none";
    if (version <= 0 || version > f->count) version = f->default_version;
    return f->version_names[version - 1];
}

extern "C" int tsk_default_version(tsk_kind kind)
{
    const tsk_family *f = family_of(kind);
    return f ? f->default_version : 0;
}

extern "C" int tsk_version_fma(tsk_kind kind, int version)
{
    const tsk_family *f = family_of(kind);
    if (!f || !f->fma || version <= 0 || version > f->count) return 0;
    return f->fma[version - 1];
}

extern "C" ts_status tsk_gpu_apply(const tsk_op *op, const ts_view *src, ts_view *dst,
                                   const tsk_launch *l, ts_err *err)
{
    const tsk_family *f = family_of(op->kind);
    int version;
    if (!f) return ts_err_set(err, TS_E_ARG, "unknown kernel op %d", (int)op->kind);
    ts_status st = tsk_pick_version(f, l, &version, err);  /* an unknown version is an error, even with nothing to do */
    if (st != TS_OK) return st;
    if (src->c != dst->c || src->type != dst->type)
        return ts_err_set(err, TS_E_ARG, "%s: source and destination differ in channels or type", f->name);
    if (l && (l->slot < 0 || l->slot >= TSK_SLOTS))
        return ts_err_set(err, TS_E_ARG, "%s: coefficient slot %d out of range", f->name, l->slot);
    if (dst->w <= 0 || dst->h <= 0) return TS_OK;
    return f->apply(op, src, dst, l, err);
}

extern "C" int ts_gpu_built(void) { return 1; }

extern "C" int ts_gpu_count(ts_err *err)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice) {
        /* the runtime's words ("driver version is insufficient") mislead where there is no driver at all */
        ts_err_set(err, TS_E_DEVICE, "no NVIDIA driver or GPU found (CUDA: %s); --device cpu runs on the CPU",
                   cudaGetErrorString(e));
        cudaGetLastError();
        return 0;
    }
    if (e != cudaSuccess) {
        ts_err_set(err, TS_E_DEVICE, "no CUDA device: %s", cudaGetErrorString(e));
        cudaGetLastError(); /* clear the error so later calls start clean */
        return 0;
    }
    if (n == 0) ts_err_set(err, TS_E_DEVICE, "no CUDA device found");
    return n;
}

extern "C" int ts_gpu_name(int device, char *name, size_t name_len, ts_err *err)
{
    if (name && name_len) name[0] = '\0';
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) {
        ts_err_set(err, TS_E_DEVICE, "cannot query CUDA device %d: %s", device, cudaGetErrorString(e));
        cudaGetLastError();
        return 0;
    }
    if (name && name_len) snprintf(name, name_len, "%s (sm_%d%d, %d SMs)", p.name, p.major, p.minor,
                                   p.multiProcessorCount);
    return 1;
}

extern "C" int ts_gpu_probe(char *name, size_t name_len, ts_err *err)
{
    if (name && name_len) name[0] = '\0';
    return ts_gpu_count(err) > 0 && ts_gpu_name(0, name, name_len, err);
}

/* ---- RGB <-> RGBX: packed RGB crosses PCIe, the kernels work on 4 channels */

template <typename T>
__global__ void expand3to4_kernel(const unsigned char *src, size_t sp, unsigned char *dst, size_t dp,
                                  int w, int h, T fill)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w) return;
    for (int y = blockIdx.y; y < h; y += gridDim.y) {
        const T *s = (const T *)(src + (size_t)y * sp) + 3 * x;
        T *d = (T *)(dst + (size_t)y * dp) + 4 * x;
        d[0] = s[0]; d[1] = s[1]; d[2] = s[2]; d[3] = fill;
    }
}

template <typename T>
__global__ void pack4to3_kernel(const unsigned char *src, size_t sp, unsigned char *dst, size_t dp,
                                int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= w) return;
    for (int y = blockIdx.y; y < h; y += gridDim.y) {
        const T *s = (const T *)(src + (size_t)y * sp) + 4 * x;
        T *d = (T *)(dst + (size_t)y * dp) + 3 * x;
        d[0] = s[0]; d[1] = s[1]; d[2] = s[2];
    }
}

static ts_status check_pair(const ts_view *a, const ts_view *b, int ca, int cb, const char *what, ts_err *err)
{
    if (a->c != ca || b->c != cb || a->type != b->type || a->w != b->w || a->h != b->h)
        return ts_err_set(err, TS_E_ARG, "%s: views do not match", what);
    return TS_OK;
}

extern "C" ts_status tsk_gpu_expand3to4(const ts_view *s, ts_view *d, void *stream, ts_err *err)
{
    ts_status st = check_pair(s, d, 3, 4, "expand RGB to RGBX", err);
    if (st != TS_OK || s->w == 0 || s->h == 0) return st;
    dim3 block(256), grid((s->w + 255) / 256, s->h < 65535 ? s->h : 65535);
    cudaStream_t cs = (cudaStream_t)stream;
    switch (s->type) {
    case TS_U8: expand3to4_kernel<uint8_t><<<grid, block, 0, cs>>>(s->data, s->pitch, d->data, d->pitch, s->w, s->h, 255); break;
    case TS_U16: expand3to4_kernel<uint16_t><<<grid, block, 0, cs>>>(s->data, s->pitch, d->data, d->pitch, s->w, s->h, 65535); break;
    case TS_F32: expand3to4_kernel<float><<<grid, block, 0, cs>>>(s->data, s->pitch, d->data, d->pitch, s->w, s->h, 1.0f); break;
    }
    return TSK_LAUNCH_CHECK("expand RGB to RGBX", err);
}

extern "C" ts_status tsk_gpu_pack4to3(const ts_view *s, ts_view *d, void *stream, ts_err *err)
{
    ts_status st = check_pair(s, d, 4, 3, "pack RGBX to RGB", err);
    if (st != TS_OK || s->w == 0 || s->h == 0) return st;
    dim3 block(256), grid((s->w + 255) / 256, s->h < 65535 ? s->h : 65535);
    cudaStream_t cs = (cudaStream_t)stream;
    switch (s->type) {
    case TS_U8: pack4to3_kernel<uint8_t><<<grid, block, 0, cs>>>(s->data, s->pitch, d->data, d->pitch, s->w, s->h); break;
    case TS_U16: pack4to3_kernel<uint16_t><<<grid, block, 0, cs>>>(s->data, s->pitch, d->data, d->pitch, s->w, s->h); break;
    case TS_F32: pack4to3_kernel<float><<<grid, block, 0, cs>>>(s->data, s->pitch, d->data, d->pitch, s->w, s->h); break;
    }
    return TSK_LAUNCH_CHECK("pack RGBX to RGB", err);
}

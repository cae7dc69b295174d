/* bench_npp.c - NPP's equivalent of each `bench kernels` line, on the same
 * buffers and timed the same way, so the table says how the kernels
 * compare with NVIDIA's library. Built only when NPP is found. NPP keeps
 * only its stream-context (_Ctx) entry points, so the context is filled
 * here from the device's attributes. Every call fails softly: a line that
 * says "NPP error N" and the bench goes on.
 *
 * NPP's maths differs in details (rounding, the resize grid, the 8-bit
 * buffer between the passes of its separable filter): these lines compare
 * speed, not pixels. */
#include "bench_npp.h"
#include "tilestream.h"
#include "tsk.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <npp.h>
#include <stdio.h>
#include <string.h>

typedef struct npp_run {
    NppStreamContext ctx;
    NppiMaskSize mask;    /* FilterGaussBorder */
    int taps;             /* row/column and 2-D filters */
    const Npp32f *kernel; /* device taps (row/column: taps; 2-D: taps x taps) */
    Npp32f twist[3][4];   /* ColorTwist */
    int out_w, out_h;     /* Resize */
} npp_run;

static int npp_failed(NppStatus s, const char *call, char *msg, size_t msg_len)
{
    if (s >= NPP_SUCCESS) return 0;  /* positive values are warnings */
    snprintf(msg, msg_len, "NPP error %d in %s", (int)s, call);
    return 1;
}

static NppiSize npp_size(int w, int h)
{
    NppiSize s;
    s.width = w;
    s.height = h;
    return s;
}

static NppiPoint npp_origin(void)
{
    NppiPoint p;
    p.x = 0;
    p.y = 0;
    return p;
}

/* ------------------------------------------------- one launcher per call */

static int npp_transpose(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len)
{
    const npp_run *r = (const npp_run *)ctx;
    NppStatus s = nppiTranspose_8u_C4R_Ctx(io->in[buf], (int)io->in_pitch, io->out, (int)io->out_pitch,
                                           npp_size(io->w, io->h), r->ctx);
    return npp_failed(s, "nppiTranspose_8u_C4R_Ctx", msg, msg_len);
}

static int npp_twist(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len)
{
    const npp_run *r = (const npp_run *)ctx;
    NppStatus s = nppiColorTwist32f_8u_C4R_Ctx(io->in[buf], (int)io->in_pitch, io->out, (int)io->out_pitch,
                                               npp_size(io->w, io->h), r->twist, r->ctx);
    return npp_failed(s, "nppiColorTwist32f_8u_C4R_Ctx", msg, msg_len);
}

static int npp_gauss(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len)
{
    const npp_run *r = (const npp_run *)ctx;
    NppStatus s = nppiFilterGaussBorder_8u_C4R_Ctx(io->in[buf], (Npp32s)io->in_pitch, npp_size(io->w, io->h),
                                                   npp_origin(), io->out, (Npp32s)io->out_pitch,
                                                   npp_size(io->w, io->h), r->mask, NPP_BORDER_REPLICATE, r->ctx);
    return npp_failed(s, "nppiFilterGaussBorder_8u_C4R_Ctx", msg, msg_len);
}

/* Rows into the 8-bit scratch image, then columns into the output. */
static int npp_row_column(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len)
{
    const npp_run *r = (const npp_run *)ctx;
    NppiSize size = npp_size(io->w, io->h);
    NppStatus s = nppiFilterRowBorder32f_8u_C4R_Ctx(io->in[buf], (int)io->in_pitch, size, npp_origin(), io->tmp,
                                                    (int)io->tmp_pitch, size, r->kernel, r->taps, r->taps / 2,
                                                    NPP_BORDER_REPLICATE, r->ctx);
    if (npp_failed(s, "nppiFilterRowBorder32f_8u_C4R_Ctx", msg, msg_len)) return 1;
    s = nppiFilterColumnBorder32f_8u_C4R_Ctx(io->tmp, (int)io->tmp_pitch, size, npp_origin(), io->out,
                                             (int)io->out_pitch, size, r->kernel, r->taps, r->taps / 2,
                                             NPP_BORDER_REPLICATE, r->ctx);
    return npp_failed(s, "nppiFilterColumnBorder32f_8u_C4R_Ctx", msg, msg_len);
}

static int npp_filter2d(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len)
{
    const npp_run *r = (const npp_run *)ctx;
    NppiPoint anchor;
    anchor.x = anchor.y = r->taps / 2;
    NppStatus s = nppiFilterBorder32f_8u_C4R_Ctx(io->in[buf], (int)io->in_pitch, npp_size(io->w, io->h),
                                                 npp_origin(), io->out, (int)io->out_pitch, npp_size(io->w, io->h),
                                                 r->kernel, npp_size(r->taps, r->taps), anchor,
                                                 NPP_BORDER_REPLICATE, r->ctx);
    return npp_failed(s, "nppiFilterBorder32f_8u_C4R_Ctx", msg, msg_len);
}

static int npp_resize(const ts_bench_io *io, int buf, void *ctx, char *msg, size_t msg_len)
{
    const npp_run *r = (const npp_run *)ctx;
    NppiRect src_roi = { 0, 0, io->w, io->h }, dst_roi = { 0, 0, r->out_w, r->out_h };
    NppStatus s = nppiResize_8u_C4R_Ctx(io->in[buf], (int)io->in_pitch, npp_size(io->w, io->h), src_roi, io->out,
                                        (int)io->out_pitch, npp_size(r->out_w, r->out_h), dst_roi,
                                        NPPI_INTER_LINEAR, r->ctx);
    return npp_failed(s, "nppiResize_8u_C4R_Ctx", msg, msg_len);
}

/* ------------------------------------------------------------- the lines */

/* NPP's stream context for io->stream, from the device's attributes. */
static int npp_context(NppStreamContext *c, const ts_bench_io *io, char *msg, size_t msg_len)
{
    int dev = 0, v[6];
    unsigned int flags = 0;
    static const enum cudaDeviceAttr attrs[6] = {
        cudaDevAttrMultiProcessorCount, cudaDevAttrMaxThreadsPerMultiProcessor, cudaDevAttrMaxThreadsPerBlock,
        cudaDevAttrMaxSharedMemoryPerBlock, cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor,
    };
    cudaError_t e = cudaGetDevice(&dev);
    for (int i = 0; i < 6 && e == cudaSuccess; i++) e = cudaDeviceGetAttribute(&v[i], attrs[i], dev);
    if (e == cudaSuccess) e = cudaStreamGetFlags((cudaStream_t)io->stream, &flags);
    if (e != cudaSuccess) {
        snprintf(msg, msg_len, "NPP stream context: %s", cudaGetErrorString(e));
        return 1;
    }
    memset(c, 0, sizeof *c);
    c->hStream = (cudaStream_t)io->stream;
    c->nCudaDeviceId = dev;
    c->nMultiProcessorCount = v[0];
    c->nMaxThreadsPerMultiProcessor = v[1];
    c->nMaxThreadsPerBlock = v[2];
    c->nSharedMemPerBlock = (size_t)v[3];
    c->nCudaDevAttrComputeCapabilityMajor = v[4];
    c->nCudaDevAttrComputeCapabilityMinor = v[5];
    c->nStreamFlags = flags;
    return 0;
}

/* Normalised Gaussian taps in device memory (the same as the kernels'
 * lines use); a 2-D kernel is the outer product. NULL on failure. */
static Npp32f *npp_gauss_taps(int n, double sigma, int two_d)
{
    float k1[15], k[15 * 15];
    Npp32f *d = NULL;
    int count = two_d ? n * n : n;
    tsk_gauss_taps(sigma, n / 2, k1);
    for (int j = 0; j < (two_d ? n : 1); j++)
        for (int i = 0; i < n; i++) k[j * n + i] = two_d ? k1[j] * k1[i] : k1[i];
    if (cudaMalloc((void **)&d, sizeof(Npp32f) * (size_t)count) != cudaSuccess) return NULL;
    if (cudaMemcpy(d, k, sizeof(Npp32f) * (size_t)count, cudaMemcpyHostToDevice) != cudaSuccess) {
        cudaFree(d);
        return NULL;
    }
    return d;
}

static void npp_line_transpose(ts_bench *b, const ts_bench_io *io, npp_run *r)
{
    ts_bench_line(b, "transpose", "NPP nppiTranspose_8u_C4R", 8.0 * io->w * io->h, (double)io->w * io->h,
                  npp_transpose, r);
}

/* The kernels' matrix row i is m0*R + m1*G + m2*B + m3*255; NPP adds its
 * fourth column as it is. */
static void npp_line_twist(ts_bench *b, const ts_bench_io *io, npp_run *r)
{
    static const float m[12] = { 0.393f, 0.769f, 0.189f, 0.0f, 0.349f, 0.686f, 0.168f, 0.0f,
                                 0.272f, 0.534f, 0.131f, 0.02f };
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) r->twist[i][j] = j < 3 ? m[4 * i + j] : m[4 * i + 3] * 255.0f;
    ts_bench_line(b, "matrix", "NPP nppiColorTwist32f_8u_C4R", 8.0 * io->w * io->h, (double)io->w * io->h,
                  npp_twist, r);
}

static void npp_line_gauss(ts_bench *b, const ts_bench_io *io, npp_run *r, const char *op, int taps, double sigma)
{
    char variant[64];
    if (!ts_bench_wants(b, op)) return;
    r->mask = taps == 5 ? NPP_MASK_SIZE_5_X_5 : NPP_MASK_SIZE_15_X_15;
    snprintf(variant, sizeof variant, "NPP FilterGaussBorder %dx%d", taps, taps);
    ts_bench_line(b, op, variant, 8.0 * io->w * io->h, (double)io->w * io->h, npp_gauss, r);
    r->taps = taps;
    r->kernel = npp_gauss_taps(taps, sigma, 0);
    if (!r->kernel) {
        ts_bench_fail(b, op, "NPP FilterRow+ColumnBorder32f", "cannot upload the taps");
        return;
    }
    ts_bench_line(b, op, "NPP FilterRow+ColumnBorder32f", 8.0 * io->w * io->h, (double)io->w * io->h,
                  npp_row_column, r);
    cudaFree((void *)r->kernel);
    r->kernel = NULL;
}

static void npp_line_filter2d(ts_bench *b, const ts_bench_io *io, npp_run *r)
{
    if (!ts_bench_wants(b, "conv5x5")) return;
    r->taps = 5;
    r->kernel = npp_gauss_taps(5, 1.0, 1);
    if (!r->kernel) {
        ts_bench_fail(b, "conv5x5", "NPP FilterBorder32f 5x5", "cannot upload the taps");
        return;
    }
    ts_bench_line(b, "conv5x5", "NPP FilterBorder32f 5x5", 8.0 * io->w * io->h, (double)io->w * io->h,
                  npp_filter2d, r);
    cudaFree((void *)r->kernel);
    r->kernel = NULL;
}

static void npp_line_resize(ts_bench *b, const ts_bench_io *io, npp_run *r, const char *op, double scale)
{
    r->out_w = (int)(io->w * scale);
    r->out_h = (int)(io->h * scale);
    ts_bench_line(b, op, "NPP nppiResize_8u_C4R linear",
                  4.0 * io->w * io->h + 4.0 * r->out_w * r->out_h, (double)r->out_w * r->out_h, npp_resize, r);
}

void ts_bench_npp(ts_bench *b, const ts_bench_io *io, const char *op)
{
    npp_run r;
    char msg[200];
    memset(&r, 0, sizeof r);
    if (!ts_bench_wants(b, op)) return;
    if (npp_context(&r.ctx, io, msg, sizeof msg)) {
        ts_bench_fail(b, op, "NPP", msg);
        return;
    }
    if (!strcmp(op, "transpose")) npp_line_transpose(b, io, &r);
    else if (!strcmp(op, "matrix")) npp_line_twist(b, io, &r);
    else if (!strcmp(op, "gauss5")) npp_line_gauss(b, io, &r, op, 5, 1.0);
    else if (!strcmp(op, "gauss15")) npp_line_gauss(b, io, &r, op, 15, 2.5);
    else if (!strcmp(op, "conv5x5")) npp_line_filter2d(b, io, &r);
    else if (!strcmp(op, "resize-up")) npp_line_resize(b, io, &r, op, 2.0);
    else if (!strcmp(op, "resize-down")) npp_line_resize(b, io, &r, op, 0.5);
}

/* up2_traffic.cu - what holds a 2x up on the GPU: the bytes, or how they
 * are written? A 2x up of 7680x4320 RGBA8 reads 127 MB and writes 506 MB.
 * This program times the copy and a memset of the output (what the memory
 * system does at its best), then kernels that move a nearest 2x up's bytes
 * with nothing sampled, in several write patterns: tilestream's v3 shape
 * (4-byte stores, 4 pixels a thread 32 apart, one row), 16-byte stores of
 * two rows a thread, streaming stores, and one wave of blocks walking the
 * output in raster order; and a 2x up through a texture object (bilinear,
 * and point-sampled) in v3's shape with the least arithmetic, from pitched
 * memory as tilestream binds it or from a CUDA array (the texture unit's
 * own layout), with a warp's fetches in a row or in 16 x 2. If one of
 * them runs well under the bilinear texture kernel's time, the write
 * pattern or the arithmetic is the lever for resize's texture path
 * (docs/PERFORMANCE.md, "Resampling").
 *
 * Build and run on the GPU machine (no tilestream code needed):
 *   nvcc -O3 -arch=sm_90 -std=c++17 -o up2_traffic scripts/up2_traffic.cu && ./up2_traffic
 */
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
const int W = 7680, H = 4320, OW = 2 * W, OH = 2 * H;

// A store, plain or streaming (st.global.cs)
template <bool CS, typename V> __device__ __forceinline__ void put(V *p, V v) { if constexpr (CS) __stcs(p, v); else *p = v; }

// v3's shape, nearest: 4 pixels 32 apart of output row y from x0, 4-byte loads and stores
template <bool CS> __device__ __forceinline__ void row_px(const uint32_t *in, uint32_t *out, int x0, int y) {
    const uint32_t *ir = in + (size_t)(y >> 1) * W; uint32_t *orow = out + (size_t)y * OW;
    uint32_t v[4];
#pragma unroll
    for (int k = 0; k < 4; k++) v[k] = __ldg(ir + ((x0 + 32 * k) >> 1));
#pragma unroll
    for (int k = 0; k < 4; k++) put<CS>(orow + x0 + 32 * k, v[k]);
}
// P1 (CS: P5, streaming stores): v3's shape in 32x8 blocks
template <bool CS> __global__ void p1(const uint32_t *in, uint32_t *out) {
    int x0 = blockIdx.x * 128 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (y < OH) row_px<CS>(in, out, x0, y);
}
// P2: write only, v3's shape
__global__ void p2(uint32_t *out) {
    int x0 = blockIdx.x * 128 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (y >= OH) return;
    uint32_t *orow = out + (size_t)y * OW;
#pragma unroll
    for (int k = 0; k < 4; k++) orow[x0 + 32 * k] = x0 + k;
}
// P3 (CS: P4, streaming stores): thread reads 4 input px (16 B), writes 2 rows x 8 px (4 x 16-byte stores)
template <bool CS> __global__ void p3(const uint4 *in, uint4 *out) {
    int xi = blockIdx.x * 32 + threadIdx.x, yi = blockIdx.y * 8 + threadIdx.y;   // input chunk of 4 px
    if (xi >= W / 4 || yi >= H) return;
    uint4 v = __ldg(in + (size_t)yi * (W / 4) + xi);
    uint4 a = make_uint4(v.x, v.x, v.y, v.y), b = make_uint4(v.z, v.z, v.w, v.w);
    uint4 *o0 = out + (size_t)(2 * yi) * (OW / 4) + 2 * xi, *o1 = o0 + OW / 4;
    put<CS>(o0, a); put<CS>(o0 + 1, b); put<CS>(o1, a); put<CS>(o1 + 1, b);
}
// P6: one wave of blocks walking the output's 32x8 tiles of 128 px in raster order
__global__ void p6(const uint32_t *in, uint32_t *out, int tiles_x, int tiles) {
    for (int t = blockIdx.x; t < tiles; t += gridDim.x)
        row_px<false>(in, out, (t % tiles_x) * 128 + threadIdx.x, (t / tiles_x) * 8 + threadIdx.y);
}
// P7 (FILTER) and P8 (point): a 2x up through a texture object in v3's shape with the least arithmetic:
// bilinear at ((x + 0.5) / 2, (y + 0.5) / 2) as floats rounded to bytes, or the texel itself
template <bool FILTER> __global__ void p7(cudaTextureObject_t tex, uint32_t *out) {
    int x0 = blockIdx.x * 128 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (y >= OH) return;
    uint32_t *orow = out + (size_t)y * OW;
    const float v = (y + 0.5f) * 0.5f;
    uint32_t r[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float u = (x0 + 32 * k + 0.5f) * 0.5f;
        if constexpr (FILTER) {
            const float4 f = tex2D<float4>(tex, u, v);
            r[k] = __byte_perm(__byte_perm(__float2uint_rn(f.x * 255.0f), __float2uint_rn(f.y * 255.0f), 0x0040),
                               __byte_perm(__float2uint_rn(f.z * 255.0f), __float2uint_rn(f.w * 255.0f), 0x0040), 0x5410);
        } else {
            const uchar4 c = tex2D<uchar4>(tex, u, v);
            r[k] = *(const uint32_t *)&c;
        }
    }
#pragma unroll
    for (int k = 0; k < 4; k++) orow[x0 + 32 * k] = r[k];
}
// P10: P7 with a warp's fetches 16 output columns by 2 rows (block 16 x 16, 4 pixels a thread 16 apart)
__global__ void p10(cudaTextureObject_t tex, uint32_t *out) {
    int x0 = blockIdx.x * 64 + threadIdx.x, y = blockIdx.y * 16 + threadIdx.y;
    uint32_t *orow = out + (size_t)y * OW;
    const float v = (y + 0.5f) * 0.5f;
    uint32_t r[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float4 f = tex2D<float4>(tex, (x0 + 16 * k + 0.5f) * 0.5f, v);
        r[k] = __byte_perm(__byte_perm(__float2uint_rn(f.x * 255.0f), __float2uint_rn(f.y * 255.0f), 0x0040),
                           __byte_perm(__float2uint_rn(f.z * 255.0f), __float2uint_rn(f.w * 255.0f), 0x0040), 0x5410);
    }
#pragma unroll
    for (int k = 0; k < 4; k++) orow[x0 + 16 * k] = r[k];
}
// P9's texture: the image copied into a CUDA array (the texture unit's own block-linear layout); 0 when made
static int make_array_tex(const void *in, cudaArray_t *arr, cudaTextureObject_t *t) {
    cudaChannelFormatDesc cd = cudaCreateChannelDesc<uchar4>();
    CK(cudaMallocArray(arr, &cd, W, H));
    CK(cudaMemcpy2DToArray(*arr, 0, 0, in, (size_t)W * 4, (size_t)W * 4, H, cudaMemcpyDeviceToDevice));
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = *arr;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeNormalizedFloat;
    CK(cudaCreateTextureObject(t, &rd, &td, nullptr));
    return 0;
}
static cudaTextureObject_t make_tex(void *in, bool filter) {
    cudaResourceDesc rd = {};
    rd.resType = cudaResourceTypePitch2D;
    rd.res.pitch2D.devPtr = in; rd.res.pitch2D.desc = cudaCreateChannelDesc<uchar4>();
    rd.res.pitch2D.width = W; rd.res.pitch2D.height = H; rd.res.pitch2D.pitchInBytes = (size_t)W * 4;
    cudaTextureDesc td = {};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = filter ? cudaFilterModeLinear : cudaFilterModePoint;
    td.readMode = filter ? cudaReadModeNormalizedFloat : cudaReadModeElementType;
    cudaTextureObject_t t = 0;
    cudaCreateTextureObject(&t, &rd, &td, nullptr);
    return t;
}
int main() {
    size_t ib = (size_t)W * H * 4, ob = (size_t)OW * OH * 4;
    void *in, *out, *c2;
    CK(cudaMalloc(&in, ib)); CK(cudaMalloc(&out, ob)); CK(cudaMalloc(&c2, ib));
    CK(cudaMemset(in, 7, ib));
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int reps = 20;
    auto run = [&](const char *name, double bytes, auto f) {
        f(); cudaDeviceSynchronize();
        cudaEventRecord(e0); for (int r = 0; r < reps; r++) f(); cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= reps;
        printf("%-64s %8.4f ms %7.0f GB/s  %s\n", name, ms, bytes / (ms * 1e6), cudaGetErrorString(cudaGetLastError()));
    };
    dim3 b(32, 8);
    run("copy 127 MB (cudaMemcpy D2D)", 2.0 * ib, [&] { cudaMemcpyAsync(c2, in, ib, cudaMemcpyDeviceToDevice); });
    run("memset 506 MB", ob, [&] { cudaMemsetAsync(out, 1, ob); });
    run("P2 write only, 4-byte stores, v3's shape", ob, [&] { p2<<<dim3(OW / 128, OH / 8), b>>>((uint32_t *)out); });
    run("P1 nearest 2x up, v3's shape, 4-byte loads and stores", ib + ob, [&] { p1<false><<<dim3(OW / 128, OH / 8), b>>>((const uint32_t *)in, (uint32_t *)out); });
    run("P5 P1 with streaming stores", ib + ob, [&] { p1<true><<<dim3(OW / 128, OH / 8), b>>>((const uint32_t *)in, (uint32_t *)out); });
    run("P3 nearest 2x up, 16-byte load, 2 rows x 2 16-byte stores", ib + ob, [&] { p3<false><<<dim3(W / 4 / 32, H / 8), b>>>((const uint4 *)in, (uint4 *)out); });
    run("P4 P3 with streaming stores", ib + ob, [&] { p3<true><<<dim3(W / 4 / 32, H / 8), b>>>((const uint4 *)in, (uint4 *)out); });
    cudaTextureObject_t tl = make_tex(in, true), tp = make_tex(in, false);
    run("P7 bilinear 2x up through a texture, v3's shape, least arithmetic", ib + ob, [&] { p7<true><<<dim3(OW / 128, OH / 8), b>>>(tl, (uint32_t *)out); });
    run("P8 P7 point-sampled (the texel, uchar4)", ib + ob, [&] { p7<false><<<dim3(OW / 128, OH / 8), b>>>(tp, (uint32_t *)out); });
    cudaArray_t arr;
    cudaTextureObject_t ta;
    if (make_array_tex(in, &arr, &ta)) return 1;
    run("P9 P7 from a CUDA array (block-linear)", ib + ob, [&] { p7<true><<<dim3(OW / 128, OH / 8), b>>>(ta, (uint32_t *)out); });
    run("P9b the copy into the CUDA array", 2.0 * ib, [&] { cudaMemcpy2DToArrayAsync(arr, 0, 0, in, (size_t)W * 4, (size_t)W * 4, H, cudaMemcpyDeviceToDevice); });
    run("P10 P7 with a warp's fetches 16 columns x 2 rows", ib + ob, [&] { p10<<<dim3(OW / 64, OH / 16), dim3(16, 16)>>>(tl, (uint32_t *)out); });
    run("P10b P10 from the CUDA array", ib + ob, [&] { p10<<<dim3(OW / 64, OH / 16), dim3(16, 16)>>>(ta, (uint32_t *)out); });
    int tx = OW / 128, tiles = tx * (OH / 8);
    for (int bps : {4, 8})
        run(bps == 4 ? "P6 P1 in one wave (4 blocks an SM), raster order" : "P6 P1 in one wave (8 blocks an SM), raster order", ib + ob,
            [&] { p6<<<sms * bps, b>>>((const uint32_t *)in, (uint32_t *)out, tx, tiles); });
    return 0;
}

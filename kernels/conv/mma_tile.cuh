/* mma_tile.cuh - what the tensor-core convolutions share (separable v13,
 * v15.. in sep_mma.cuh; 2-D v12 in c2d_mma.cuh): the tile's shape, the
 * m16n8k16 products, tiles of RGBA8 input copied raw into shared memory by
 * cp.async (or through the border mode at the image's edges), fragments
 * read by ldmatrix, and the rounding and packing of an output pixel.
 *
 * An RGBA8 pixel is one 32-bit word; a byte permute with 0x64 makes two of
 * its channels the halves 1024 + byte (0x64XX), exact, so no conversion
 * instruction runs on the way in, and the accumulator starts at -1024 times
 * the sum of the taps to take the 1024s out again. Included by the .cu
 * files after conv_common.cuh. */
#pragma once

#include <cuda_fp16.h>

enum { SM_WARPS = 8, SM_THREADS = 32 * SM_WARPS, SM_TW = 8 * SM_WARPS, SM_TH = 32, SM_BLOCKS = 6, SM_ROWS_IN = 8 * SM_BLOCKS };

/* The tile's shape for radius R (<= 8): R4 columns of halo on the left (a
 * multiple of 4: ldmatrix rows are 16 bytes, 4 pixels); KH k16 steps of 8
 * pixels for a window of 8 outputs; TWI pixels a row; PITCH words a plane
 * row, = 4 (mod 8), so that the 8 rows of one ldmatrix hit 32 distinct
 * banks. 48 rows: row blocks 0..3 feed output rows 0..15, 2..5 rows 16..31. */
template <int R>
struct sm_shape {
    static_assert(R >= 1 && R <= 8, "the column sums' window is two k16 steps");
    static constexpr int R4 = R <= 4 ? 4 : 8;
    static constexpr int KH = (8 + R + R4 + 7) / 8;
    static constexpr int TWI = SM_TW - 8 + 8 * KH;
    static constexpr int CHUNKS = TWI / 4;
    static constexpr int PITCH = TWI + 4;
};

static __device__ __forceinline__ void sm_mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/* d = a b + (c, c, c, c) */
static __device__ __forceinline__ void sm_mma_c(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, float c)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c));
}

/* A column sum rounded as the walks round it (.SAT to 0..1, then one fma
 * with 1.5 * 2^23, to nearest): the value k sits in the low byte of the
 * float's bits, which are those of 1.5 * 2^23 + k, so k is also the float
 * bits less 1.5 * 2^23 (sm_round_value). */
static __device__ __forceinline__ uint32_t sm_round_bits(float c)
{
    return (uint32_t)__float_as_int(fmaf(__saturatef(c * (1.0f / 255.0f)), 255.0f, TS_EXACT_1P5));
}

static __device__ __forceinline__ float sm_round_value(uint32_t bits)
{
    return __fsub_rn(__uint_as_float(bits), TS_EXACT_1P5);
}

/* Four rounded channels (sm_round_bits' low bytes) as one RGBA8 pixel. */
static __device__ __forceinline__ uint32_t sm_pack(const uint32_t (&n)[4])
{
    return __byte_perm(__byte_perm(n[0], n[1], 0x0040u), __byte_perm(n[2], n[3], 0x0040u), 0x5410u);
}

/* The channels of lane's pixel from the column sums' fragments, rounded. */
static __device__ __forceinline__ void sm_round4(uint32_t (&n)[4], const float (&c)[4])
{
#pragma unroll
    for (int ch = 0; ch < 4; ch++) n[ch] = sm_round_bits(c[ch]);
}

static __device__ __forceinline__ void sm_ldmatrix_x4(uint32_t (&b)[4], const uint32_t *p)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
                 : "r"(s)
                 : "memory");
}

static __device__ __forceinline__ uint32_t sm_half2(float lo, float hi)
{
    const __half2 h = __floats2half2_rn(lo, hi);
    return *(const uint32_t *)&h;
}

/* The dynamic shared memory of the kernels that use it (one symbol for all). */
extern __shared__ __align__(16) uint32_t sm_dynamic[];

/* Rows of a tile's input a warp loads: warp, warp + SM_WARPS, ... */
enum { SM_ROWS_PER_WARP = SM_ROWS_IN / SM_WARPS };

/* Four raw pixels w as plane words: channels 0 and 2 of each as the halves
 * 1024 + byte in lo, channels 1 and 3 in hi (one byte permute a word). */
static __device__ __forceinline__ void sm_halves(const uint32_t (&w)[4], uint4 &lo, uint4 &hi)
{
    lo.x = __byte_perm(w[0], 0x64646464u, 0x4240u); hi.x = __byte_perm(w[0], 0x64646464u, 0x4341u);
    lo.y = __byte_perm(w[1], 0x64646464u, 0x4240u); hi.y = __byte_perm(w[1], 0x64646464u, 0x4341u);
    lo.z = __byte_perm(w[2], 0x64646464u, 0x4240u); hi.z = __byte_perm(w[2], 0x64646464u, 0x4341u);
    lo.w = __byte_perm(w[3], 0x64646464u, 0x4240u); hi.w = __byte_perm(w[3], 0x64646464u, 0x4341u);
}

/* sm_halves' words as the exact small halves byte * 2^-24 (0x00XX,
 * subnormal and exact; sm_row_products' TINY): a mask and a byte permute
 * with zero, each with its constant in the instruction. */
static __device__ __forceinline__ void sm_halves_tiny(const uint32_t (&w)[4], uint4 &lo, uint4 &hi)
{
    lo.x = w[0] & 0x00ff00ffu; hi.x = __byte_perm(w[0], 0u, 0x4341u);
    lo.y = w[1] & 0x00ff00ffu; hi.y = __byte_perm(w[1], 0u, 0x4341u);
    lo.z = w[2] & 0x00ff00ffu; hi.z = __byte_perm(w[2], 0u, 0x4341u);
    lo.w = w[3] & 0x00ff00ffu; hi.w = __byte_perm(w[3], 0u, 0x4341u);
}

/* A raw tile (buf, SM_ROWS_IN rows) into the two half2 planes that
 * sm_plane_products reads: lane l of warp w converts chunk l of rows w,
 * w + SM_WARPS, ... Once per tile, where every input row is read by several
 * kernel rows (2-D v13). SHIFT = 2 (2-D v15): every word two columns to the
 * left (plane column c holds tile column c + 2, the tile's first two
 * columns dropped), in 8-byte stores since the shift is half a 16-byte
 * chunk. TINY (2-D v17): the halves byte * 2^-24 (sm_halves_tiny). The
 * caller puts a barrier before the planes are read. */
template <int R, int SHIFT = 0, int ROWS = SM_ROWS_IN, bool TINY = false>
static __device__ __forceinline__ void sm_convert(uint32_t (*planes)[ROWS][sm_shape<R>::PITCH],
                                                  const uint32_t (*buf)[sm_shape<R>::PITCH])
{
    static_assert(SHIFT == 0 || SHIFT == 2, "whole or half chunks");
    static_assert(ROWS % SM_WARPS == 0, "every warp converts as many rows");
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    if (lane >= sm_shape<R>::CHUNKS) return;
#pragma unroll
    for (int i = 0; i < ROWS / SM_WARPS; i++) {
        const int r = warp + SM_WARPS * i;
        const uint4 v = *(const uint4 *)&buf[r][4 * lane];
        const uint32_t w[4] = { v.x, v.y, v.z, v.w };
        uint4 lo, hi;
        if constexpr (TINY) sm_halves_tiny(w, lo, hi);
        else sm_halves(w, lo, hi);
        if constexpr (SHIFT == 0) {
            *(uint4 *)&planes[0][r][4 * lane] = lo;
            *(uint4 *)&planes[1][r][4 * lane] = hi;
        } else {
            if (lane > 0) {
                *(uint2 *)&planes[0][r][4 * lane - 2] = make_uint2(lo.x, lo.y);
                *(uint2 *)&planes[1][r][4 * lane - 2] = make_uint2(hi.x, hi.y);
            }
            *(uint2 *)&planes[0][r][4 * lane] = make_uint2(lo.z, lo.w);
            *(uint2 *)&planes[1][r][4 * lane] = make_uint2(hi.z, hi.w);
        }
    }
}

/* sm_row_products from the planes: row is the lane's ldmatrix address in
 * plane 0 (matrix q: plane q >> 1, pixels 4 (q & 1) .. of the row's step),
 * and one ldmatrix x4 gives both pairs' B fragments of a step, converted
 * already. */
template <int KH, bool FIRST>
static __device__ __forceinline__ void sm_plane_products(const uint32_t *row, const uint32_t (&a)[KH][4], float (&d)[2][4],
                                                         float offset)
{
#pragma unroll
    for (int s = 0; s < KH; s++) {
        uint32_t b[4];
        sm_ldmatrix_x4(b, row + 8 * s);
        if (FIRST && s == 0) {
            sm_mma_c(d[0], a[0], b[0], b[1], offset);
            sm_mma_c(d[1], a[0], b[2], b[3], offset);
        } else {
            sm_mma(d[0], a[s], b[0], b[1]);
            sm_mma(d[1], a[s], b[2], b[3]);
        }
    }
}

/* The 4-pixel chunk at column gx of image row gy where the tile is not
 * all inside (through the border mode; zero where no output needs it or
 * none is asked for): one 16-byte load where whole, else pixel by pixel.
 * cols: each pixel's byte offset from cw_col, -2 where not needed. */
template <int R>
static __device__ __forceinline__ uint4 sm_chunk(const conv_io &io, uint32_t border_px, int gy, int gx, bool none,
                                                 bool whole, const int (&cols)[4])
{
    const int ny0 = io.dy0 - R, ny1 = io.dy0 + io.dh + R;
    none = none || gy < ny0 || gy >= ny1;
    const unsigned char *row = none ? (const unsigned char *)0 : cw_row(io, gy);
    if (!none && whole && row) return __ldg((const uint4 *)(row + (size_t)(gx - io.sx0) * 4));
    uint4 v;
    v.x = none || cols[0] == -2 ? 0u : cw_load(row, cols[0], border_px);
    v.y = none || cols[1] == -2 ? 0u : cw_load(row, cols[1], border_px);
    v.z = none || cols[2] == -2 ? 0u : cw_load(row, cols[2], border_px);
    v.w = none || cols[3] == -2 ? 0u : cw_load(row, cols[3], border_px);
    return v;
}

static __device__ __forceinline__ void sr_ldmatrix_x2(uint32_t (&b)[2], const uint32_t *p)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(b[0]), "=r"(b[1]) : "r"(s) : "memory");
}

/* The products of one row block against the k16 steps of a: d[pair] +=
 * a[s] B[pair][s] for s = 0..KH-1, where row is the lane's ldmatrix address
 * in the block's raw pixels. ldmatrix x4 gives a lane pixel t and t + 4 of
 * its row for two steps; four byte permutes a step make the (1024 + byte)
 * halves of channels 0 and 2 (pair 0) and 1 and 3 (pair 1); TINY: the
 * halves byte * 2^-24 instead (0x00XX, subnormal and exact), which need no
 * offset. FIRST: d starts at offset instead of at its value. Both
 * tensor-core families (separable sr_rows, 2-D v12) make their B fragments
 * here. */
template <int KH, bool FIRST, bool TINY = false>
static __device__ __forceinline__ void sm_row_products(const uint32_t *row, const uint32_t (&a)[KH][4], float (&d)[2][4],
                                                       float offset)
{
    constexpr uint32_t fill = TINY ? 0u : 0x64646464u;
    if (TINY) offset = 0.0f; /* a constant zero: the accumulators start at the zero register */
#pragma unroll
    for (int s = 0; s < KH; s += 2) {
        uint32_t w[4];
        if (s + 1 < KH) {
            sm_ldmatrix_x4(w, row + 8 * s);
        } else {
            uint32_t w2[2];
            sr_ldmatrix_x2(w2, row + 8 * s);
            w[0] = w2[0]; w[1] = w2[1]; w[2] = w[3] = 0u;
        }
#pragma unroll
        for (int q = 0; q < 2 && s + q < KH; q++) {
            const uint32_t p0 = w[2 * q], p1 = w[2 * q + 1];
            const uint32_t b00 = __byte_perm(p0, fill, 0x4240u), b01 = __byte_perm(p1, fill, 0x4240u);
            const uint32_t b10 = __byte_perm(p0, fill, 0x4341u), b11 = __byte_perm(p1, fill, 0x4341u);
            if (FIRST && s + q == 0) {
                sm_mma_c(d[0], a[0], b00, b01, offset);
                sm_mma_c(d[1], a[0], b10, b11, offset);
            } else {
                sm_mma(d[0], a[s + q], b00, b01);
                sm_mma(d[1], a[s + q], b10, b11);
            }
        }
    }
}

static __device__ __forceinline__ void sr_cp16(uint32_t *dst, const void *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}

/* Two pixels, 8 bytes (both addresses 8-byte aligned). */
static __device__ __forceinline__ void sr_cp8(uint32_t *dst, const void *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(d), "l"(src) : "memory");
}

/* One pixel, 4 bytes (both addresses 4-byte aligned, as every RGBA8 pixel is). */
static __device__ __forceinline__ void sr_cp4(uint32_t *dst, const void *src)
{
    const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src) : "memory");
}

static __device__ __forceinline__ void sr_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

static __device__ __forceinline__ void sr_wait_all_but_last() { asm volatile("cp.async.wait_group 1;\n" ::: "memory"); }

/* The tile whose first column and row are tx0, ty0 into buf (ROWS rows
 * of the image, a multiple of SM_WARPS), raw: lane l of warp w takes the
 * 4-pixel chunk l of rows w, w + SM_WARPS, ... By cp.async, 16 bytes a
 * chunk, where the whole tile is inside the image and the region's needs
 * (as sm_load's fast case). Elsewhere (the tiles at the image's and the
 * region's edges) loaded through the border mode and stored now (v15), or,
 * with ASYNC (v21), copied by cp.async there too, so that no warp waits on
 * its loads before the barrier: 16 bytes where a chunk is whole, else a
 * pixel at a time, the pixels not copied (a constant border, or nothing
 * any output needs) stored now. */
template <int R, int ROWS, bool ASYNC, int LEFT = sm_shape<R>::R4>
static __device__ __forceinline__ void sr_fill(const conv_io &io, uint32_t border_px, int vec, int tx0, int ty0,
                                               uint32_t (*buf)[sm_shape<R>::PITCH])
{
    /* LEFT = 2 (2-D v21 on): the chunks start 8 bytes past a 16-byte boundary,
     * so 8-byte copies inside and pixel by pixel at the edges */
    constexpr bool HALVES = LEFT % 4 != 0;
    static_assert(LEFT % 2 == 0, "chunks on 8 bytes at least");
    using S = sm_shape<R>;
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    if (lane >= S::CHUNKS) return;
    const int nx0 = io.dx0 - R, nx1 = io.dx0 + io.dw + R, ny0 = io.dy0 - R, ny1 = io.dy0 + io.dh + R;
    const int gx = tx0 + 4 * lane;
    if (vec && tx0 >= max(0, nx0) && tx0 + S::TWI <= min(io.fw, nx1) && ty0 >= max(0, ny0) &&
        ty0 + ROWS <= min(io.fh, ny1)) {
        const unsigned char *p = io.src + (ptrdiff_t)(ty0 + warp - io.sy0) * (ptrdiff_t)io.sp + (ptrdiff_t)(gx - io.sx0) * 4;
#pragma unroll
        for (int i = 0; i < ROWS / SM_WARPS; i++) {
            uint32_t *dst = &buf[warp + SM_WARPS * i][4 * lane];
            const unsigned char *src = p + (ptrdiff_t)(SM_WARPS * i) * (ptrdiff_t)io.sp;
            if constexpr (HALVES) {
                sr_cp8(dst, src);
                sr_cp8(dst + 2, src + 8);
            } else {
                sr_cp16(dst, src);
            }
        }
        return;
    }
    const bool whole = !HALVES && vec && gx >= 0 && gx >= nx0 && gx + 4 <= io.fw && gx + 4 <= nx1;
    int cols[4];
#pragma unroll
    for (int p = 0; p < 4; p++) cols[p] = gx + p >= nx0 && gx + p < nx1 ? cw_col(io, gx + p, true) : -2;
    if constexpr (!ASYNC) {
#pragma unroll 1
        for (int i = 0; i < ROWS / SM_WARPS; i++)
            *(uint4 *)&buf[warp + SM_WARPS * i][4 * lane] =
                sm_chunk<R>(io, border_px, ty0 + warp + SM_WARPS * i, gx, false, whole, cols);
    } else {
#pragma unroll 1
        for (int i = 0; i < ROWS / SM_WARPS; i++) {
            const int gy = ty0 + warp + SM_WARPS * i;
            uint32_t *dst = &buf[warp + SM_WARPS * i][4 * lane];
            const bool none = gy < ny0 || gy >= ny1;
            const unsigned char *row = none ? (const unsigned char *)0 : cw_row(io, gy);
            if (row && whole) {
                sr_cp16(dst, row + (size_t)(gx - io.sx0) * 4);
                continue;
            }
#pragma unroll
            for (int p = 0; p < 4; p++) {
                if (row && cols[p] >= 0) sr_cp4(dst + p, row + cols[p]);
                else dst[p] = none || cols[p] == -2 ? 0u : border_px;
            }
        }
    }
}

/* The tiles a block walks: blockIdx.x, + gridDim.x, ... of a grid tiles_x
 * wide, each as its column and row on that grid. The next tile's place is
 * found by adding gridDim.x's columns and rows, not by a division a tile. */
struct sm_walk {
    int tile, tiles, tiles_x, tx, ty, sx, sy;
    __device__ __forceinline__ sm_walk(int tiles_x_, int tiles_)
        : tile((int)blockIdx.x), tiles(tiles_), tiles_x(tiles_x_), tx((int)blockIdx.x % tiles_x_),
          ty((int)blockIdx.x / tiles_x_), sx((int)gridDim.x % tiles_x_), sy((int)gridDim.x / tiles_x_)
    {
    }
    __device__ __forceinline__ bool more() const { return tile < tiles; }
    __device__ __forceinline__ bool has_next() const { return tile + (int)gridDim.x < tiles; }
    __device__ __forceinline__ int next_x() const { return tx + sx < tiles_x ? tx + sx : tx + sx - tiles_x; }
    __device__ __forceinline__ int next_y() const { return ty + sy + (tx + sx < tiles_x ? 0 : 1); }
    __device__ __forceinline__ void step()
    {
        ty = next_y();
        tx = next_x();
        tile += (int)gridDim.x;
    }
};

/* The walk of raw tiles that the tensor-core kernels share (v15's): the
 * input of a tile of SM_TW x TH outputs (its ROWS rows start R above it,
 * its columns LEFT left: R4, or 2 for 2-D v21 on) is copied by cp.async into
 * buffer it & 1 (rows it * ROWS on of raw) while the tile before is
 * summed from the other.
 * sm_walk_first fills buffer 0 for the block's first tile; the caller then
 * makes its fragments (the copy in flight meanwhile), and sm_walk_tiles
 * calls body(buffer, X0, Y0) for each tile once its input is in, X0, Y0
 * its first output column and row. ASYNC: as sr_fill's. */
template <int R, int TH, int ROWS, bool ASYNC, int LEFT = sm_shape<R>::R4>
static __device__ __forceinline__ void sm_walk_first(const conv_io &io, uint32_t border_px, int vec, int ax0, int ay0,
                                                     const sm_walk &w, uint32_t (*raw)[sm_shape<R>::PITCH])
{
    static_assert(TH + 2 * R <= ROWS && ROWS % SM_WARPS == 0, "a tile's input rows");
    sr_fill<R, ROWS, ASYNC, LEFT>(io, border_px, vec, ax0 + w.tx * SM_TW - LEFT, ay0 + w.ty * TH - R, raw);
    sr_commit();
}

template <int R, int TH, int ROWS, bool ASYNC, int LEFT = sm_shape<R>::R4, typename Body>
static __device__ __forceinline__ void sm_walk_tiles(const conv_io &io, uint32_t border_px, int vec, int ax0, int ay0,
                                                     sm_walk &w, uint32_t (*raw)[sm_shape<R>::PITCH], Body body)
{
    for (int it = 0; w.more(); w.step(), it ^= 1) {
        /* every warp is done with the other buffer (the last tile's) */
        __syncthreads();
        if (w.has_next())
            sr_fill<R, ROWS, ASYNC, LEFT>(io, border_px, vec, ax0 + w.next_x() * SM_TW - LEFT,
                                          ay0 + w.next_y() * TH - R, raw + (it ^ 1) * ROWS);
        sr_commit();
        sr_wait_all_but_last();
        __syncthreads();
        body(it, ax0 + w.tx * SM_TW, ay0 + w.ty * TH);
    }
}

/* Whether the device has the tensor instructions used (compute capability 8.0 on). */
static inline bool sm_device_ok()
{
    int dev = 0, major = 0;
    return cudaGetDevice(&dev) == cudaSuccess &&
           cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess && major >= 8;
}

/* A kernel's launches may take smem bytes of dynamic shared memory: past
 * the default (48 KB less the kernel's static shared memory) that takes an
 * attribute, set on the current device (the runtime keeps it per device,
 * and a run may use several). */
template <auto Kernel>
static void sm_allow_smem(size_t smem)
{
    if (smem > 0) cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
}

/* Blocks for `tiles` tiles: as many as the device holds at once, no more
 * than there are tiles (each block walks several). smem: the kernel's
 * dynamic shared memory, the same at every call (sm_allow_smem first). */
template <auto Kernel>
static int sm_blocks(int tiles, size_t smem = 0)
{
    static const int per_sm = [smem] {
        int b = 0;
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, Kernel, SM_THREADS, smem) == cudaSuccess ? b : 0;
    }();
    int dev = 0, sms = 0;
    if (per_sm < 1 || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)
        return tiles;
    return tiles < per_sm * sms ? tiles : per_sm * sms;
}

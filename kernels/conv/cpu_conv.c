/* cpu_conv.c - the fast convolutions. The output is computed in vertical
 * bands (so that the rows in flight stay in cache), each band top to
 * bottom:
 *   - every source row the band reads is converted to float once into an
 *     "extended" row that already holds the border pixels on both sides,
 *     so the inner loops never map a coordinate;
 *   - separable: the row pass of each source row goes into a ring of ny
 *     rows, and each output row is the column pass over ny ring rows;
 *   - 2-D: a ring of kh extended rows, each output row summed over them.
 * The inner loops run over the values of a row (x * c + ch) with one tap
 * fixed, which the compiler vectorises; per value the sum takes the taps
 * in the reference's order, so the results are the reference's, bit for
 * bit. The symmetric smoothings are the exception (tsk_cpu.h): the fused
 * float passes, and on 8-bit images the same passes in fixed point. */
#include "cpu_internal.h"

#include <stdlib.h>

enum { RING_BYTES = 384 * 1024 };     /* the ring of rows of one band (fits L2) */

/* A band: output columns [bx, bx + bw) of dst (local), and where its
 * extended source rows start in the image. */
typedef struct band {
    const ts_view *src;
    int c, bx, bw;
    int gx0;          /* image column of the first extended pixel */
    int n_ext;        /* extended pixels: bw + taps - 1 */
    ts_border border;
    float bv;         /* border value */
} band;

/* Extended row of image row gy: n_ext pixels from column gx0, through the
 * border mode (both axes), as float. The part inside the image is one
 * conversion of contiguous source memory. */
static void extend_row(const band *b, int gy, float *ext)
{
    const ts_view *s = b->src;
    int c = b->c, by = ts_border_map(gy, s->full_h, (int)b->border);
    if (by < 0) {
        for (size_t i = 0; i < (size_t)b->n_ext * c; i++) ext[i] = b->bv;
        return;
    }
    int lo = b->gx0 < 0 ? -b->gx0 : 0;                       /* first k inside the image */
    int hi = s->full_w - b->gx0 < b->n_ext ? s->full_w - b->gx0 : b->n_ext;
    if (hi > lo)
        cpu_load_row(cpu_px(s, b->gx0 + lo - s->x0, by - s->y0), s->type, ext + (size_t)lo * c,
                     (size_t)(hi - lo) * c);
    for (int k = 0; k < b->n_ext; k++) {
        if (k == lo && hi > lo) k = hi;  /* skip the inside */
        if (k >= b->n_ext) break;
        int bx = ts_border_map(b->gx0 + k, s->full_w, (int)b->border);
        for (int ch = 0; ch < c; ch++)
            ext[(size_t)k * c + ch] = bx < 0 ? b->bv : ref_load(s, bx - s->x0, by - s->y0, ch);
    }
}

/* out[j] = sum_i k[i] * in[j + i*step], i going up, for j < n. Blocks of
 * BLOCK sums are kept in registers across all the taps; the tail sums
 * one value at a time in the same order. */
enum { BLOCK = 32 };

static CPU_HOT void taps_pass(const float *k, int nk, int step, const float *restrict in, float *restrict out, int n)
{
    int j0 = 0;
    for (; j0 + BLOCK <= n; j0 += BLOCK) {
        float a[BLOCK];
        for (int j = 0; j < BLOCK; j++) a[j] = 0.0f;
        for (int i = 0; i < nk; i++) {
            const float *restrict e = in + j0 + (size_t)i * step;
            float ki = k[i];
            for (int j = 0; j < BLOCK; j++) a[j] += ki * e[j];
        }
        for (int j = 0; j < BLOCK; j++) out[j0 + j] = a[j];
    }
    for (; j0 < n; j0++) {
        float a = 0.0f;
        for (int i = 0; i < nk; i++) a += k[i] * in[j0 + (size_t)i * step];
        out[j0] = a;
    }
}

/* t[j] = sum_r k[r] * rows[r][j], r going up, for j < n; blocked as above. */
static CPU_HOT void column_pass(const float *k, int nk, float *const *rows, float *restrict t, int n)
{
    int j0 = 0;
    for (; j0 + BLOCK <= n; j0 += BLOCK) {
        float a[BLOCK];
        for (int j = 0; j < BLOCK; j++) a[j] = 0.0f;
        for (int r = 0; r < nk; r++) {
            const float *restrict e = rows[r] + j0;
            float kr = k[r];
            for (int j = 0; j < BLOCK; j++) a[j] += kr * e[j];
        }
        for (int j = 0; j < BLOCK; j++) t[j0 + j] = a[j];
    }
    for (; j0 < n; j0++) {
        float a = 0.0f;
        for (int r = 0; r < nk; r++) a += k[r] * rows[r][j0];
        t[j0] = a;
    }
}

/* ---------------------------------------------- fused symmetric passes
 * Where the taps are symmetric (k[i] == k[nk-1-i], nk odd) the two values
 * at the same distance from the centre are added first and the multiply-
 * adds are fused: half the multiplies and one instruction per tap pair
 * (speed: see docs/measurements/kernels.md). The sums round differently
 * from the reference's order (by a few units in the last place of a
 * float), so the 8- and 16-bit results are within 1 of the reference's,
 * not bit for bit (tsk_cpu.h). */
#if CPU_X86
#define CPU_FMA __attribute__((target("avx2,fma")))

static int symmetric(const float *k, int nk)
{
    if (nk % 2 == 0) return 0;
    for (int i = 0; i < nk / 2; i++)
        if (k[i] != k[nk - 1 - i]) return 0;
    return 1;
}

/* out[j] = k[r] * at[r][j] + sum_{i<r} k[i] * (at[i][j] + at[nk-1-i][j]),
 * r = nk / 2: at[i] is the row pass's input shifted by i pixels, or the
 * column pass's i-th ring row. */
static CPU_FMA void fused_pass(const float *k, int nk, const float *const *at, float *restrict out, int n)
{
    int r = nk / 2, j = 0;
    for (; j + 32 <= n; j += 32) {
        const float *c = at[r] + j;
        __m256 kc = _mm256_set1_ps(k[r]);
        __m256 a0 = _mm256_mul_ps(kc, _mm256_loadu_ps(c)), a1 = _mm256_mul_ps(kc, _mm256_loadu_ps(c + 8));
        __m256 a2 = _mm256_mul_ps(kc, _mm256_loadu_ps(c + 16)), a3 = _mm256_mul_ps(kc, _mm256_loadu_ps(c + 24));
        for (int i = 0; i < r; i++) {
            const float *lo = at[i] + j, *hi = at[nk - 1 - i] + j;
            __m256 ki = _mm256_set1_ps(k[i]);
            a0 = _mm256_fmadd_ps(ki, _mm256_add_ps(_mm256_loadu_ps(lo), _mm256_loadu_ps(hi)), a0);
            a1 = _mm256_fmadd_ps(ki, _mm256_add_ps(_mm256_loadu_ps(lo + 8), _mm256_loadu_ps(hi + 8)), a1);
            a2 = _mm256_fmadd_ps(ki, _mm256_add_ps(_mm256_loadu_ps(lo + 16), _mm256_loadu_ps(hi + 16)), a2);
            a3 = _mm256_fmadd_ps(ki, _mm256_add_ps(_mm256_loadu_ps(lo + 24), _mm256_loadu_ps(hi + 24)), a3);
        }
        _mm256_storeu_ps(out + j, a0);
        _mm256_storeu_ps(out + j + 8, a1);
        _mm256_storeu_ps(out + j + 16, a2);
        _mm256_storeu_ps(out + j + 24, a3);
    }
    for (; j < n; j++) {
        float a = k[r] * at[r][j];
        for (int i = 0; i < r; i++) a = __builtin_fmaf(k[i], at[i][j] + at[nk - 1 - i][j], a);
        out[j] = a;
    }
}
#endif

/* Separable smoothing whose fused passes may run (see above). */
int tsk_cpu_sep_fused(const tsk_op *op, int c, ts_type t)
{
#if CPU_X86
    return op->kind == TSK_CONV_SEP && t != TS_F32 && op->u.sep.center_w == 0.0f && op->u.sep.conv_w == 1.0f &&
           !(op->alpha_passthrough && (c == 2 || c == 4)) && symmetric(op->u.sep.kx, op->u.sep.nx) &&
           symmetric(op->u.sep.ky, op->u.sep.ny) && cpu_has_avx2_fma();
#else
    (void)op; (void)c; (void)t;
    return 0;
#endif
}

/* out = center_w * centre + conv_w * t, over n values. */
static CPU_HOT void weigh_centre(float cw, float vw, const float *restrict centre, const float *restrict t,
                                 float *restrict out, int n)
{
    for (int j = 0; j < n; j++) out[j] = cw * centre[j] + vw * t[j];
}

/* Alpha (the last of c channels) copied from the centre pixel. */
static void keep_alpha(int c, const float *centre, float *out, int w)
{
    for (int x = 0; x < w; x++) out[(size_t)x * c + c - 1] = centre[(size_t)x * c + c - 1];
}

static int has_alpha(int c) { return c == 2 || c == 4; }

/* Band width in pixels: a ring of `rows` rows of it, values of `size`
 * bytes, fits RING_BYTES. */
static int band_width(int w, int rows, int c, int size)
{
    int bw = RING_BYTES / (rows * c * size);
    if (bw < 64) bw = 64;
    return bw < w ? bw : w;
}

/* ---------------------------------------------------------- separable */

typedef struct sep_bufs { float *ext, *ring, *t, *centre, *out; float *rows[TSK_MAX_SEP_TAPS]; } sep_bufs;

static void sep_band(const tsk_op *op, const band *b, ts_view *dst, sep_bufs *m)
{
    int c = b->c, nx = op->u.sep.nx, ny = op->u.sep.ny, ry = (ny - 1) / 2, n = b->bw * c;
    /* integers with gauss/box weights: 0*p + 1*t is t up to the sign of a
     * zero, which rounds to 0 anyway, so the centre is not needed */
    int plain = dst->type != TS_F32 && op->u.sep.center_w == 0.0f && op->u.sep.conv_w == 1.0f &&
                !(op->alpha_passthrough && has_alpha(c));
    int fused = tsk_cpu_sep_fused(op, c, dst->type);
    (void)fused;   /* only x86 has the fused passes */
    /* the k-th source row (image row dst->y0 - ry + k) goes to ring slot k % ny */
    for (int k = 0; k < dst->h + ny - 1; k++) {
        extend_row(b, dst->y0 - ry + k, m->ext);
        float *ring_row = m->ring + (size_t)(k % ny) * n;
#if CPU_X86
        if (fused) {
            const float *at[TSK_MAX_SEP_TAPS];
            for (int i = 0; i < nx; i++) at[i] = m->ext + (size_t)i * c;
            fused_pass(op->u.sep.kx, nx, at, ring_row, n);
        } else
#endif
            taps_pass(op->u.sep.kx, nx, c, m->ext, ring_row, n);
        int ly = k - (ny - 1);  /* the output row that now has all its rows */
        if (ly < 0) continue;
        for (int j = 0; j < ny; j++) m->rows[j] = m->ring + (size_t)((ly + j) % ny) * n;
#if CPU_X86
        if (fused) fused_pass(op->u.sep.ky, ny, (const float *const *)m->rows, m->t, n);
        else
#endif
            column_pass(op->u.sep.ky, ny, m->rows, m->t, n);
        const float *res = m->t;
        if (!plain) {
            cpu_load_row(cpu_px(b->src, dst->x0 + b->bx - b->src->x0, dst->y0 + ly - b->src->y0), b->src->type,
                         m->centre, (size_t)n);
            weigh_centre(op->u.sep.center_w, op->u.sep.conv_w, m->centre, m->t, m->out, n);
            if (op->alpha_passthrough && has_alpha(c)) keep_alpha(c, m->centre, m->out, b->bw);
            res = m->out;
        }
        cpu_store_row(cpu_px(dst, b->bx, ly), dst->type, res, (size_t)n);
    }
}

/* ------------------------------------------- 8-bit smoothing in fixed point
 * Where the fused passes would run on an 8-bit image and every tap lies in
 * [0, 1) (gauss and box, all but the one-tap identity), both passes run on
 * 16-bit integers instead: 16 values to an AVX2 instruction where floats
 * hold 8, rows of half the bytes, and no conversion to float and back.
 *   - a tap k is q = round(k 2^16); a source value x is held as x 2^7;
 *   - each pass sums mulhi(a + b, q) over the tap pairs (a, b at the same
 *     distance from the centre) and mulhi(centre, q): the pair's value
 *     times k in units of 2^-7, truncated (mulhi(u, q) = u q >> 16);
 *   - the result rounds as (v + 64 + corr) >> 7 and saturates to a byte.
 * The bound: each truncation loses under one unit (2^-7 of a level), one
 * a term, (rx + 1) + (ry + 1) terms; corr adds half of that, so their sum
 * lies within (rx + ry + 2) / 2 units, 0.25 of a level at 63 x 63 taps.
 * A tap's rounding (2^-17 at most) moves a pass by at most 255 x taps x
 * 2^-17, under 0.13 each at 63 taps. Under 0.51 in all: the rounded result
 * is within 1 of the reference's, as the fused float passes are. Range:
 * the rounded taps of a pass must sum to at most 1 + 2^-11 (gauss and
 * box sum to 1, and the rounding adds at most 63 x 2^-17), so a row value
 * stays under 2^15 and the sum of two under 2^16. */
#if CPU_X86
typedef struct fixed_taps {
    uint16_t qx[TSK_MAX_SEP_TAPS], qy[TSK_MAX_SEP_TAPS];
    uint16_t corr;
    uint16_t border;          /* the constant border's value x 2^7 */
} fixed_taps;

/* q = round(k 2^16) for taps in [0, 1) whose rounded values sum to at
 * most 2^16 + 32 (the range above), or 0 when they do not. */
static int fixed_quantise(const float *k, int nk, uint16_t *q)
{
    unsigned sum = 0;
    for (int i = 0; i < nk; i++) {
        if (!(k[i] >= 0.0f)) return 0;
        double v = (double)k[i] * 65536.0 + 0.5;
        if (v >= 65536.0) return 0;
        q[i] = (uint16_t)v;
        sum += q[i];
    }
    return sum <= 65536u + 32u;
}

static int fixed_taps_of(const tsk_op *op, int c, ts_type t, fixed_taps *ft)
{
    float bv = op->u.sep.border_value;
    if (t != TS_U8 || !tsk_cpu_sep_fused(op, c, t)) return 0;
    if (op->u.sep.border == TS_BORDER_CONSTANT && !(bv >= 0.0f && bv <= 255.0f && bv == (float)(int)bv)) return 0;
    if (!fixed_quantise(op->u.sep.kx, op->u.sep.nx, ft->qx) || !fixed_quantise(op->u.sep.ky, op->u.sep.ny, ft->qy))
        return 0;
    ft->corr = (uint16_t)((op->u.sep.nx / 2 + op->u.sep.ny / 2 + 2) / 2);
    ft->border = op->u.sep.border == TS_BORDER_CONSTANT ? (uint16_t)((int)bv << 7) : 0;
    return 1;
}

/* o[i] = p[i] 2^7 for i < n. */
static CPU_HOT void fixed_load_row(const unsigned char *restrict p, uint16_t *restrict o, size_t n)
{
    for (size_t i = 0; i < n; i++) o[i] = (uint16_t)(p[i] << 7);
}

/* Extended row of image row gy as extend_row makes it, the values x 2^7. */
static void extend_row_fixed(const band *b, int gy, uint16_t border, uint16_t *ext)
{
    const ts_view *s = b->src;
    int c = b->c, by = ts_border_map(gy, s->full_h, (int)b->border);
    if (by < 0) {
        for (size_t i = 0; i < (size_t)b->n_ext * c; i++) ext[i] = border;
        return;
    }
    int lo = b->gx0 < 0 ? -b->gx0 : 0;
    int hi = s->full_w - b->gx0 < b->n_ext ? s->full_w - b->gx0 : b->n_ext;
    if (hi > lo) fixed_load_row(cpu_px(s, b->gx0 + lo - s->x0, by - s->y0), ext + (size_t)lo * c, (size_t)(hi - lo) * c);
    for (int k = 0; k < b->n_ext; k++) {
        if (k == lo && hi > lo) k = hi;
        if (k >= b->n_ext) break;
        int bx = ts_border_map(b->gx0 + k, s->full_w, (int)b->border);
        for (int ch = 0; ch < c; ch++)
            ext[(size_t)k * c + ch] = bx < 0 ? border : (uint16_t)((int)ref_load(s, bx - s->x0, by - s->y0, ch) << 7);
    }
}

static inline uint16_t fixed_mulhi(unsigned u, unsigned q) { return (uint16_t)((u * q) >> 16); }

/* out[j] = mulhi(at[r][j], q[r]) + sum_{i<r} mulhi(at[i][j] + at[nk-1-i][j], q[i]),
 * r = nk / 2, in 16-bit integers: at[i] is the row pass's input shifted by
 * i pixels, or the column pass's i-th ring row. */
static CPU_AVX2 void fixed_pass(const uint16_t *q, int nk, const uint16_t *const *at, uint16_t *restrict out, int n)
{
    int r = nk / 2, j = 0;
    for (; j + 32 <= n; j += 32) {
        const __m256i qc = _mm256_set1_epi16((short)q[r]);
        __m256i a0 = _mm256_mulhi_epu16(_mm256_loadu_si256((const __m256i *)(at[r] + j)), qc);
        __m256i a1 = _mm256_mulhi_epu16(_mm256_loadu_si256((const __m256i *)(at[r] + j + 16)), qc);
        for (int i = 0; i < r; i++) {
            const uint16_t *lo = at[i] + j, *hi = at[nk - 1 - i] + j;
            const __m256i qi = _mm256_set1_epi16((short)q[i]);
            __m256i s0 = _mm256_add_epi16(_mm256_loadu_si256((const __m256i *)lo), _mm256_loadu_si256((const __m256i *)hi));
            __m256i s1 = _mm256_add_epi16(_mm256_loadu_si256((const __m256i *)(lo + 16)),
                                          _mm256_loadu_si256((const __m256i *)(hi + 16)));
            a0 = _mm256_add_epi16(a0, _mm256_mulhi_epu16(s0, qi));
            a1 = _mm256_add_epi16(a1, _mm256_mulhi_epu16(s1, qi));
        }
        _mm256_storeu_si256((__m256i *)(out + j), a0);
        _mm256_storeu_si256((__m256i *)(out + j + 16), a1);
    }
    for (; j < n; j++) {
        unsigned a = fixed_mulhi(at[r][j], q[r]);
        for (int i = 0; i < r; i++) a += fixed_mulhi((unsigned)at[i][j] + at[nk - 1 - i][j], q[i]);
        out[j] = (uint16_t)a;
    }
}

/* fixed_pass with AVX-512: 32 values an instruction, 64 a step. */
static CPU_AVX512 void fixed_pass_512(const uint16_t *q, int nk, const uint16_t *const *at, uint16_t *restrict out,
                                      int n)
{
    int r = nk / 2, j = 0;
    for (; j + 64 <= n; j += 64) {
        const __m512i qc = _mm512_set1_epi16((short)q[r]);
        __m512i a0 = _mm512_mulhi_epu16(_mm512_loadu_si512(at[r] + j), qc);
        __m512i a1 = _mm512_mulhi_epu16(_mm512_loadu_si512(at[r] + j + 32), qc);
        for (int i = 0; i < r; i++) {
            const uint16_t *lo = at[i] + j, *hi = at[nk - 1 - i] + j;
            const __m512i qi = _mm512_set1_epi16((short)q[i]);
            __m512i s0 = _mm512_add_epi16(_mm512_loadu_si512(lo), _mm512_loadu_si512(hi));
            __m512i s1 = _mm512_add_epi16(_mm512_loadu_si512(lo + 32), _mm512_loadu_si512(hi + 32));
            a0 = _mm512_add_epi16(a0, _mm512_mulhi_epu16(s0, qi));
            a1 = _mm512_add_epi16(a1, _mm512_mulhi_epu16(s1, qi));
        }
        _mm512_storeu_si512(out + j, a0);
        _mm512_storeu_si512(out + j + 32, a1);
    }
    if (j < n) {
        const uint16_t *rest[TSK_MAX_SEP_TAPS];
        for (int i = 0; i < nk; i++) rest[i] = at[i] + j;
        fixed_pass(q, nk, rest, out + j, n - j);
    }
}

/* Bytes (v + 64 + corr) >> 7, saturated. */
static CPU_AVX2 void fixed_store_u8(const uint16_t *v, uint16_t corr, unsigned char *p, int n)
{
    const __m256i add = _mm256_set1_epi16((short)(64 + corr));
    int j = 0;
    for (; j + 32 <= n; j += 32) {
        __m256i a = _mm256_srli_epi16(_mm256_add_epi16(_mm256_loadu_si256((const __m256i *)(v + j)), add), 7);
        __m256i b = _mm256_srli_epi16(_mm256_add_epi16(_mm256_loadu_si256((const __m256i *)(v + j + 16)), add), 7);
        /* packus works within 128-bit lanes: the permute puts the quarters in order */
        _mm256_storeu_si256((__m256i *)(p + j), _mm256_permute4x64_epi64(_mm256_packus_epi16(a, b), 0xD8));
    }
    for (; j < n; j++) {
        unsigned x = ((unsigned)v[j] + 64 + corr) >> 7;
        p[j] = (unsigned char)(x > 255 ? 255 : x);
    }
}

typedef struct fixed_bufs { uint16_t *ext, *ring, *t; uint16_t *rows[TSK_MAX_SEP_TAPS]; } fixed_bufs;

static void sep_band_fixed(const tsk_op *op, const fixed_taps *ft, const band *b, ts_view *dst, fixed_bufs *m)
{
    void (*pass)(const uint16_t *, int, const uint16_t *const *, uint16_t *, int) =
        cpu_has_avx512() ? fixed_pass_512 : fixed_pass;
    int c = b->c, nx = op->u.sep.nx, ny = op->u.sep.ny, ry = (ny - 1) / 2, n = b->bw * c;
    const uint16_t *at[TSK_MAX_SEP_TAPS];
    for (int i = 0; i < nx; i++) at[i] = m->ext + (size_t)i * c;
    /* the k-th source row (image row dst->y0 - ry + k) goes to ring slot k % ny */
    for (int k = 0; k < dst->h + ny - 1; k++) {
        extend_row_fixed(b, dst->y0 - ry + k, ft->border, m->ext);
        pass(ft->qx, nx, at, m->ring + (size_t)(k % ny) * n, n);
        int ly = k - (ny - 1);  /* the output row that now has all its rows */
        if (ly < 0) continue;
        for (int j = 0; j < ny; j++) m->rows[j] = m->ring + (size_t)((ly + j) % ny) * n;
        pass(ft->qy, ny, (const uint16_t *const *)m->rows, m->t, n);
        fixed_store_u8(m->t, ft->corr, cpu_px(dst, b->bx, ly), n);
    }
}

static ts_status conv_sep_fixed(const tsk_op *op, const fixed_taps *ft, const ts_view *src, ts_view *dst, ts_err *err)
{
    int c = dst->c, nx = op->u.sep.nx, ny = op->u.sep.ny;
    int bw = band_width(dst->w, ny, c, (int)sizeof(uint16_t));
    size_t n = (size_t)bw * c, n_ext = (size_t)(bw + nx - 1) * c;
    fixed_bufs m;
    uint16_t *mem = malloc(sizeof(uint16_t) * (n_ext + n * (size_t)ny + n));
    if (!mem) return ts_err_set(err, TS_E_NOMEM, "separable convolution: no memory for a band of %d pixels", bw);
    m.ext = mem;
    m.ring = m.ext + n_ext;
    m.t = m.ring + n * (size_t)ny;
    for (int bx = 0; bx < dst->w; bx += bw) {
        band b = { src, c, bx, bw < dst->w - bx ? bw : dst->w - bx, 0, 0, op->u.sep.border, op->u.sep.border_value };
        b.gx0 = dst->x0 + bx - (nx - 1) / 2;
        b.n_ext = b.bw + nx - 1;
        sep_band_fixed(op, ft, &b, dst, &m);
    }
    free(mem);
    return TS_OK;
}
#endif

int tsk_cpu_sep_fixed(const tsk_op *op, int c, ts_type t)
{
#if CPU_X86
    fixed_taps ft;
    return fixed_taps_of(op, c, t, &ft);
#else
    (void)op; (void)c; (void)t;
    return 0;
#endif
}

ts_status tsk_cpu_conv_sep(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
#if CPU_X86
    fixed_taps ft;
    if (fixed_taps_of(op, dst->c, dst->type, &ft)) return conv_sep_fixed(op, &ft, src, dst, err);
#endif
    int c = dst->c, nx = op->u.sep.nx, ny = op->u.sep.ny;
    int bw = band_width(dst->w, ny, c, (int)sizeof(float));
    size_t n = (size_t)bw * c, n_ext = (size_t)(bw + nx - 1) * c;
    sep_bufs m;
    float *mem = malloc(sizeof(float) * (n_ext + n * (size_t)ny + 3 * n));
    if (!mem) return ts_err_set(err, TS_E_NOMEM, "separable convolution: no memory for a band of %d pixels", bw);
    m.ext = mem;
    m.ring = m.ext + n_ext;
    m.t = m.ring + n * (size_t)ny;
    m.centre = m.t + n;
    m.out = m.centre + n;
    for (int bx = 0; bx < dst->w; bx += bw) {
        band b = { src, c, bx, bw < dst->w - bx ? bw : dst->w - bx, 0, 0, op->u.sep.border, op->u.sep.border_value };
        b.gx0 = dst->x0 + bx - (nx - 1) / 2;
        b.n_ext = b.bw + nx - 1;
        sep_band(op, &b, dst, &m);
    }
    free(mem);
    return TS_OK;
}

/* ---------------------------------------------------------------- 2-D */

/* The taps of one kernel row that matter: all of them for F32 (0 * inf is
 * NaN), the nonzero ones for integer images, where a skipped 0 * p could
 * only change the sign of a zero sum, which rounds to 0 anyway. */
typedef struct tap_row { int n; int at[TSK_MAX_2D]; float k[TSK_MAX_2D]; } tap_row;

static void pick_taps(const float *k, int kw, int all, tap_row *r)
{
    r->n = 0;
    for (int i = 0; i < kw; i++)
        if (all || k[i] != 0.0f) { r->at[r->n] = i; r->k[r->n] = k[i]; r->n++; }
}

/* s[j] = sum over kernel rows r (going up) of sum over the row's taps t
 * of k * rows[r][j + at*c], for j < n: all the kernel in one pass, BLOCK
 * sums held in registers across every tap, as taps_pass does. */
static CPU_HOT void kernel_pass(const tap_row *taps, int kh, int c, const float *const *rows, float *restrict s, int n)
{
    int j0 = 0;
    for (; j0 + BLOCK <= n; j0 += BLOCK) {
        float a[BLOCK];
        for (int j = 0; j < BLOCK; j++) a[j] = 0.0f;
        for (int r = 0; r < kh; r++)
            for (int t = 0; t < taps[r].n; t++) {
                const float *restrict e = rows[r] + j0 + (size_t)taps[r].at[t] * c;
                float kt = taps[r].k[t];
                for (int j = 0; j < BLOCK; j++) a[j] += kt * e[j];
            }
        for (int j = 0; j < BLOCK; j++) s[j0 + j] = a[j];
    }
    for (; j0 < n; j0++) {
        float a = 0.0f;
        for (int r = 0; r < kh; r++)
            for (int t = 0; t < taps[r].n; t++) a += taps[r].k[t] * rows[r][j0 + (size_t)taps[r].at[t] * c];
        s[j0] = a;
    }
}

/* The mode: LINEAR bias*max + s, ABS |s|, MAG sqrt(s*s + s2*s2). */
static CPU_HOT void conv2d_mode(tsk_conv_mode mode, float bias_max, const float *restrict s,
                                const float *restrict s2, float *restrict out, int n)
{
    if (mode == TSK_CONV_LINEAR)
        for (int j = 0; j < n; j++) out[j] = bias_max + s[j];
    else if (mode == TSK_CONV_ABS)
        for (int j = 0; j < n; j++) out[j] = fabsf(s[j]);
    else
        for (int j = 0; j < n; j++) out[j] = sqrtf(s[j] * s[j] + s2[j] * s2[j]);
}

typedef struct c2d_bufs { float *ring, *s, *s2, *out; tap_row taps[TSK_MAX_2D], taps2[TSK_MAX_2D]; } c2d_bufs;

static void conv2d_band(const tsk_op *op, const band *b, ts_view *dst, c2d_bufs *m)
{
    int c = b->c, kw = op->u.conv2d.kw, kh = op->u.conv2d.kh, n = b->bw * c;
    int mag = op->u.conv2d.mode == TSK_CONV_MAG, rx = kw / 2, ry = kh / 2;
    size_t n_ext = (size_t)b->n_ext * c;
    float bias_max = op->u.conv2d.bias * ref_type_max(dst->type);
    for (int k = 0; k < dst->h + kh - 1; k++) {
        extend_row(b, dst->y0 - ry + k, m->ring + (size_t)(k % kh) * n_ext);
        int ly = k - (kh - 1);
        if (ly < 0) continue;
        const float *rows[TSK_MAX_2D];
        for (int j = 0; j < kh; j++) rows[j] = m->ring + (size_t)((ly + j) % kh) * n_ext;
        kernel_pass(m->taps, kh, c, rows, m->s, n);
        if (mag) kernel_pass(m->taps2, kh, c, rows, m->s2, n);
        conv2d_mode(op->u.conv2d.mode, bias_max, m->s, m->s2, m->out, n);
        if (op->alpha_passthrough && has_alpha(c)) /* the centre: row ly + ry, column rx of the extension */
            keep_alpha(c, m->ring + (size_t)((ly + ry) % kh) * n_ext + (size_t)rx * c, m->out, b->bw);
        cpu_store_row(cpu_px(dst, b->bx, ly), dst->type, m->out, (size_t)n);
    }
}

ts_status tsk_cpu_conv2d(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    int c = dst->c, kw = op->u.conv2d.kw, kh = op->u.conv2d.kh, all = dst->type == TS_F32;
    int bw = band_width(dst->w, kh, c, (int)sizeof(float));
    size_t n = (size_t)bw * c, n_ext = (size_t)(bw + kw - 1) * c;
    c2d_bufs *m = malloc(sizeof *m);
    float *mem = malloc(sizeof(float) * (n_ext * (size_t)kh + 3 * n));
    if (!m || !mem) {
        free(m);
        free(mem);
        return ts_err_set(err, TS_E_NOMEM, "2-D convolution: no memory for a band of %d pixels", bw);
    }
    m->ring = mem;
    m->s = m->ring + n_ext * (size_t)kh;
    m->s2 = m->s + n;
    m->out = m->s2 + n;
    for (int j = 0; j < kh; j++) {
        pick_taps(op->u.conv2d.k + j * kw, kw, all, &m->taps[j]);
        pick_taps(op->u.conv2d.k2 + j * kw, kw, all, &m->taps2[j]);
    }
    for (int bx = 0; bx < dst->w; bx += bw) {
        band b = { src, c, bx, bw < dst->w - bx ? bw : dst->w - bx, 0, 0, op->u.conv2d.border,
                   op->u.conv2d.border_value };
        b.gx0 = dst->x0 + bx - kw / 2;
        b.n_ext = b.bw + kw - 1;
        conv2d_band(op, &b, dst, m);
    }
    free(mem);
    free(m);
    return TS_OK;
}

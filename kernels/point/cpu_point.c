/* cpu_point.c - the fast per-pixel ops: colour matrix, premultiply and
 * unpremultiply, a row at a time. Each row is converted to float once,
 * the reference's per-pixel formula runs over it in the same order (the
 * loops are specialised by channel count so that they vectorise), and the
 * row is rounded back. Ops that leave every value as it is (no alpha for
 * premultiply, an identity matrix on integers) copy bytes. The matrix on
 * RGB8 and RGBA8 has AVX2 and AVX-512 versions that go from bytes to bytes
 * 8 and 16 pixels at a time, with the same float operations. */
#include "cpu_internal.h"

#include <math.h>
#include <stdlib.h>

/* Rows of floats reused across the rows of one call. */
typedef struct point_rows { float *in, *out; } point_rows;

/* ((m0*R + m1*G) + m2*B) + m3*max, alpha (c = 4) copied; as matrix_pixel
 * in ref_point.c, over n pixels. */
static CPU_HOT void matrix_rgb(const float *m, int c, float maxv, const float *in, float *out, int n)
{
    float b0 = m[3] * maxv, b1 = m[7] * maxv, b2 = m[11] * maxv;
    if (c == 3) {
        for (int x = 0; x < n; x++) {
            const float *p = in + 3 * x;
            float *q = out + 3 * x;
            q[0] = m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + b0;
            q[1] = m[4] * p[0] + m[5] * p[1] + m[6] * p[2] + b1;
            q[2] = m[8] * p[0] + m[9] * p[1] + m[10] * p[2] + b2;
        }
    } else {
        for (int x = 0; x < n; x++) {
            const float *p = in + 4 * x;
            float *q = out + 4 * x;
            q[0] = m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + b0;
            q[1] = m[4] * p[0] + m[5] * p[1] + m[6] * p[2] + b1;
            q[2] = m[8] * p[0] + m[9] * p[1] + m[10] * p[2] + b2;
            q[3] = p[3];
        }
    }
}

/* The same for 8-bit RGB(A) in one pass, byte to byte: the values go to
 * float and back in registers, not through rows in memory. */
static CPU_HOT void matrix_rgb_u8(const float *m, int c, const unsigned char *restrict in,
                                  unsigned char *restrict out, int n)
{
    float b0 = m[3] * 255.0f, b1 = m[7] * 255.0f, b2 = m[11] * 255.0f;
    if (c == 3) {
        for (int x = 0; x < n; x++) {
            float r = in[3 * x], g = in[3 * x + 1], b = in[3 * x + 2];
            out[3 * x] = (unsigned char)cpu_round_sat(m[0] * r + m[1] * g + m[2] * b + b0, 255.0f);
            out[3 * x + 1] = (unsigned char)cpu_round_sat(m[4] * r + m[5] * g + m[6] * b + b1, 255.0f);
            out[3 * x + 2] = (unsigned char)cpu_round_sat(m[8] * r + m[9] * g + m[10] * b + b2, 255.0f);
        }
    } else {
        for (int x = 0; x < n; x++) {
            float r = in[4 * x], g = in[4 * x + 1], b = in[4 * x + 2];
            out[4 * x] = (unsigned char)cpu_round_sat(m[0] * r + m[1] * g + m[2] * b + b0, 255.0f);
            out[4 * x + 1] = (unsigned char)cpu_round_sat(m[4] * r + m[5] * g + m[6] * b + b1, 255.0f);
            out[4 * x + 2] = (unsigned char)cpu_round_sat(m[8] * r + m[9] * g + m[10] * b + b2, 255.0f);
            out[4 * x + 3] = in[4 * x + 3];
        }
    }
}

#if CPU_X86
/* The same with AVX2, 8 pixels at a time: the bytes of each channel are
 * spread to 32-bit lanes by a byte shuffle and converted to float, the
 * reference's products and sums run in its order (no fused multiply-add),
 * and then cpu_round_sat's steps: max 0, min 255, + 0.5, truncate. The
 * same float operations as the scalar loop, so the same bytes.
 *
 * When no sum can reach 2^30 in magnitude (every matrix a user is likely
 * to write: the bound is checked per op), the max and min are left out
 * and the truncated integers saturate as they are packed to bytes
 * instead: below 0 they give 0, as the max would (x in (-0.5, 0] adds up
 * to at most 0.5 and truncates to 0), at or above 255 they give 255, and
 * in between nothing differs. Finite inputs and such a bound leave no NaN
 * or infinity. */
enum { Z = -128 }; /* a byte shuffle's index for a zero byte */

typedef struct mat8 { float k[9], bias[3], maxv; int bounded; } mat8;

static void mat8_init(mat8 *q, const float *m, float maxv)
{
    float most = 0.0f;
    for (int i = 0; i < 3; i++) {
        float b = m[4 * i + 3] * maxv, sum = fabsf(b);
        for (int j = 0; j < 3; j++) {
            q->k[3 * i + j] = m[4 * i + j];
            sum += fabsf(m[4 * i + j]) * maxv;
        }
        q->bias[i] = b;
        most = sum > most || sum != sum ? sum : most; /* NaN stays */
    }
    q->maxv = maxv;
    q->bounded = most < 1073741824.0f; /* false for NaN and infinity */
}

/* mat8 in registers. */
typedef struct mat8v { __m256 k[9], bias[3], top; int bounded; } mat8v;

static CPU_AVX2 inline mat8v mat8_load(const mat8 *q)
{
    mat8v v;
    for (int i = 0; i < 9; i++) v.k[i] = _mm256_set1_ps(q->k[i]);
    for (int i = 0; i < 3; i++) v.bias[i] = _mm256_set1_ps(q->bias[i]);
    v.top = _mm256_set1_ps(q->maxv);
    v.bounded = q->bounded;
    return v;
}

/* The three output channels of 8 pixels as rounded 32-bit integers (not
 * yet saturated when q->bounded). */
static CPU_AVX2 inline void mat8_run(const mat8v *q, __m256i r8, __m256i g8, __m256i b8, __m256i *out)
{
    const __m256 zero = _mm256_setzero_ps(), half = _mm256_set1_ps(0.5f);
    __m256 r = _mm256_cvtepi32_ps(r8), g = _mm256_cvtepi32_ps(g8), b = _mm256_cvtepi32_ps(b8);
    for (int i = 0; i < 3; i++) {
        __m256 x = _mm256_add_ps(_mm256_mul_ps(q->k[3 * i], r), _mm256_mul_ps(q->k[3 * i + 1], g));
        x = _mm256_add_ps(x, _mm256_mul_ps(q->k[3 * i + 2], b));
        x = _mm256_add_ps(x, q->bias[i]);
        /* max returns its second operand for NaN: 0, as cpu_round_sat */
        if (!q->bounded) x = _mm256_min_ps(_mm256_max_ps(x, zero), q->top);
        out[i] = _mm256_cvttps_epi32(_mm256_add_ps(x, half));
    }
}

/* n RGB8 pixels. Lane half 0 holds pixels 0-3 (bytes 0..11 of the
 * group), half 1 pixels 4-7 loaded from byte 8, so at offset 4 in it:
 * 24 bytes read, none outside the group. */
static CPU_AVX2 void matrix_rgb8_avx2(const mat8 *mq, const float *m, const unsigned char *restrict in,
                                      unsigned char *restrict out, int n)
{
    const mat8v q = mat8_load(mq);
    /* -128 (high bit set: a zero byte) stays negative as 1 and 2 are added */
    const __m256i sel_r = _mm256_setr_epi8(0, Z, Z, Z, 3, Z, Z, Z, 6, Z, Z, Z, 9, Z, Z, Z,
                                           4, Z, Z, Z, 7, Z, Z, Z, 10, Z, Z, Z, 13, Z, Z, Z);
    const __m256i one = _mm256_set1_epi8(1);
    const __m256i sel_g = _mm256_add_epi8(sel_r, one), sel_b = _mm256_add_epi8(sel_g, one);
    /* after the packs each half holds R0-3 G0-3 B0-3 B0-3 of its pixels:
     * interleave them into its low 12 bytes, then join the halves' 12 */
    const __m256i weave = _mm256_setr_epi8(0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, -1, -1, -1, -1,
                                           0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 3, 7);
    int x = 0;
    for (; x + 8 <= n; x += 8) {
        const unsigned char *p = in + 3 * (size_t)x;
        unsigned char *d = out + 3 * (size_t)x;
        __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)p)),
                                            _mm_loadu_si128((const __m128i *)(p + 8)), 1);
        __m256i o[3];
        mat8_run(&q, _mm256_shuffle_epi8(v, sel_r), _mm256_shuffle_epi8(v, sel_g), _mm256_shuffle_epi8(v, sel_b), o);
        __m256i w = _mm256_packus_epi16(_mm256_packs_epi32(o[0], o[1]), _mm256_packs_epi32(o[2], o[2]));
        w = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(w, weave), join);
        if (x + 11 <= n) {
            /* 32 bytes: the last 8 are the next group's, written again next */
            _mm256_storeu_si256((__m256i *)d, w);
        } else {
            _mm_storeu_si128((__m128i *)d, _mm256_castsi256_si128(w));
            _mm_storel_epi64((__m128i *)(d + 16), _mm256_extracti128_si256(w, 1));
        }
    }
    if (x < n) matrix_rgb_u8(m, 3, in + 3 * (size_t)x, out + 3 * (size_t)x, n - x);
}

/* n RGBA8 pixels, alpha copied. */
static CPU_AVX2 void matrix_rgba8_avx2(const mat8 *mq, const float *m, const unsigned char *restrict in,
                                       unsigned char *restrict out, int n)
{
    const mat8v q = mat8_load(mq);
    const __m256i sel_r = _mm256_setr_epi8(0, Z, Z, Z, 4, Z, Z, Z, 8, Z, Z, Z, 12, Z, Z, Z,
                                           0, Z, Z, Z, 4, Z, Z, Z, 8, Z, Z, Z, 12, Z, Z, Z);
    const __m256i one = _mm256_set1_epi8(1);
    const __m256i sel_g = _mm256_add_epi8(sel_r, one), sel_b = _mm256_add_epi8(sel_g, one);
    /* after the packs each half holds R0-3 G0-3 B0-3 A0-3 */
    const __m256i weave = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
                                           0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    int x = 0;
    for (; x + 8 <= n; x += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(in + 4 * (size_t)x)), o[3];
        mat8_run(&q, _mm256_shuffle_epi8(v, sel_r), _mm256_shuffle_epi8(v, sel_g), _mm256_shuffle_epi8(v, sel_b), o);
        __m256i w = _mm256_packus_epi16(_mm256_packs_epi32(o[0], o[1]),
                                        _mm256_packs_epi32(o[2], _mm256_srli_epi32(v, 24)));
        _mm256_storeu_si256((__m256i *)(out + 4 * (size_t)x), _mm256_shuffle_epi8(w, weave));
    }
    if (x < n) matrix_rgb_u8(m, 4, in + 4 * (size_t)x, out + 4 * (size_t)x, n - x);
}

/* The same with AVX-512, 16 pixels at a time: the float operations of
 * mat8_run in the same order, the results saturated as integers (max 0,
 * min 255: what the packs do above) when q->bounded. Each pixel's bytes
 * sit in one 32-bit lane, spread there and gathered back by a byte
 * permute (VBMI); the loads and stores of RGB8 are masked to its 48
 * bytes. */
typedef struct mat16v {
    __m512 k[9], bias[3], top;
    int bounded;
} mat16v;

static CPU_AVX512 inline mat16v mat16_load(const mat8 *q)
{
    mat16v v;
    for (int i = 0; i < 9; i++) v.k[i] = _mm512_set1_ps(q->k[i]);
    for (int i = 0; i < 3; i++) v.bias[i] = _mm512_set1_ps(q->bias[i]);
    v.top = _mm512_set1_ps(q->maxv);
    v.bounded = q->bounded;
    return v;
}

static CPU_AVX512 inline __m512i mat16_run(const mat16v *q, __m512i v)
{
    const __m512 zero = _mm512_setzero_ps(), half = _mm512_set1_ps(0.5f);
    const __m512i ff = _mm512_set1_epi32(0xff), izero = _mm512_setzero_si512();
    __m512 r = _mm512_cvtepi32_ps(_mm512_and_si512(v, ff));
    __m512 g = _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(v, 8), ff));
    __m512 b = _mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(v, 16), ff));
    __m512i acc = _mm512_and_si512(v, _mm512_set1_epi32((int)0xff000000u));   /* alpha, or 0 */
    for (int i = 0; i < 3; i++) {
        __m512 x = _mm512_add_ps(_mm512_mul_ps(q->k[3 * i], r), _mm512_mul_ps(q->k[3 * i + 1], g));
        x = _mm512_add_ps(x, _mm512_mul_ps(q->k[3 * i + 2], b));
        x = _mm512_add_ps(x, q->bias[i]);
        if (!q->bounded) x = _mm512_min_ps(_mm512_max_ps(x, zero), q->top);
        __m512i o = _mm512_cvttps_epi32(_mm512_add_ps(x, half));
        if (q->bounded) o = _mm512_min_epi32(_mm512_max_epi32(o, izero), ff);
        acc = _mm512_or_si512(acc, _mm512_slli_epi32(o, 8 * i));
    }
    return acc;
}

/* Byte permutes for RGB8: pixel p's three bytes (3p..3p+2) into lane p
 * (4p..4p+2, the fourth zeroed by the mask), and back. */
static const unsigned char rgb_spread_at[64] = {
    0, 1, 2, 0, 3, 4, 5, 0, 6, 7, 8, 0, 9, 10, 11, 0,
    12, 13, 14, 0, 15, 16, 17, 0, 18, 19, 20, 0, 21, 22, 23, 0,
    24, 25, 26, 0, 27, 28, 29, 0, 30, 31, 32, 0, 33, 34, 35, 0,
    36, 37, 38, 0, 39, 40, 41, 0, 42, 43, 44, 0, 45, 46, 47, 0};
static const unsigned char rgb_pack_at[64] = {
    0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, 16, 17, 18, 20,
    21, 22, 24, 25, 26, 28, 29, 30, 32, 33, 34, 36, 37, 38, 40, 41,
    42, 44, 45, 46, 48, 49, 50, 52, 53, 54, 56, 57, 58, 60, 61, 62,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};

static CPU_AVX512 void matrix_rgb8_avx512(const mat8 *mq, const float *m, const unsigned char *restrict in,
                                          unsigned char *restrict out, int n)
{
    const mat16v q = mat16_load(mq);
    const __m512i spread = _mm512_loadu_si512(rgb_spread_at), pack = _mm512_loadu_si512(rgb_pack_at);
    const __mmask64 rgb = 0x7777777777777777ull, bytes48 = (1ull << 48) - 1;
    int x = 0;
    /* whole 64-byte loads and stores while they stay inside the row: a
     * step's 16 bytes past its 48 are the next step's to write, and masked
     * stores are microcoded on some cores (AMD's Zen 4) */
    for (; x + 22 <= n; x += 16) {
        __m512i w = mat16_run(&q, _mm512_maskz_permutexvar_epi8(rgb, spread, _mm512_loadu_si512(in + 3 * (size_t)x)));
        _mm512_storeu_si512(out + 3 * (size_t)x, _mm512_permutexvar_epi8(pack, w));
    }
    for (; x + 16 <= n; x += 16) {
        __m512i v = _mm512_maskz_loadu_epi8(bytes48, in + 3 * (size_t)x);
        __m512i w = mat16_run(&q, _mm512_maskz_permutexvar_epi8(rgb, spread, v));
        _mm512_mask_storeu_epi8(out + 3 * (size_t)x, bytes48, _mm512_permutexvar_epi8(pack, w));
    }
    if (x < n) matrix_rgb8_avx2(mq, m, in + 3 * (size_t)x, out + 3 * (size_t)x, n - x);
}

static CPU_AVX512 void matrix_rgba8_avx512(const mat8 *mq, const float *m, const unsigned char *restrict in,
                                           unsigned char *restrict out, int n)
{
    const mat16v q = mat16_load(mq);
    int x = 0;
    for (; x + 16 <= n; x += 16)
        _mm512_storeu_si512(out + 4 * (size_t)x, mat16_run(&q, _mm512_loadu_si512(in + 4 * (size_t)x)));
    if (x < n) matrix_rgba8_avx2(mq, m, in + 4 * (size_t)x, out + 4 * (size_t)x, n - x);
}
#endif

/* RGB on integers as a flat loop over the values of a row, free of the
 * pixel structure the vectoriser handles badly: value j (channel j % 3)
 * is k0[j]*f[j-2] + k1[j]*f[j-1] + k2[j]*f[j] + k3[j]*f[j+1] + k4[j]*f[j+2]
 * + bias[j], the coefficients repeating every 3 values and zero on the
 * taps outside j's pixel. The nonzero terms come in the reference's order
 * (R, G, B); a zero term adds an exact 0 (the values are finite) or at
 * worst turns a -0 into +0, and both round to 0: integer results equal
 * the reference's. PERIOD values (a multiple of 3 and of the vector
 * width) share one set of coefficient vectors. */
enum { PERIOD = 48, FLAT_CHUNK = 20 * PERIOD };

typedef struct flat3 { float k[5][PERIOD], bias[PERIOD]; } flat3;

static void flat3_init(flat3 *f, const float *m, float maxv)
{
    for (int j = 0; j < PERIOD; j++) {
        int ch = j % 3;
        for (int t = 0; t < 5; t++) {
            int from = ch + t - 2; /* the channel of j's pixel that tap t reads */
            f->k[t][j] = from >= 0 && from < 3 ? m[4 * ch + from] : 0.0f;
        }
        f->bias[j] = m[4 * ch + 3] * maxv;
    }
}

/* out[j] for j < n, n a multiple of PERIOD; in[-2] and in[n+1] readable. */
static CPU_HOT void flat3_run(const flat3 *restrict f, const float *restrict in, float *restrict out, int n)
{
    for (int j0 = 0; j0 < n; j0 += PERIOD) {
        const float *p = in + j0;
        float *o = out + j0;
        for (int j = 0; j < PERIOD; j++)
            o[j] = f->k[0][j] * p[j - 2] + f->k[1][j] * p[j - 1] + f->k[2][j] * p[j] + f->k[3][j] * p[j + 1] +
                   f->k[4][j] * p[j + 2] + f->bias[j];
    }
}

/* One row of n values (3 per pixel) of integer type t. buf holds
 * FLAT_CHUNK + 4 floats, res FLAT_CHUNK. */
static void flat3_row(const flat3 *f, const float *m, float maxv, const unsigned char *in, unsigned char *out,
                      ts_type t, size_t n, float *buf, float *res)
{
    size_t j0 = 0;
    for (; j0 + PERIOD <= n; j0 += FLAT_CHUNK) {
        size_t len = n - j0 < FLAT_CHUNK ? (n - j0) / PERIOD * PERIOD : FLAT_CHUNK;
        size_t lo = j0 >= 2 ? j0 - 2 : 0, hi = j0 + len + 2 < n ? j0 + len + 2 : n;
        buf[0] = buf[1] = buf[len + 2] = buf[len + 3] = 0.0f;
        cpu_load_row(in + lo * (size_t)t, t, buf + 2 - (j0 - lo), hi - lo);
        flat3_run(f, buf + 2, res, (int)len);
        cpu_store_row(out + j0 * (size_t)t, t, res, len);
        if (len < FLAT_CHUNK) { j0 += len; break; }
    }
    if (j0 >= n) return;
    /* the last pixels, fewer than PERIOD values: the pixel formula */
    size_t rest = n - j0;
    cpu_load_row(in + j0 * (size_t)t, t, buf, rest);
    matrix_rgb(m, 3, maxv, buf, res, (int)(rest / 3));
    cpu_store_row(out + j0 * (size_t)t, t, res, rest);
}

/* Grey: m0*v + m3*max, alpha (c = 2) copied. */
static CPU_HOT void matrix_grey(const float *m, int c, float maxv, const float *in, float *out, int n)
{
    float b = m[3] * maxv;
    if (c == 1) {
        for (int x = 0; x < n; x++) out[x] = m[0] * in[x] + b;
    } else {
        for (int x = 0; x < n; x++) {
            out[2 * x] = m[0] * in[2 * x] + b;
            out[2 * x + 1] = in[2 * x + 1];
        }
    }
}

/* colour * alpha / max (products first), alpha copied; c = 2 or 4. */
static CPU_HOT void premul(int c, float maxv, const float *in, float *out, int n)
{
    for (int x = 0; x < n; x++) {
        const float *p = in + (size_t)c * x;
        float *q = out + (size_t)c * x, a = p[c - 1];
        for (int ch = 0; ch < c - 1; ch++) q[ch] = p[ch] * a / maxv;
        q[c - 1] = a;
    }
}

/* colour * max / alpha, 0 where alpha is 0; c = 2 or 4. The division is
 * by 1 where alpha is 0 and its result thrown away, so no lane divides
 * by zero. */
static CPU_HOT void unpremul(int c, float maxv, const float *in, float *out, int n)
{
    for (int x = 0; x < n; x++) {
        const float *p = in + (size_t)c * x;
        float *q = out + (size_t)c * x, a = p[c - 1];
        float d = a == 0.0f ? 1.0f : a;
        for (int ch = 0; ch < c - 1; ch++) {
            float v = p[ch] * maxv / d;
            q[ch] = a == 0.0f ? 0.0f : v;
        }
        q[c - 1] = a;
    }
}

/* The identity matrix leaves integer values as they are (1*v + 0*... is
 * v exactly for finite v; floats could hold NaN or -0, so not for F32). */
static int is_copy(const tsk_op *op, const ts_view *v)
{
    static const float id[12] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0 };
    if (op->kind != TSK_MATRIX) return v->c == 1 || v->c == 3; /* (un)premultiply without alpha */
    if (v->type == TS_F32) return 0;
    if (v->c <= 2) return op->u.matrix.m[0] == 1.0f && op->u.matrix.m[3] == 0.0f;
    return memcmp(op->u.matrix.m, id, sizeof id) == 0;
}

static void point_row(const tsk_op *op, int c, float maxv, const float *in, float *out, int n)
{
    if (op->kind == TSK_MATRIX && c >= 3) matrix_rgb(op->u.matrix.m, c, maxv, in, out, n);
    else if (op->kind == TSK_MATRIX) matrix_grey(op->u.matrix.m, c, maxv, in, out, n);
    else if (op->kind == TSK_PREMUL) premul(c, maxv, in, out, n);
    else unpremul(c, maxv, in, out, n);
}

ts_status tsk_cpu_point(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    int lx = dst->x0 - src->x0, ly = dst->y0 - src->y0;
    size_t n = (size_t)dst->w * (size_t)dst->c;
    if (is_copy(op, dst)) {
        for (int y = 0; y < dst->h; y++)
            memcpy(cpu_px(dst, 0, y), cpu_px(src, lx, ly + y), n * (size_t)dst->type);
        return TS_OK;
    }
#if CPU_X86
    if (op->kind == TSK_MATRIX && dst->type == TS_U8 && dst->c >= 3 && cpu_has_avx2()) {
        mat8 q;
        mat8_init(&q, op->u.matrix.m, 255.0f);
        if (cpu_has_avx512()) {
            for (int y = 0; y < dst->h; y++) {
                if (dst->c == 3) matrix_rgb8_avx512(&q, op->u.matrix.m, cpu_px(src, lx, ly + y), cpu_px(dst, 0, y), dst->w);
                else matrix_rgba8_avx512(&q, op->u.matrix.m, cpu_px(src, lx, ly + y), cpu_px(dst, 0, y), dst->w);
            }
            return TS_OK;
        }
        for (int y = 0; y < dst->h; y++) {
            if (dst->c == 3) matrix_rgb8_avx2(&q, op->u.matrix.m, cpu_px(src, lx, ly + y), cpu_px(dst, 0, y), dst->w);
            else matrix_rgba8_avx2(&q, op->u.matrix.m, cpu_px(src, lx, ly + y), cpu_px(dst, 0, y), dst->w);
        }
        return TS_OK;
    }
#endif
    if (op->kind == TSK_MATRIX && dst->type != TS_F32 && dst->c == 3) {
        flat3 *f = malloc(sizeof *f);
        float *buf = malloc(sizeof(float) * (2 * FLAT_CHUNK + 4));
        if (f && buf) {
            float maxv = ref_type_max(dst->type);
            flat3_init(f, op->u.matrix.m, maxv);
            for (int y = 0; y < dst->h; y++)
                flat3_row(f, op->u.matrix.m, maxv, cpu_px(src, lx, ly + y), cpu_px(dst, 0, y), dst->type, n, buf,
                          buf + FLAT_CHUNK + 4);
        }
        free(f);
        free(buf);
        return f && buf ? TS_OK : ts_err_set(err, TS_E_NOMEM, "colour matrix: no memory for a row");
    }
    if (op->kind == TSK_MATRIX && dst->type == TS_U8 && dst->c >= 3) {
        for (int y = 0; y < dst->h; y++)
            matrix_rgb_u8(op->u.matrix.m, dst->c, cpu_px(src, lx, ly + y), cpu_px(dst, 0, y), dst->w);
        return TS_OK;
    }
    float *in = malloc(2 * n * sizeof(float));
    if (!in) return ts_err_set(err, TS_E_NOMEM, "%s: no memory for a row of %d pixels", "colour op", dst->w);
    float *out = in + n, maxv = ref_type_max(dst->type);
    for (int y = 0; y < dst->h; y++) {
        cpu_load_row(cpu_px(src, lx, ly + y), src->type, in, n);
        point_row(op, dst->c, maxv, in, out, dst->w);
        cpu_store_row(cpu_px(dst, 0, y), dst->type, out, n);
    }
    free(in);
    return TS_OK;
}

/* cpu.c - the fast CPU ops: checks the views as the reference does, checks
 * that src holds every pixel dst needs (the fast versions read memory
 * directly and cannot notice a missing pixel), then hands the op to its
 * family. Row conversions shared by the families live here too. */
#include "cpu_internal.h"
#include "kind_parts.h"

CPU_HOT void cpu_load_row(const unsigned char *p, ts_type t, float *out, size_t n)
{
    if (t == TS_U8) {
        for (size_t i = 0; i < n; i++) out[i] = (float)p[i];
    } else if (t == TS_U16) {
        const uint16_t *q = (const uint16_t *)(const void *)p;
        for (size_t i = 0; i < n; i++) out[i] = (float)q[i];
    } else {
        memcpy(out, p, n * sizeof(float));
    }
}

#if CPU_X86
/* cpu_round_sat to bytes, 32 values a step: max(x, 0) gives 0 for NaN as
 * the scalar form does (the second operand wins), then the same clamp, +0.5
 * and truncation; the packs keep the values in order after the permute. */
static CPU_AVX2 void store_u8_avx2(unsigned char *p, const float *in, size_t n)
{
    const __m256 zero = _mm256_setzero_ps(), top = _mm256_set1_ps(255.0f), half = _mm256_set1_ps(0.5f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256i q[4];
        for (int k = 0; k < 4; k++) {
            __m256 y = _mm256_min_ps(_mm256_max_ps(_mm256_loadu_ps(in + i + 8 * k), zero), top);
            q[k] = _mm256_cvttps_epi32(_mm256_add_ps(y, half));
        }
        __m256i b = _mm256_packus_epi16(_mm256_packs_epi32(q[0], q[1]), _mm256_packs_epi32(q[2], q[3]));
        _mm256_storeu_si256((__m256i *)(void *)(p + i), _mm256_permutevar8x32_epi32(b, order));
    }
    for (; i < n; i++) p[i] = (unsigned char)cpu_round_sat(in[i], 255.0f);
}
#endif

CPU_HOT void cpu_store_row(unsigned char *p, ts_type t, const float *in, size_t n)
{
#if CPU_X86
    if (t == TS_U8 && n >= 32 && cpu_has_avx2()) {
        store_u8_avx2(p, in, n);
        return;
    }
#endif
    if (t == TS_U8) {
        for (size_t i = 0; i < n; i++) p[i] = (unsigned char)cpu_round_sat(in[i], 255.0f);
    } else if (t == TS_U16) {
        uint16_t *q = (uint16_t *)(void *)p;
        for (size_t i = 0; i < n; i++) q[i] = (uint16_t)cpu_round_sat(in[i], 65535.0f);
    } else {
        memcpy(p, in, n * sizeof(float));
    }
}

static int avx2_allowed = 1;

int tsk_cpu_allow_avx2(int allow)
{
    int was = avx2_allowed;
    avx2_allowed = allow != 0;
    return was;
}

static int avx512_allowed = 1;

int tsk_cpu_allow_avx512(int allow)
{
    int was = avx512_allowed;
    avx512_allowed = allow != 0;
    return was;
}

int cpu_has_avx512(void)
{
#if CPU_X86
    return avx512_allowed && cpu_has_avx2() && __builtin_cpu_supports("avx512f") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vbmi");
#else
    return 0;
#endif
}

int tsk_cpu_avx512(void) { return cpu_has_avx512(); }

int cpu_has_avx2_fma(void)
{
#if CPU_X86
    return cpu_has_avx2() && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

int cpu_has_avx2(void)
{
#if CPU_X86
    return avx2_allowed && __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

static int holds(const ts_view *v, ts_rect r)
{
    if (r.w <= 0 || r.h <= 0) return 1;
    return r.x0 >= v->x0 && r.y0 >= v->y0 && r.x0 + r.w <= v->x0 + v->w && r.y0 + r.h <= v->y0 + v->h;
}

int tsk_cpu_has_fast(const tsk_op *op, const ts_view *src)
{
    const tsk_kind_info *k = tsk_kind_info_of(op->kind);
    (void)src;
    return k && k->cpu && (!k->cpu_has_fast || k->cpu_has_fast(op));
}

ts_status tsk_cpu_apply(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err)
{
    ts_status st = tsk_ref_check(op, src, dst, err);
    if (st != TS_OK) return st;
    if (dst->w == 0 || dst->h == 0) return TS_OK;
    int split = 0;
    st = tsk_apply_split(tsk_cpu_apply, op, src, dst, &split, err);
    if (split) return st;
    ts_rect out = { dst->x0, dst->y0, dst->w, dst->h };
    /* a src short of pixels: the reference names the first one missing */
    if (!tsk_cpu_has_fast(op, src) || !holds(src, tsk_need(op, src->full_w, src->full_h, out)))
        return tsk_ref_apply(op, src, dst, err);
    return tsk_kind_info_of(op->kind)->cpu(op, src, dst, err);  /* has_fast: a known kind */
}

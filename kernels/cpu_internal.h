/* cpu_internal.h - (internal) what the fast CPU ops share: whole rows
 * converted between the pixel type and float, the reference's rounding
 * written so that it vectorises, and the marker for functions compiled
 * once per instruction set. */
#ifndef TSK_CPU_INTERNAL_H
#define TSK_CPU_INTERNAL_H

#include "kind_parts.h"
#include "ref_internal.h"
#include "tsk_cpu.h"

#include <stdint.h>
#include <string.h>

/* Hot loops are compiled for AVX-512, AVX2 and the baseline, and the
 * loader picks one (GCC's function multiversioning, on x86-64 Linux). None
 * fuses multiply-add (these files build with -ffp-contract=off), so the
 * sums round exactly as the reference's. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define CPU_HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CPU_HOT
#endif

/* Loops written with x86 intrinsics: each such function is compiled for
 * its own instruction set (the target attribute) and called only where
 * the CPU has it (cpu_has_avx2), so the files still build for, and run
 * on, the baseline. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define CPU_X86 1
#define CPU_AVX2 __attribute__((target("avx2")))
#define CPU_AVX512 __attribute__((target("avx2,avx512f,avx512bw,avx512vbmi")))
#include <immintrin.h>
#else
#define CPU_X86 0
#endif

/* 1 when the AVX2 versions may run: the CPU has AVX2 and
 * tsk_cpu_allow_avx2 has not turned them off. */
int cpu_has_avx2(void);
/* 1 when the AVX-512 versions may run: cpu_has_avx2, the CPU has AVX-512
 * F, BW and VBMI, and tsk_cpu_allow_avx512 has not turned them off. */
int cpu_has_avx512(void);
/* ... and FMA as well (the fused separable smoothing, cpu_conv.c). */
int cpu_has_avx2_fma(void);

/* ts_round_sat (ts_pixel.h) without branches, same values: NaN and
 * x <= 0 give 0, x >= maxv gives maxv, else (int)(x + 0.5). */
static inline int cpu_round_sat(float x, float maxv)
{
    float y = x > 0.0f ? x : 0.0f;
    y = y < maxv ? y : maxv;
    return (int)(y + 0.5f);
}

/* n values of type t at p as float. */
void cpu_load_row(const unsigned char *p, ts_type t, float *out, size_t n);
/* n float values stored as type t (integers rounded and saturated). */
void cpu_store_row(unsigned char *p, ts_type t, const float *in, size_t n);

/* Pointer to local pixel (lx, ly) of v. */
static inline unsigned char *cpu_px(const ts_view *v, int lx, int ly)
{
    return v->data + (size_t)ly * v->pitch + (size_t)lx * (size_t)v->c * (size_t)v->type;
}

#endif

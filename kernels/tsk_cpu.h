/* tsk_cpu.h - the fast CPU versions of the kernel ops (kernels/cpu.c and
 * each family's kernels/<family>/cpu_*.c).
 *
 * Same contract as tsk_ref_apply (tsk.h): dst region from src, which holds
 * tsk_need(dst). Results equal the reference's bit for bit: the same float
 * maths in the same order, only arranged so that the compiler vectorises
 * it (rows converted to float once, borders materialised outside the inner
 * loops, a row pass and a column pass over a ring of rows, copies without
 * a float round trip) or written with vector intrinsics (the colour matrix
 * on 8-bit RGB(A), transposes and flips). Cases without a fast version run
 * the reference.
 *
 * One exception, where the CPU has AVX2 and FMA: a separable smoothing
 * (centre weight 0, convolution weight 1, symmetric taps in both passes:
 * every gauss and box) on 8- or 16-bit images adds the two taps at the same
 * distance from the centre first and fuses the multiply-adds, for speed
 * (see docs/measurements/kernels.md); on 8-bit images with every tap in
 * [0, 1) it runs both passes in 16-bit fixed point instead (cpu_conv.c
 * derives the bound). Its sums then round differently from the
 * reference's order, and the result is within 1 of the reference's, as
 * the GPU's fused versions are (tsk_cpu_sep_fused says when). */
#ifndef TSK_CPU_H
#define TSK_CPU_H

#include "tsk.h"

#ifdef __cplusplus
extern "C" {
#endif

ts_status tsk_cpu_apply(const tsk_op *op, const ts_view *src, ts_view *dst, ts_err *err);

/* 1 when tsk_cpu_apply has a fast version for op on views like src (0:
 * it runs the reference). For tests and the bench. */
int tsk_cpu_has_fast(const tsk_op *op, const ts_view *src);

/* Whether the fast versions written for AVX2 (point and transpose ops,
 * the byte stores of float rows, the fused smoothing above) may run where the CPU has AVX2: 1, the default, or 0 for the versions
 * every x86-64 CPU runs. For tests, which check both against the
 * reference, and benchmarks; set it while no op is running. Returns the
 * previous setting. (Loops compiled once per instruction set for the
 * loader to pick from are not affected.) */
int tsk_cpu_allow_avx2(int allow);

/* The same for the versions written for AVX-512 (F, BW and VBMI: the colour
 * matrix on 8-bit RGB and RGBA); with them off, the AVX2 ones run where
 * allowed. Returns the previous setting. */
int tsk_cpu_allow_avx512(int allow);
/* 1 when the AVX-512 versions run now (the CPU has them, not turned off). */
int tsk_cpu_avx512(void);

/* 1 when tsk_cpu_apply runs the fused separable smoothing above for op on
 * an image of c channels of type t (within 1 of the reference, not bit
 * for bit); 0 when its result is the reference's exactly. */
int tsk_cpu_sep_fused(const tsk_op *op, int c, ts_type t);

/* 1 when, of those, the 8-bit passes in fixed point run (cpu_conv.c): an
 * 8-bit image, every tap in [0, 1), a constant border of a whole byte. */
int tsk_cpu_sep_fixed(const tsk_op *op, int c, ts_type t);

#ifdef __cplusplus
}
#endif
#endif

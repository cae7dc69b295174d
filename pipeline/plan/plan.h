/* plan.h - (internal) an op chain lowered for one image: the kernel ops to
 * run, the size of every stage, and the regions a tile needs.
 *
 *   stage 0 = the input image, stage k+1 = ops[k] applied to stage k,
 *   stage n = the output image.
 *
 * Region demand (as libvips and Halide do it): to produce rectangle r[n] of
 * the output, op k needs r[k] = tsk_need(ops[k], r[k+1]) of its input. */
#ifndef TS_PLAN_H
#define TS_PLAN_H

#include "tilestream.h"
#include "tsk.h"

typedef struct ts_plan {
    int n;             /* number of kernel ops */
    tsk_op *ops;       /* n ops */
    int *w, *h;        /* n+1 stage sizes */
    int c;             /* channels (unchanged by every op) */
    ts_type type;
} ts_plan;

/* Lower chain for a w x h x c image of the given type. Adjacent matrices and
 * orientations fold into one; smoothing filters on images with alpha get
 * PREMUL before and UNPREMUL after. */
ts_status ts_plan_make(const ts_chain *chain, int w, int h, int c, ts_type type,
                       ts_plan *plan, ts_err *err);
void ts_plan_free(ts_plan *plan);

/* Fuse what one kernel can do in one pass through memory: a MATRIX next to
 * an ORIENT rides in it (tsk.h: the two commute, and the fused op gives the
 * same bytes); then a separable convolution that the GPU can write oriented
 * (tsk_gpu_sep_fuses, for images of device_c channels on the device) takes
 * the ORIENT or MATRIX after it (u.sep.then). A plan-level decision for the
 * GPU engine, where each op is a pass through device memory; the CPU
 * backend keeps its ops apart (its tiles stay in cache, and its matrix has
 * SIMD row functions). Returns how many ops it removed. */
int ts_plan_fuse(ts_plan *plan, int device_c);

/* Fill r[0..n] with the region of every stage that output region out needs
 * (r[n] = out). */
void ts_plan_regions(const ts_plan *plan, ts_rect out, ts_rect *r);

/* Largest input region (r[0]) and largest intermediate region, in pixels,
 * over every tile of tile_w x tile_h: how big the buffers must be. */
void ts_plan_max_regions(const ts_plan *plan, int tile_w, int tile_h,
                         size_t *max_in_px, size_t *max_stage_px);

#endif

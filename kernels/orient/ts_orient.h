/* ts_orient.h - the eight EXIF orientations (TSK_ORIENT; tsk.h gives the
 * table): which input pixel an output pixel reads, the same map as affine
 * coefficients, and which codes swap width and height. One copy for every
 * side: the reference (ref_orient.c), the fast CPU ops (cpu_orient.c), the
 * GPU launcher (orient.cu), the op geometry (geometry.c) and the planner's
 * folding of orientations (pipeline/plan/plan.c). Compiles as C11 and as
 * CUDA C++ (host and device), as ts_pixel.h does. */
#ifndef TS_ORIENT_H
#define TS_ORIENT_H

#include "ts_pixel.h"  /* TS_HD */

/* 1 when code swaps width and height: 5 transpose, 6 rot90 cw,
 * 7 transverse, 8 rot270 cw. */
TS_HD int ts_orient_swaps(int code)
{
    return code >= 5 && code <= 8;
}

/* The input pixel (sx, sy) that output pixel (x, y) reads, W x H being the
 * input size. Returns 1; for a code outside 1..8 returns 0 and sets the
 * identity (sx, sy) = (x, y). */
TS_HD int ts_orient_src(int code, int x, int y, int W, int H, int *sx, int *sy)
{
    switch (code) {
    case 1: *sx = x; *sy = y; return 1;
    case 2: *sx = W - 1 - x; *sy = y; return 1;
    case 3: *sx = W - 1 - x; *sy = H - 1 - y; return 1;
    case 4: *sx = x; *sy = H - 1 - y; return 1;
    case 5: *sx = y; *sy = x; return 1;
    case 6: *sx = y; *sy = H - 1 - x; return 1;
    case 7: *sx = W - 1 - y; *sy = H - 1 - x; return 1;
    case 8: *sx = W - 1 - y; *sy = x; return 1;
    default: *sx = x; *sy = y; return 0;
    }
}

/* The same map as coefficients: sx = m[0]*x + m[1]*y + m[2] and
 * sy = m[3]*x + m[4]*y + m[5], with m[0], m[1], m[3], m[4] in {-1, 0, 1}
 * and m[2], m[5] in {0, W-1} and {0, H-1} (read off ts_orient_src at
 * (0, 0), (1, 0) and (0, 1): the map is affine). Returns ts_orient_src's
 * value. */
TS_HD int ts_orient_affine(int code, int W, int H, int m[6])
{
    int x0, y0, x1, y1, x2, y2;
    int ok = ts_orient_src(code, 0, 0, W, H, &x0, &y0);
    ts_orient_src(code, 1, 0, W, H, &x1, &y1);
    ts_orient_src(code, 0, 1, W, H, &x2, &y2);
    m[0] = x1 - x0;
    m[1] = x2 - x0;
    m[2] = x0;
    m[3] = y1 - y0;
    m[4] = y2 - y0;
    m[5] = y0;
    return ok;
}

#endif /* TS_ORIENT_H */

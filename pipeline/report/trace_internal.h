/* trace_internal.h - (internal, not installed) recording stage events into
 * a ts_trace: what the engines, the batch runner and the benchmarks call.
 * Users create, read and write traces through tilestream.h. */
#ifndef TS_TRACE_INTERNAL_H
#define TS_TRACE_INTERNAL_H

#include "tilestream.h"

#ifdef __cplusplus
extern "C" {
#endif

int ts_trace_lane(ts_trace *t, const char *name);     /* find or add a lane: "decode 0", "stream 1" */
void ts_trace_add(ts_trace *t, int lane, const char *stage, double t0, double t1,
                  uint64_t bytes, int image);         /* times from ts_now(); image index or -1 */
/* image of an event that is a phase of the run (the GPU's start), not a
 * stage of an image: in the trace and the timeline, not in the stage
 * table, the busy time or the span. */
enum { TS_TRACE_PHASE = -2 };

#ifdef __cplusplus
}
#endif
#endif

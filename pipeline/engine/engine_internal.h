/* engine_internal.h - (internal, not installed) the GPU engine's calls that
 * only the library's own modules and the benchmarks use. */
#ifndef TS_ENGINE_INTERNAL_H
#define TS_ENGINE_INTERNAL_H

#include "tilestream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocate outputs with a (copied) instead of the pinned pool; NULL = the
 * pool again. Pageable memory is slower and stops copies overlapping:
 * `bench overlap` uses this to show how much. */
void ts_engine_set_out_allocator(ts_engine *e, const ts_allocator *a);
/* The rates this machine reaches (ts_peak_rates), measured now (a few ms):
 * ts_batch_run does it at the start of a GPU run. */
ts_status ts_engine_peak_rates(ts_engine *e, ts_peak_rates *r, ts_err *err);

#ifdef __cplusplus
}
#endif
#endif

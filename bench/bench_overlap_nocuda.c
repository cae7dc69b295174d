/* bench_overlap_nocuda.c - the overlap benchmark needs a GPU. */
#include "tilestream.h"

ts_status ts_bench_overlap(const ts_bench_opts *opts, char **json, ts_err *err)
{
    (void)opts;
    if (json) *json = NULL;
    return ts_err_set(err, TS_E_DEVICE, "bench overlap: this tilestream was built without CUDA");
}

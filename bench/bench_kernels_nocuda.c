/* bench_kernels_nocuda.c - `tilestream bench kernels` in a build without
 * CUDA: there is nothing to time, and the caller is told why. */
#include "tilestream.h"

ts_status ts_bench_kernels(const ts_bench_opts *opts, char **json, ts_err *err)
{
    (void)opts;
    if (json) *json = NULL;
    return ts_err_set(err, TS_E_DEVICE, "bench kernels: this tilestream was built without CUDA");
}

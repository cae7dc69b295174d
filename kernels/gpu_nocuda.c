/* gpu_nocuda.c - the CUDA side of tsk.h in a build without CUDA: every
 * call says so, and ts_gpu_probe reports no device. */
#include "tsk.h"

int tsk_version_count(tsk_kind kind) { (void)kind; return 0; }
const char *tsk_version_name(tsk_kind kind, int version) { (void)kind; (void)version; return "none"; }
int tsk_default_version(tsk_kind kind) { (void)kind; return 0; }
int tsk_version_fma(tsk_kind kind, int version) { (void)kind; (void)version; return 0; }

int tsk_gpu_sep_fuses(const tsk_op *op, int c, ts_type t) { (void)op; (void)c; (void)t; return 0; }

static ts_status no_cuda(ts_err *err)
{
    return ts_err_set(err, TS_E_DEVICE, "this tilestream was built without CUDA");
}

ts_status tsk_gpu_apply(const tsk_op *op, const ts_view *src, ts_view *dst,
                        const tsk_launch *l, ts_err *err)
{
    (void)op; (void)src; (void)dst; (void)l;
    return no_cuda(err);
}

ts_status tsk_gpu_expand3to4(const ts_view *src3, ts_view *dst4, void *stream, ts_err *err)
{
    (void)src3; (void)dst4; (void)stream;
    return no_cuda(err);
}

ts_status tsk_gpu_pack4to3(const ts_view *src4, ts_view *dst3, void *stream, ts_err *err)
{
    (void)src4; (void)dst3; (void)stream;
    return no_cuda(err);
}

int ts_gpu_built(void) { return 0; }

int ts_gpu_count(ts_err *err)
{
    no_cuda(err);
    return 0;
}

int ts_gpu_name(int device, char *name, size_t name_len, ts_err *err)
{
    (void)device;
    if (name && name_len) name[0] = '\0';
    no_cuda(err);
    return 0;
}

int ts_gpu_probe(char *name, size_t name_len, ts_err *err)
{
    if (name && name_len) name[0] = '\0';
    no_cuda(err);
    return 0;
}

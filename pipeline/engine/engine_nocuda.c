/* engine_nocuda.c - the GPU engine in a build without CUDA: creating one
 * says why it cannot be, so callers fall back to the CPU backend. */
#include "engine_internal.h"
#include "tilestream.h"

#include <string.h>

static ts_status no_cuda(ts_err *err)
{
    return ts_err_set(err, TS_E_DEVICE, "GPU engine: this tilestream was built without CUDA");
}

ts_status ts_engine_create(const ts_engine_opts *opts, ts_engine **out, ts_err *err)
{
    (void)opts;
    *out = NULL;
    return no_cuda(err);
}

void ts_engine_destroy(ts_engine *e) { (void)e; }

void ts_engine_attach_trace(ts_engine *e, ts_trace *t) { (void)e; (void)t; }

/* No pool: a zeroed allocator means malloc and free. */
ts_allocator ts_engine_allocator(ts_engine *e)
{
    ts_allocator a;
    (void)e;
    memset(&a, 0, sizeof a);
    return a;
}

ts_allocator ts_engine_pinned_allocator(ts_engine *e) { return ts_engine_allocator(e); }

ts_allocator ts_engine_pinnable_allocator(void) { return (ts_allocator){ 0 }; }

int ts_engine_pin_in_place(ts_image *img)
{
    (void)img;
    return 0;
}

size_t ts_engine_pinned_bytes(ts_engine *e)
{
    (void)e;
    return 0;
}

void ts_engine_set_out_allocator(ts_engine *e, const ts_allocator *a) { (void)e; (void)a; }

ts_status ts_engine_submit(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out,
                           void *tag, int image, ts_err *err)
{
    (void)e; (void)chain; (void)in; (void)tag; (void)image;
    if (out) memset(out, 0, sizeof *out);
    return no_cuda(err);
}

ts_allocator ts_engine_device_allocator(ts_engine *e) { return ts_engine_allocator(e); }

ts_status ts_engine_submit_to(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out,
                              const ts_allocator *out_alloc, void *tag, int image, ts_err *err)
{
    (void)out_alloc;
    return ts_engine_submit(e, chain, in, out, tag, image, err);
}

ts_status ts_engine_image_to_host(ts_engine *e, ts_image *img, ts_err *err)
{
    (void)e; (void)img; (void)err;
    return TS_OK;
}

int ts_engine_collect(ts_engine *e, void **tag, ts_status *status, ts_err *err)
{
    (void)e; (void)tag; (void)status; (void)err;
    return 0;
}

ts_status ts_gpu_run(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out, ts_err *err)
{
    (void)e; (void)chain; (void)in;
    if (out) memset(out, 0, sizeof *out);
    return no_cuda(err);
}

ts_status ts_engine_peak_rates(ts_engine *e, ts_peak_rates *r, ts_err *err)
{
    (void)e;
    memset(r, 0, sizeof *r);
    return no_cuda(err);
}

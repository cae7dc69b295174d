/* test_gpu_oom.c - the engine on a device that is nearly full.
 *
 * The test takes all but ~400 MB of device memory, then runs an image whose
 * requested tile (the whole 7000 x 5000 RGB image: two 140 MB RGBX work
 * buffers and a 105 MB packed one a stream, on two streams) cannot fit.
 * The engine must retry with smaller tiles and give exactly the CPU
 * backend's result; then, with almost nothing left, it must fail with a
 * clear out-of-memory error rather than crash, and work again once memory
 * is back. Runs alone (RUN_SERIAL): it starves every other user of the
 * device. Exits 77 without a CUDA device. */
#include "check.h"
#include "tilestream.h"

#ifndef TS_HAVE_CUDA
int main(void)
{
    fprintf(stderr, "built without CUDA: skipping\n");
    return 77;
}
#else
#include <cuda_runtime_api.h>

#include "testimg.h"
#include "testengine.h"

enum { MAX_HOGS = 4096 };
static void *hogs[MAX_HOGS];
static int n_hogs;

/* Allocate device memory until at most `leave` bytes are free. */
static void hog_until(size_t leave)
{
    size_t free_b = 0, total = 0;
    for (size_t chunk = (size_t)1 << 30; chunk >= ((size_t)1 << 20) && n_hogs < MAX_HOGS;) {
        if (cudaMemGetInfo(&free_b, &total) != cudaSuccess || free_b <= leave + chunk) {
            chunk /= 2;
            continue;
        }
        if (cudaMalloc(&hogs[n_hogs], chunk) != cudaSuccess) {
            cudaGetLastError();
            chunk /= 2;
            continue;
        }
        n_hogs++;
    }
    cudaMemGetInfo(&free_b, &total);
    fprintf(stderr, "device memory free: %.0f MB of %.0f MB\n", free_b / 1e6, total / 1e6);
}

static void hog_release(void)
{
    for (int i = 0; i < n_hogs; i++) cudaFree(hogs[i]);
    n_hogs = 0;
}

int main(void)
{
    check_seed();
    char name[160];
    ts_err err = {0};
    if (!tengine_gpu_ready(name, sizeof name)) return 77;
    ts_chain *chain = NULL;
    CHECK(ts_chain_parse("matrix=sepia,flip=h", &chain, &err) == TS_OK);
    ts_image in, ref, out;
    memset(&ref, 0, sizeof ref);
    memset(&out, 0, sizeof out);
    const int W = 7000, H = 5000;
    CHECK(ts_image_alloc(&in, W, H, 3, TS_U8, 0, NULL, &err) == TS_OK);
    if (!chain || !in.data) return check_exit();
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W * 3; x++) in.data[(size_t)y * in.stride + x] = (unsigned char)(check_rand() >> 56);
    CHECK(ts_cpu_run(chain, &in, 0, 0, &ref, &err) == TS_OK);

    ts_engine_opts o;
    memset(&o, 0, sizeof o);
    o.streams = 2;
    o.tile_w = W;   /* ask for the whole image as one tile */
    o.tile_h = H;
    ts_engine *e = NULL;
    CHECK_MSG(ts_engine_create(&o, &e, &err) == TS_OK, "%s", err.msg);
    if (!e) return check_exit();

    /* 1. Too little for the requested tile: smaller tiles, same pixels. */
    hog_until((size_t)400 << 20);
    ts_status st = ts_gpu_run(e, chain, &in, &out, &err);
    CHECK_MSG(st == TS_OK, "nearly full device: %s", err.msg);
    if (st == TS_OK) CHECK_MSG(tengine_same(&out, &ref), "nearly full device: result differs from the CPU backend");
    ts_image_free(&out);

    /* 2. Nothing left. The first engine keeps the buffers it already has
     * (so it can still run, with small tiles); a second engine, created
     * now, has none: a clear error at create or at run, no crash. */
    hog_until(0);
    memset(&err, 0, sizeof err);
    ts_engine *e2 = NULL;
    st = ts_engine_create(&o, &e2, &err);
    if (st == TS_OK) {
        st = ts_gpu_run(e2, chain, &in, &out, &err);
        CHECK(out.data == NULL || st == TS_OK);
    }
    fprintf(stderr, "a new engine with the device full: %s: %s\n", ts_status_name(st), err.msg);
    CHECK(st != TS_OK);
    CHECK_MSG(strstr(err.msg, "memory") != NULL, "error names memory: %s", err.msg);
    memset(&err, 0, sizeof err);
    st = ts_gpu_run(e, chain, &in, &out, &err);
    CHECK_MSG(st == TS_OK, "the first engine, with its buffers, on a full device: %s", err.msg);
    if (st == TS_OK) CHECK_MSG(tengine_same(&out, &ref), "full device, first engine: result differs from the CPU backend");
    ts_image_free(&out);

    /* 3. Memory back: both engines work. */
    hog_release();
    ts_engine *engines[2] = {e, e2};
    for (int k = 0; k < 2; k++) {
        if (!engines[k]) continue;
        memset(&err, 0, sizeof err);
        st = ts_gpu_run(engines[k], chain, &in, &out, &err);
        CHECK_MSG(st == TS_OK, "after release, engine %d: %s", k + 1, err.msg);
        if (st == TS_OK) CHECK_MSG(tengine_same(&out, &ref), "after release, engine %d: result differs from the CPU backend", k + 1);
        ts_image_free(&out);
    }

    ts_engine_destroy(e2);
    ts_engine_destroy(e);
    ts_image_free(&in);
    ts_image_free(&ref);
    ts_chain_free(chain);
    return check_exit();
}
#endif

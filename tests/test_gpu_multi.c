/* test_gpu_multi.c - several engines at once: one per device, and two on
 * the same device, each fed from its own thread (as `--gpus` does). Every
 * output must equal, bit for bit, what one engine alone gives; engines
 * share no coefficient bank or texture ring (slots are claimed per
 * process); asking for more streams than there are slots is a clear error.
 * On a machine with one GPU this runs two engines on it. Exits 77 without
 * a CUDA device. */
#include "check.h"
#include "testimg.h"
#include "tilestream.h"
#include "testengine.h"

#include <pthread.h>
#include <string.h>

enum { N_IMAGES = 24, MAX_ENGINES = 9 };

typedef struct worker {
    ts_engine *e;
    const ts_chain *chain;
    ts_image *in, *out;
    int first, step;      /* images first, first + step, ... */
    int failures;
    char msg[256];
} worker;

/* Submit this worker's images, two in flight, and collect them. */
static void *work(void *arg)
{
    worker *w = arg;
    ts_err err = {0};
    int pending = 0;
    for (int i = w->first; i < N_IMAGES; i += w->step) {
        if (ts_engine_submit(w->e, w->chain, &w->in[i], &w->out[i], NULL, i, &err) != TS_OK) {
            w->failures++;
            snprintf(w->msg, sizeof w->msg, "submit %d: %.200s", i, err.msg);
            continue;
        }
        if (++pending == 2) {
            ts_status st = TS_OK;
            ts_engine_collect(w->e, NULL, &st, &err);
            pending--;
            if (st != TS_OK) w->failures++;
        }
    }
    ts_status st = TS_OK;
    while (ts_engine_collect(w->e, NULL, &st, &err))
        if (st != TS_OK) {
            w->failures++;
            snprintf(w->msg, sizeof w->msg, "collect: %.200s", err.msg);
        }
    return NULL;
}

static void run_path(ts_path path, int n_dev)
{
    ts_err err = {0};
    ts_chain *chain = NULL;
    CHECK(ts_chain_parse("matrix=sepia,gauss=sigma=1.5,rotate=deg=11,transpose", &chain, &err) == TS_OK);
    if (!chain) return;
    static ts_image in[N_IMAGES], want[N_IMAGES], got[N_IMAGES];
    ts_engine *alone = tengine_make(0, 2, 0, 0, path);
    for (int i = 0; i < N_IMAGES; i++) {
        int w = 200 + 97 * i, h = 150 + 61 * (N_IMAGES - i);
        CHECK(ts_image_alloc(&in[i], w, h, 1 + i % 4, i % 5 ? TS_U8 : TS_U16, 0, NULL, &err) == TS_OK);
        ts_view v = { in[i].data, in[i].stride, 0, 0, w, h, w, h, in[i].c, in[i].type };
        timg_random(&v);
        memset(&want[i], 0, sizeof want[i]);
        ts_image pinned;
        memset(&pinned, 0, sizeof pinned);
        if (alone && ts_gpu_run(alone, chain, &in[i], &pinned, &err) == TS_OK) {
            /* The engine's outputs live in its pinned pool, which dies with
             * it: keep a copy in ordinary memory. */
            CHECK(ts_image_clone(&want[i], &pinned, &err) == TS_OK);
        } else {
            CHECK_MSG(0, "alone %d: %s", i, err.msg);
        }
        ts_image_free(&pinned);
    }
    ts_engine_destroy(alone);

    /* One engine per device, plus a second one on device 0. */
    int n_eng = n_dev + 1 > MAX_ENGINES ? MAX_ENGINES : n_dev + 1;
    ts_engine *eng[MAX_ENGINES] = {0};
    worker w[MAX_ENGINES];
    pthread_t th[MAX_ENGINES];
    for (int k = 0; k < n_eng; k++) eng[k] = tengine_make(k < n_dev ? k : 0, k < n_dev ? 2 : 1, 0, 0, path);
    for (int k = 0; k < n_eng; k++) {
        w[k] = (worker){eng[k], chain, in, got, k, n_eng, 0, ""};
        if (eng[k]) pthread_create(&th[k], NULL, work, &w[k]);
    }
    for (int k = 0; k < n_eng; k++)
        if (eng[k]) {
            pthread_join(th[k], NULL);
            CHECK_MSG(w[k].failures == 0, "engine %d: %d failures (%s)", k, w[k].failures, w[k].msg);
        }
    for (int i = 0; i < N_IMAGES; i++) {
        CHECK_MSG(tengine_same(&got[i], &want[i]), "%s path, image %d (engine %d of %d): differs from one engine alone",
                  path == TS_PATH_TEXTURE ? "texture" : "global", i, i % n_eng, n_eng);
        ts_image_free(&got[i]);
        ts_image_free(&want[i]);
        ts_image_free(&in[i]);
    }
    for (int k = 0; k < n_eng; k++) ts_engine_destroy(eng[k]);
    ts_chain_free(chain);
}

/* Slots are a process-wide resource: 16 streams in all, then a clear error. */
static void run_slots(void)
{
    ts_engine *a = tengine_make(0, 10, 0, 0, TS_PATH_GLOBAL), *b = NULL;
    ts_engine_opts o;
    memset(&o, 0, sizeof o);
    o.streams = 7;
    ts_err err = {0};
    CHECK(ts_engine_create(&o, &b, &err) != TS_OK && b == NULL);
    CHECK_MSG(strstr(err.msg, "streams") != NULL, "%s", err.msg);
    o.streams = 6;
    CHECK_MSG(ts_engine_create(&o, &b, &err) == TS_OK, "%s", err.msg);   /* exactly what is left */
    ts_engine_destroy(b);
    ts_engine_destroy(a);
    o.streams = 16;
    b = NULL;
    CHECK_MSG(ts_engine_create(&o, &b, &err) == TS_OK, "slots come back: %s", err.msg);
    ts_engine_destroy(b);
    o.device = 1000;
    CHECK(ts_engine_create(&o, &b, &err) == TS_E_ARG && strstr(err.msg, "1000"));
}

int main(void)
{
    check_seed();
    ts_err err = {0};
    int n_dev = ts_gpu_count(&err);
    if (n_dev < 1) {
        fprintf(stderr, "skipping: %s\n", err.msg);
        return 77;
    }
    for (int d = 0; d < n_dev; d++) {
        char name[160];
        CHECK(ts_gpu_name(d, name, sizeof name, &err));
        fprintf(stderr, "device %d: %s\n", d, name);
    }
    run_path(TS_PATH_GLOBAL, n_dev);
    run_path(TS_PATH_TEXTURE, n_dev);
    run_slots();
    return check_exit();
}

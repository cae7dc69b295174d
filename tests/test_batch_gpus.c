/* test_batch_gpus.c - `--gpus`: a batch spread over several engines from
 * one queue. On a machine with one GPU, "0,0" puts two engines on it; the
 * outputs must equal, byte for byte, a run with one engine; both engines
 * take images; the stage table has a line per engine and the Chrome trace
 * a process per engine. Exits 77 without a CUDA device. */
#include "batch_util.h"

static const char *CHAIN = "gauss=sigma=2,matrix=sepia,transpose";

static void run_batch(const char *in, const char *out, const char *gpus, ts_trace *trace, ts_batch_result *r)
{
    const char *inputs[1] = {in};
    ts_batch_opts o;
    bu_folder_opts(&o, inputs, out, CHAIN, TS_DEVICE_GPU);
    o.codec = TS_CODEC_CPU;   /* the engines alone; nvJPEG has its own test */
    o.gpus = gpus;
    o.trace = trace;
    ts_err err = {0};
    ts_status st = ts_batch_run(&o, r, &err);
    CHECK_MSG(st == TS_OK, "--gpus %s: %s", gpus ? gpus : "all", err.msg);
}

static int has_stage(const ts_trace *t, const char *name)
{
    ts_stage_stat st[64];
    int n = ts_trace_summary(t, st, 64);
    for (int i = 0; i < n; i++)
        if (!strcmp(st[i].stage, name)) return 1;
    return 0;
}

int main(void)
{
    ts_err err = {0};
    if (ts_gpu_count(&err) < 1) {
        fprintf(stderr, "skipped: %s\n", err.msg);
        return 77;
    }
    char root[4096], in[4200], one[4200], two[4200], tr[4300];
    CHECK(bu_tempdir(root, sizeof root, "gpus"));
    snprintf(in, sizeof in, "%s/in", root);
    snprintf(one, sizeof one, "%s/one", root);
    snprintf(two, sizeof two, "%s/two", root);
    snprintf(tr, sizeof tr, "%s/trace.json", root);
    CHECK(mkdir(in, 0777) == 0);
    int n = 40;
    for (int i = 0; i < n; i++) {
        char name[64];
        snprintf(name, sizeof name, "img%02d.%s", i, i % 4 == 3 ? "png" : "jpg");
        CHECK(bu_write(in, name, 400 + 37 * i, 300 + 23 * (i % 9), i % 7 == 6 ? 1 : 3, (unsigned)i + 1));
    }
    ts_batch_result a, b;
    ts_trace *t1 = ts_trace_create(), *t2 = ts_trace_create();
    run_batch(in, one, NULL, t1, &a);
    run_batch(in, two, "0,0", t2, &b);
    CHECK_EQ_INT(a.n_ok, n);
    CHECK_EQ_INT(b.n_ok, n);
    CHECK_EQ_INT(b.n_engines, 2);
    CHECK_EQ_INT(b.engine_device[0], 0);
    CHECK_EQ_INT(b.engine_device[1], 0);
    CHECK_EQ_INT(b.engine_images[0] + b.engine_images[1], n);
    CHECK_MSG(b.engine_images[0] > 0 && b.engine_images[1] > 0, "engine images %d and %d", b.engine_images[0],
              b.engine_images[1]);
    for (int i = 0; i < a.n_images && i < b.n_images; i++) {
        char other[8400];
        bu_other_output(a.images[i].output, one, two, other, sizeof other);
        CHECK_MSG(bu_same_file(a.images[i].output, other), "%s differs from %s", a.images[i].output, other);
    }
    CHECK(has_stage(t1, "h2d"));
    CHECK(has_stage(t2, "h2d gpu0"));
    CHECK(has_stage(t2, "h2d gpu0.1"));
    CHECK(ts_trace_write_chrome(t2, tr, &err) == TS_OK);
    size_t len = 0;
    char *json = (char *)bu_slurp(tr, &len);
    CHECK(json && strstr(json, "\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"gpu0\"}"));
    CHECK(json && strstr(json, "\"pid\":3,\"name\":\"process_name\",\"args\":{\"name\":\"gpu0.1\"}"));
    free(json);
    ts_trace_free(t1);
    ts_trace_free(t2);
    ts_batch_result_free(&a);
    ts_batch_result_free(&b);
    bu_rmtree(root);
    return check_exit();
}

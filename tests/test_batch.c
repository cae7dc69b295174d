/* test_batch.c - the batch runner's memory budget (pipeline/batch/batch.c), on
 * the CPU: bytes in flight never exceed --memory (as counted by the run:
 * each image's pixels, its output and the ops' buffers, reserved before it
 * is decoded), the reservation covers every image's real pixel memory, a
 * budget smaller than one image runs one image at a time, and outputs are
 * byte-identical whatever the budget and the number of workers. */
#include "batch_util.h"

static const char *CHAIN = "gauss=sigma=2,matrix=sepia,transpose";

typedef struct run {
    ts_batch_result r;
    ts_status st;
    char out[8400];
} run;

static void run_batch(const char *in, const char *root, const char *tag, uint64_t memory, int jobs, run *x)
{
    snprintf(x->out, sizeof x->out, "%s/%s", root, tag);
    const char *inputs[1] = {in};
    ts_batch_opts o;
    memset(&o, 0, sizeof o);
    o.inputs = inputs;
    o.n_inputs = 1;
    o.outdir = x->out;
    o.chain_text = CHAIN;
    o.device = TS_DEVICE_CPU;
    o.jobs = jobs;
    o.png_level = -1;
    o.memory = memory;
    ts_err err = {0};
    x->st = ts_batch_run(&o, &x->r, &err);
    CHECK_MSG(x->st == TS_OK, "%s: %s", tag, err.msg);
}

/* Pixel bytes of image i: its decode and its output. */
static uint64_t pixel_bytes(const ts_image_result *im)
{
    uint64_t px = (uint64_t)im->c * (uint64_t)im->type;
    return ((uint64_t)im->w * im->h + (uint64_t)im->out_w * im->out_h) * px;
}

static void same_outputs(const run *a, const run *b)
{
    CHECK_EQ_INT(a->r.n_images, b->r.n_images);
    for (int i = 0; i < a->r.n_images && i < b->r.n_images; i++) {
        char other[8400];
        bu_other_output(a->r.images[i].output, a->out, b->out, other, sizeof other);
        CHECK_MSG(bu_same_file(a->r.images[i].output, other), "%s differs from %s", a->r.images[i].output, other);
    }
}

int main(void)
{
    char root[4096], in[4200];
    CHECK(bu_tempdir(root, sizeof root, "batch"));
    snprintf(in, sizeof in, "%s/in", root);
    CHECK(mkdir(in, 0777) == 0);
    /* 14 images of 0.1 to 1.1 MP: JPEG (baseline and progressive), PNG, grey and RGBA */
    int sizes[][3] = {{640, 480, 3}, {1200, 900, 3}, {333, 777, 3}, {1001, 667, 3}, {800, 600, 1}, {512, 512, 4},
                      {1280, 720, 3}, {299, 401, 3}, {900, 1200, 3}, {720, 480, 3}, {640, 640, 1}, {1100, 1000, 3},
                      {480, 320, 4}, {256, 1024, 3}};
    int n = (int)(sizeof sizes / sizeof sizes[0]);
    for (int i = 0; i < n; i++) {
        char name[64];
        int png = sizes[i][2] == 4 || i % 5 == 4;
        snprintf(name, sizeof name, "img%02d.%s", i, png ? "png" : "jpg");
        CHECK(bu_write(in, name, sizes[i][0], sizes[i][1], sizes[i][2], (unsigned)i + 1));
    }

    run big, small, tiny, one;
    run_batch(in, root, "big", (uint64_t)1 << 34, 4, &big);
    CHECK_EQ_INT(big.r.n_ok, n);
    uint64_t largest = 0;
    for (int i = 0; i < big.r.n_images; i++)
        if (pixel_bytes(&big.r.images[i]) > largest) largest = pixel_bytes(&big.r.images[i]);
    CHECK(big.r.memory_peak <= big.r.memory_budget);
    CHECK(big.r.max_in_flight >= 2);   /* 4 workers and room: images overlap */
    /* the call's time is its three parts, each measured */
    CHECK(big.r.setup_s >= 0 && big.r.work_s > 0 && big.r.finish_s >= 0);
    CHECK_MSG(fabs(big.r.wall_s - (big.r.setup_s + big.r.work_s + big.r.finish_s)) < 1e-3,
              "wall %.6f s against set-up %.6f + work %.6f + finishing %.6f", big.r.wall_s, big.r.setup_s,
              big.r.work_s, big.r.finish_s);

    /* Smaller than any image: one at a time, and each reservation covers
     * the image's real pixels and its output's (and the ops' buffers). */
    run_batch(in, root, "tiny", 1, 4, &tiny);
    CHECK_EQ_INT(tiny.r.n_ok, n);
    CHECK_EQ_INT(tiny.r.max_in_flight, 1);
    CHECK_MSG(tiny.r.memory_peak >= largest, "reserved %llu for an image holding %llu", (unsigned long long)tiny.r.memory_peak,
              (unsigned long long)largest);
    uint64_t one_image = tiny.r.memory_peak;   /* the largest single reservation */

    /* Room for about two and a half of the largest images: the count must
     * hold, and images still overlap. */
    uint64_t budget = 2 * one_image + one_image / 2;
    run_batch(in, root, "small", budget, 4, &small);
    CHECK_EQ_INT(small.r.n_ok, n);
    CHECK_EQ_INT(small.r.memory_budget, budget);
    CHECK_MSG(small.r.memory_peak <= budget, "peak %llu over budget %llu", (unsigned long long)small.r.memory_peak,
              (unsigned long long)budget);
    CHECK(small.r.max_in_flight >= 2);

    run_batch(in, root, "one", 0, 1, &one);   /* the default budget, one worker */
    CHECK_EQ_INT(one.r.n_ok, n);
    CHECK(one.r.memory_budget == ts_default_memory_budget());
    CHECK(one.r.memory_budget > 0 && one.r.memory_budget <= ((uint64_t)8 << 30));

    same_outputs(&big, &small);
    same_outputs(&big, &tiny);
    same_outputs(&big, &one);

    ts_batch_result_free(&big.r);
    ts_batch_result_free(&small.r);
    ts_batch_result_free(&tiny.r);
    ts_batch_result_free(&one.r);
    bu_rmtree(root);
    return check_exit();
}

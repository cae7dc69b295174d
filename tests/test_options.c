/* test_options.c - every option's range and default has one definition
 * (tilestream.h's ts_option table) and one outcome when out of range: the
 * same TS_E_ARG naming the option and its range from the check itself, the
 * save path (ts_save_opts_resolve, ts_image_save), the batch's options
 * (ts_batch_opts_check) and the CPU bench; never a silent default or clamp. */
#include "bench.h"
#include "check.h"
#include "tilestream.h"
#include "tsk.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* st is TS_E_ARG and msg names the option (what and flag) and "min..max" */
static void check_refusal(ts_status st, const ts_err *e, ts_option opt, const char *where)
{
    const ts_option_range *r = ts_option_range_of(opt);
    char range[64];
    snprintf(range, sizeof range, "%d..%d", r->min, r->max);
    CHECK_MSG(st == TS_E_ARG, "%s: %s", where, ts_status_name(st));
    CHECK_MSG(strstr(e->msg, r->what) && strstr(e->msg, r->flag) && strstr(e->msg, range), "%s: '%s'", where,
              e->msg);
}

static void test_table(void)
{
    static const struct { ts_option opt; int min, max, def; const char *flag; } want[] = {
        { TS_OPT_QUALITY, 1, 100, 90, "--quality" },
        { TS_OPT_PNG_LEVEL, 0, 9, 3, "--png-level" },
        { TS_OPT_STREAMS, 1, 16, 3, "--streams" },
        { TS_OPT_JOBS, 1, 256, 0, "--jobs" },
        { TS_OPT_TILE, 1, 1 << 20, 0, "--tile" },
        { TS_OPT_REPS, 1, 10000, 0, "--reps" },
    };
    static const char *const not_numbers[] = { "", "x", "5x", "1.5", " ", "99999999999999999999" };
    CHECK_EQ_INT(sizeof want / sizeof want[0], TS_OPT_COUNT);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const ts_option_range *r = ts_option_range_of(want[i].opt);
        CHECK(r != NULL);
        if (!r) continue;
        CHECK_EQ_INT(r->min, want[i].min);
        CHECK_EQ_INT(r->max, want[i].max);
        CHECK_EQ_INT(r->def, want[i].def);
        CHECK(!strcmp(r->flag, want[i].flag));
        ts_err e = { 0 };
        CHECK(ts_option_check(want[i].opt, r->min, &e) == TS_OK);
        CHECK(ts_option_check(want[i].opt, r->max, &e) == TS_OK);
        CHECK(want[i].def == 0 || ts_option_check(want[i].opt, r->def, &e) == TS_OK);
        check_refusal(ts_option_check(want[i].opt, (long)r->min - 1, &e), &e, want[i].opt, "below");
        check_refusal(ts_option_check(want[i].opt, (long)r->max + 1, &e), &e, want[i].opt, "above");
        char text[32];
        int v = -7;
        snprintf(text, sizeof text, "%d", r->max);
        CHECK(ts_option_parse(want[i].opt, text, &v, &e) == TS_OK && v == r->max);
        snprintf(text, sizeof text, "%d", r->max + 1);
        v = -7;
        check_refusal(ts_option_parse(want[i].opt, text, &v, &e), &e, want[i].opt, text);
        CHECK_EQ_INT(v, -7);   /* untouched on failure */
        for (size_t k = 0; k < sizeof not_numbers / sizeof not_numbers[0]; k++) {
            check_refusal(ts_option_parse(want[i].opt, not_numbers[k], &v, &e), &e, want[i].opt, not_numbers[k]);
            CHECK_EQ_INT(v, -7);
        }
    }
    /* the streams' ceiling is the kernels' coefficient banks */
    CHECK_EQ_INT(TS_STREAMS_MAX, TSK_SLOTS);
    CHECK(ts_option_range_of(TS_OPT_COUNT) == NULL);
    ts_err e = { 0 };
    CHECK(ts_option_check(TS_OPT_COUNT, 1, &e) == TS_E_ARG);
}

/* The save path: the defaults filled in from the table, out-of-range values
 * refused with the path and the check's own words. */
static void test_save_opts(void)
{
    ts_save_opts out;
    ts_err e = { 0 };
    CHECK(ts_save_opts_resolve("a.jpg", NULL, &out, &e) == TS_OK);
    CHECK_EQ_INT(out.quality, TS_JPEG_QUALITY_DEFAULT);
    CHECK_EQ_INT(out.png_level, TS_PNG_LEVEL_DEFAULT);
    ts_save_opts in = { TS_FMT_UNKNOWN, 0, -1, 0 };
    CHECK(ts_save_opts_resolve("a.png", &in, &out, &e) == TS_OK);
    CHECK_EQ_INT(out.quality, TS_JPEG_QUALITY_DEFAULT);
    CHECK_EQ_INT(out.png_level, TS_PNG_LEVEL_DEFAULT);
    in.quality = 100;
    in.png_level = 0;
    CHECK(ts_save_opts_resolve("a.png", &in, &out, &e) == TS_OK);
    CHECK_EQ_INT(out.quality, 100);
    CHECK_EQ_INT(out.png_level, 0);

    static const struct { int quality, png_level; ts_option bad; } cases[] = {
        { 101, -1, TS_OPT_QUALITY }, { -5, -1, TS_OPT_QUALITY },
        { 0, 10, TS_OPT_PNG_LEVEL }, { 0, -2, TS_OPT_PNG_LEVEL },   /* only -1 means the default */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_save_opts o = { TS_FMT_UNKNOWN, cases[i].quality, cases[i].png_level, 0 };
        memset(&e, 0, sizeof e);
        check_refusal(ts_save_opts_resolve("dir/a.jpg", &o, &out, &e), &e, cases[i].bad, "resolve");
        CHECK_MSG(!strncmp(e.msg, "dir/a.jpg: ", 11), "'%s'", e.msg);
    }

    /* and through the writer: refused before any file is made */
    char dir[] = "/tmp/ts_options_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128];
    snprintf(path, sizeof path, "%s/q.jpg", dir);
    ts_image img = { 0 };
    CHECK(ts_image_alloc(&img, 9, 7, 3, TS_U8, 0, NULL, &e) == TS_OK);
    for (size_t i = 0; img.data && i < img.stride * (size_t)img.h; i++) img.data[i] = (unsigned char)(i * 37);
    ts_save_opts q = { TS_FMT_UNKNOWN, 101, -1, 0 };
    check_refusal(ts_image_save(path, &img, &q, &e), &e, TS_OPT_QUALITY, "save");
    CHECK_MSG(access(path, F_OK) != 0, "%s written", path);
    q.quality = 100;
    CHECK_MSG(ts_image_save(path, &img, &q, &e) == TS_OK, "%s", e.msg);
    CHECK(access(path, F_OK) == 0);
    remove(path);
    rmdir(dir);
    ts_image_free(&img);
}

/* The batch's numbers: each either its "not given" value or in range. */
static void test_batch_opts(void)
{
    ts_batch_opts o;
    memset(&o, 0, sizeof o);
    o.png_level = -1;
    ts_err e = { 0 };
    CHECK(ts_batch_opts_check(&o, &e) == TS_OK);
    o.quality = 100, o.png_level = 9, o.streams = 16, o.jobs = 256, o.tile_w = 512, o.tile_h = 256;
    CHECK(ts_batch_opts_check(&o, &e) == TS_OK);
    struct { int field; int value; ts_option bad; } cases[] = {
        { 0, 101, TS_OPT_QUALITY }, { 1, 10, TS_OPT_PNG_LEVEL }, { 1, -2, TS_OPT_PNG_LEVEL },
        { 2, 17, TS_OPT_STREAMS }, { 2, -1, TS_OPT_STREAMS }, { 3, 257, TS_OPT_JOBS },
        { 4, -3, TS_OPT_TILE }, { 5, (1 << 20) + 1, TS_OPT_TILE },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ts_batch_opts b = o;
        int *f[] = { &b.quality, &b.png_level, &b.streams, &b.jobs, &b.tile_w, &b.tile_h };
        *f[cases[i].field] = cases[i].value;
        memset(&e, 0, sizeof e);
        check_refusal(ts_batch_opts_check(&b, &e), &e, cases[i].bad, "batch");
    }
}

/* The CPU bench refuses --reps past the range instead of clamping it. */
static void test_bench_reps(void)
{
    ts_bench_opts bo = { 64, 64, TS_REPS_MAX + 1, NULL, NULL, NULL };
    ts_err e = { 0 };
    check_refusal(ts_bench_cpu(&bo, 1, NULL, &e), &e, TS_OPT_REPS, "bench cpu");
}

int main(void)
{
    test_table();
    test_save_opts();
    test_batch_opts();
    test_bench_reps();
    return check_exit();
}

/* test_pngsuite.c - PngSuite conformance.
 *
 * Every valid file (not x*.png) must decode to the pixels listed in
 * tests/data/pngsuite.manifest, which make_pngsuite_manifest.py produced
 * with a decoder of its own (checked against Pillow): size, channels,
 * depth, a hash of all pixels and five sample pixels. Every x*.png (a
 * deliberately broken file) must fail with TS_E_CORRUPT or TS_E_FORMAT and
 * a message naming it. Decoding goes through a counting allocator, as the
 * GPU engine's pinned pool would, to show that pixels come from the
 * caller's allocator and go back to it, also on failure. */
#include "check.h"
#include "codec_test.h"
#include "tilestream.h"

#include <dirent.h>
#include <inttypes.h>

#define SUITE TS_TEST_DATA "/pngsuite"
#define MAX_FILES 256

typedef struct counting_pool {
    int allocs, frees;
} counting_pool;

static void *pool_alloc(void *ctx, size_t bytes)
{
    ((counting_pool *)ctx)->allocs++;
    return malloc(bytes);
}

static void pool_free(void *ctx, void *p)
{
    ((counting_pool *)ctx)->frees++;
    free(p);
}

typedef struct expected {
    char name[64];
    int w, h, c, depth;
    uint64_t hash;
    char samples[512];
} expected;

static int read_manifest(expected *out, int max)
{
    FILE *f = fopen(TS_TEST_DATA "/pngsuite.manifest", "r");
    CHECK_MSG(f != NULL, "cannot open the manifest");
    if (!f)
        return 0;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < max) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        expected *e = &out[n];
        int used = 0;
        if (sscanf(line, "%63s %d %d %d %d %" SCNx64 " %n", e->name, &e->w, &e->h, &e->c,
                   &e->depth, &e->hash, &used) != 6) {
            CHECK_MSG(0, "bad manifest line: %s", line);
            continue;
        }
        snprintf(e->samples, sizeof e->samples, "%s", line + used);
        n++;
    }
    fclose(f);
    return n;
}

/* Check "x,y=v/v/v" entries against the image. */
static void check_samples(const char *name, const ts_image *img, const char *samples)
{
    const char *p = samples;
    int x, y, used, checked = 0;
    while (sscanf(p, "%d,%d=%n", &x, &y, &used) == 2) {
        p += used;
        for (int ch = 0; ch < img->c; ch++) {
            unsigned v = (unsigned)strtoul(p, (char **)&p, 10);
            if (*p == '/')
                p++;
            CHECK_MSG(ct_sample(img, x, y, ch) == v, "%s (%d,%d) channel %d: %u, expected %u",
                      name, x, y, ch, ct_sample(img, x, y, ch), v);
        }
        while (*p == ' ')
            p++;
        checked++;
    }
    CHECK_EQ_INT(checked, 5);
}

static void check_one(const expected *e)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", SUITE, e->name);
    counting_pool pool = {0, 0};
    ts_allocator a = {pool_alloc, pool_free, &pool};
    ts_load_opts opts = {0, &a, 0, 0};
    ts_image img;
    ts_err err = {0};
    ts_status st = ts_image_load(path, &opts, &img, &err);
    CHECK_MSG(st == TS_OK, "%s: %s", e->name, err.msg);
    if (st != TS_OK)
        return;
    CHECK_EQ_INT(img.w, e->w);
    CHECK_EQ_INT(img.h, e->h);
    CHECK_EQ_INT(img.c, e->c);
    CHECK_EQ_INT(img.type, e->depth == 16 ? TS_U16 : TS_U8);
    CHECK_EQ_INT(img.stride, (size_t)img.w * ts_pixel_bytes(&img));
    CHECK_EQ_INT(img.orientation, 1);
    uint64_t h = ct_hash_pixels(&img);
    CHECK_MSG(h == e->hash, "%s: pixel hash %016" PRIx64 ", expected %016" PRIx64, e->name, h,
              e->hash);
    check_samples(e->name, &img, e->samples);
    CHECK_EQ_INT(pool.allocs, 1);
    ts_image_free(&img);
    CHECK_EQ_INT(pool.frees, 1);

    /* The header alone says the same about size, channels and depth. */
    ts_image_info info;
    st = ts_image_probe(path, &info, &err);
    CHECK_MSG(st == TS_OK, "probe %s: %s", e->name, err.msg);
    CHECK_EQ_INT(info.w, e->w);
    CHECK_EQ_INT(info.h, e->h);
    CHECK_EQ_INT(info.c, e->c);
    CHECK_EQ_INT(info.format, TS_FMT_PNG);
    /* PngSuite names: [3] is 'i' for interlaced, [4..5] the colour type. */
    CHECK_EQ_INT(info.interlaced, e->name[3] == 'i');
    CHECK_EQ_INT(info.palette, e->name[4] == '3');
    int stored_depth = atoi(e->name + 6);
    CHECK_EQ_INT(info.bit_depth, stored_depth);
}

static void check_broken(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", SUITE, name);
    counting_pool pool = {0, 0};
    ts_allocator a = {pool_alloc, pool_free, &pool};
    ts_load_opts opts = {0, &a, 0, 0};
    ts_image img;
    ts_err err = {0};
    ts_status st = ts_image_load(path, &opts, &img, &err);
    CHECK_MSG(st == TS_E_CORRUPT || st == TS_E_FORMAT, "%s: status %d (%s)", name, st, err.msg);
    CHECK_MSG(ct_starts_with(err.msg, path), "%s: message does not name the file: %s", name, err.msg);
    CHECK_MSG(strchr(err.msg, '\n') == NULL, "%s: message is not one line", name);
    CHECK(img.data == NULL);
    CHECK_EQ_INT(pool.allocs, pool.frees);
    fprintf(stderr, "  %s -> %s\n", name, err.msg);
}

static int is_listed(const expected *list, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(list[i].name, name) == 0)
            return 1;
    return 0;
}

int main(void)
{
    static expected list[MAX_FILES];
    int n = read_manifest(list, MAX_FILES);
    CHECK_MSG(n >= 150, "only %d manifest entries", n);
    for (int i = 0; i < n; i++)
        check_one(&list[i]);

    /* Every file in the folder is either in the manifest or broken. */
    DIR *d = opendir(SUITE);
    CHECK(d != NULL);
    int broken = 0, valid = 0;
    struct dirent *ent;
    while (d && (ent = readdir(d))) {
        size_t len = strlen(ent->d_name);
        if (len < 5 || strcmp(ent->d_name + len - 4, ".png") != 0)
            continue;
        if (ent->d_name[0] == 'x') {
            check_broken(ent->d_name);
            broken++;
        } else {
            CHECK_MSG(is_listed(list, n, ent->d_name), "%s is not in the manifest", ent->d_name);
            valid++;
        }
    }
    if (d)
        closedir(d);
    CHECK_EQ_INT(valid, n);
    CHECK_EQ_INT(broken, 14);
    fprintf(stderr, "%d valid files, %d broken files\n", valid, broken);
    return check_exit();
}

/* test_badinput.c - inputs that must fail cleanly: a missing file, a
 * folder, an empty file, text named .png, a BMP named .png, headers that
 * claim huge images (refused before allocating), PNG and JPEG files cut
 * short at many points, and randomly damaged files. Each must give the
 * right status and a one-line message that starts with the file's path,
 * leave no pixels behind, and return every allocation (ASan in CI checks
 * the last part for the library's own memory). */
#include "check.h"
#include "codec_test.h"
#include "tilestream.h"

#define BAD TS_TEST_DATA "/bad"

static char tmpdir[512];

typedef struct pool {
    int allocs, frees;
} pool;

static void *pool_alloc(void *ctx, size_t n)
{
    ((pool *)ctx)->allocs++;
    return malloc(n);
}

static void pool_free(void *ctx, void *p)
{
    ((pool *)ctx)->frees++;
    free(p);
}

/* Load and probe path; both must fail with one of the allowed statuses and
 * a message naming the file. Returns the load status. */
static ts_status expect_failure(const char *path, ts_status want, ts_status also_ok, pool *p)
{
    pool local = {0, 0};
    if (!p)
        p = &local;
    ts_allocator a = {pool_alloc, pool_free, p};
    ts_load_opts opts = {0, &a, 0, 0};
    ts_image img;
    ts_err err = {0};
    ts_status st = ts_image_load(path, &opts, &img, &err);
    CHECK_MSG(st == want || st == also_ok, "%s: status %d, expected %d (%s)", path, st, want, err.msg);
    CHECK_MSG(ct_starts_with(err.msg, path), "message does not start with the path: %s", err.msg);
    CHECK_MSG(strchr(err.msg, '\n') == NULL, "message is not one line: %s", err.msg);
    CHECK(img.data == NULL && img.icc == NULL);
    CHECK_EQ_INT(p->allocs, p->frees);
    if (st == TS_OK)
        ts_image_free(&img);
    return st;
}

static void test_simple_cases(void)
{
    ts_err err = {0};
    expect_failure(BAD "/does-not-exist.png", TS_E_IO, TS_E_IO, NULL);
    ts_image img;
    ts_image_load(BAD "/does-not-exist.png", NULL, &img, &err);
    CHECK_MSG(strstr(err.msg, "No such file") != NULL, "%s", err.msg);
    fprintf(stderr, "  %s\n", err.msg);

    expect_failure(BAD, TS_E_IO, TS_E_IO, NULL);               /* a folder */
    expect_failure(BAD "/empty.png", TS_E_FORMAT, TS_E_CORRUPT, NULL);
    expect_failure(BAD "/text.png", TS_E_FORMAT, TS_E_FORMAT, NULL);

    /* A BMP header named .png: we say what it is. */
    unsigned char bmp[64] = {'B', 'M'};
    bmp[14] = 40;
    char path[600];
    snprintf(path, sizeof path, "%s/bitmap.png", tmpdir);
    CHECK(ct_write_file(path, bmp, sizeof bmp));
    expect_failure(path, TS_E_FORMAT, TS_E_FORMAT, NULL);
    ts_image_load(path, NULL, &img, &err);
    CHECK_MSG(strstr(err.msg, "bmp") != NULL, "%s", err.msg);

    ts_image_info info;
    CHECK_EQ_INT(ts_image_probe(BAD "/does-not-exist.png", &info, &err), TS_E_IO);
    CHECK_EQ_INT(ts_image_probe(BAD "/text.png", &info, &err), TS_E_FORMAT);
    CHECK_EQ_INT(ts_image_probe(BAD "/empty.png", &info, &err), TS_E_FORMAT);
}

static void test_huge_headers(void)
{
    pool p = {0, 0};
    ts_err err = {0};
    ts_image img;
    expect_failure(BAD "/huge.png", TS_E_LIMIT, TS_E_LIMIT, &p);
    CHECK_EQ_INT(p.allocs, 0);                  /* refused before allocating */
    ts_image_load(BAD "/huge.png", NULL, &img, &err);
    CHECK_MSG(strstr(err.msg, "100000x100000") != NULL, "%s", err.msg);
    fprintf(stderr, "  %s\n", err.msg);

    expect_failure(BAD "/huge.jpg", TS_E_LIMIT, TS_E_LIMIT, &p);
    CHECK_EQ_INT(p.allocs, 0);
    ts_image_load(BAD "/huge.jpg", NULL, &img, &err);
    CHECK_MSG(strstr(err.msg, "65000x65000") != NULL, "%s", err.msg);
    fprintf(stderr, "  %s\n", err.msg);

    /* The header alone can be read: probing allocates no pixels. */
    ts_image_info info;
    CHECK(ts_image_probe(BAD "/huge.png", &info, &err) == TS_OK);
    CHECK(info.w == 100000 && info.h == 100000 && info.c == 3);
    CHECK(ts_image_probe(BAD "/huge.jpg", &info, &err) == TS_OK);
    CHECK(info.w == 65000 && info.h == 65000);

    /* An explicit max_pixels one below the image's size refuses it. */
    ts_load_opts tight = {32 * 32 - 1, NULL, 0, 0};
    CHECK_EQ_INT(ts_image_load(TS_TEST_DATA "/pngsuite/basn2c08.png", &tight, &img, &err), TS_E_LIMIT);
    tight.max_pixels = 32 * 32;
    CHECK_EQ_INT(ts_image_load(TS_TEST_DATA "/pngsuite/basn2c08.png", &tight, &img, &err), TS_OK);
    ts_image_free(&img);
}

/* Cut src at many points; every piece must fail as corrupt (very short
 * pieces may not even look like the format any more). */
static void test_truncations(const char *src)
{
    size_t n;
    unsigned char *data = ct_read_file(src, &n);
    CHECK_MSG(data != NULL, "cannot read %s", src);
    if (!data)
        return;
    size_t cuts[24];
    int k = 0;
    size_t fixed[] = {1, 3, 8, 16, 20, 33, 60, 100, 200, 400};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (fixed[i] < n)
            cuts[k++] = fixed[i];
    for (int i = 1; i <= 7; i++)
        cuts[k++] = n * (size_t)i / 8;
    cuts[k++] = n - 12;
    cuts[k++] = n - 2;
    cuts[k++] = n - 1;
    const char *base = strrchr(src, '/') + 1;
    for (int i = 0; i < k; i++) {
        char path[700];
        snprintf(path, sizeof path, "%s/cut-%zu-%s", tmpdir, cuts[i], base);
        CHECK(ct_write_file(path, data, cuts[i]));
        ts_status also = cuts[i] < 8 ? TS_E_FORMAT : TS_E_CORRUPT;
        expect_failure(path, TS_E_CORRUPT, also, NULL);
        unlink(path);
    }
    fprintf(stderr, "  %s: %d cut points refused\n", base, k);
    free(data);
}

/* Damage a few random bytes past the signature, many times. Whatever the
 * outcome, it must be a status, not a crash; failures must name the file. */
static void test_random_damage(const char *src, int rounds)
{
    size_t n;
    unsigned char *data = ct_read_file(src, &n);
    CHECK(data != NULL && n > 16);
    if (!data)
        return;
    unsigned char *copy = malloc(n);
    char path[700];
    snprintf(path, sizeof path, "%s/damaged", tmpdir);
    int failed = 0;
    for (int r = 0; r < rounds; r++) {
        memcpy(copy, data, n);
        int flips = 1 + (int)(check_rand() % 8);
        for (int i = 0; i < flips; i++)
            copy[8 + check_rand() % (n - 8)] = (unsigned char)check_rand();
        CHECK(ct_write_file(path, copy, n));
        pool p = {0, 0};
        ts_allocator a = {pool_alloc, pool_free, &p};
        ts_load_opts opts = {1u << 24, &a, 0, 0};
        ts_image img;
        ts_err err = {0};
        ts_status st = ts_image_load(path, &opts, &img, &err);
        if (st == TS_OK) {
            CHECK(img.data != NULL && img.w > 0 && img.h > 0);
            ts_image_free(&img);
        } else {
            failed++;
            CHECK_MSG(ct_starts_with(err.msg, path), "%s", err.msg);
            CHECK(img.data == NULL);
        }
        CHECK_EQ_INT(p.allocs, p.frees);
        ts_image_info info;
        ts_image_probe(path, &info, &err);
    }
    fprintf(stderr, "  %s: %d of %d damaged copies refused, the rest decoded\n",
            strrchr(src, '/') + 1, failed, rounds);
    unlink(path);
    free(copy);
    free(data);
}

int main(void)
{
    check_seed();
    ct_tempdir(tmpdir, sizeof tmpdir, "ts_badinput");
    test_simple_cases();
    test_huge_headers();
    test_truncations(TS_TEST_DATA "/pngsuite/basn2c08.png");
    test_truncations(TS_TEST_DATA "/pngsuite/basi6a16.png");
    test_truncations(TS_TEST_DATA "/pngsuite/basn3p02.png");
    test_truncations(TS_TEST_DATA "/jpeg/baseline.jpg");
    test_truncations(TS_TEST_DATA "/jpeg/progressive.jpg");
    test_truncations(TS_TEST_DATA "/jpeg/grey.jpg");
    test_truncations(TS_TEST_DATA "/jpeg/icc.jpg");
    test_random_damage(TS_TEST_DATA "/jpeg/baseline.jpg", 300);
    test_random_damage(TS_TEST_DATA "/jpeg/progressive.jpg", 300);
    test_random_damage(TS_TEST_DATA "/pngsuite/basi0g04.png", 300);
    test_random_damage(TS_TEST_DATA "/pngsuite/basn6a16.png", 300);
    ct_remove_tree(tmpdir);
    return check_exit();
}

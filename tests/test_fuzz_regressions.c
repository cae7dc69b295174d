/* test_fuzz_regressions.c - every input kept in tests/data/fuzz-regressions
 * through the normal loaders and the chain parser (see the README there).
 *
 * Images (png/, jpeg/): ts_image_load strict and accepting damaged files,
 * and ts_image_probe. A failure must name the file in one line and leave
 * no pixels; a success is saved as PNG and as JPEG, which must load back
 * (the PNG to the same pixels). expected.txt gives the status of the strict
 * load where it is known. Chains (chain/): a chain that parses must parse
 * again from its description to the same description; a refusal must say
 * why. Under the sanitizer build this also checks for memory errors. */
#include "check.h"
#include "codec_test.h"
#include "tilestream.h"

#define REGRESS TS_TEST_DATA "/fuzz-regressions"

static char tmpdir[512];
static int n_images, n_chains, n_expected;

static ts_status status_from_word(const char *w)
{
    if (!strcmp(w, "ok")) return TS_OK;
    if (!strcmp(w, "format")) return TS_E_FORMAT;
    if (!strcmp(w, "corrupt")) return TS_E_CORRUPT;
    if (!strcmp(w, "limit")) return TS_E_LIMIT;
    return TS_E_ARG;
}

/* The expected strict status of rel ("png/x.png"), or -1 when not listed. */
static int expected_status(const char *rel)
{
    FILE *f = fopen(REGRESS "/expected.txt", "r");
    char line[512], name[400], word[32];
    int found = -1;
    while (f && fgets(line, sizeof line, f))
        if (line[0] != '#' && sscanf(line, "%399s %31s", name, word) == 2 && !strcmp(name, rel))
            found = (int)status_from_word(word);
    if (f)
        fclose(f);
    return found;
}

static void save_and_reload(const char *name, const ts_image *img)
{
    char path[700];
    ts_err err = {0};
    ts_image back;
    snprintf(path, sizeof path, "%s/out.png", tmpdir);
    CHECK_MSG(ts_image_save(path, img, NULL, &err) == TS_OK, "%s as PNG: %s", name, err.msg);
    if (ts_image_load(path, NULL, &back, &err) == TS_OK) {
        CHECK_MSG(ct_same_pixels(img, &back), "%s: PNG round trip changed the pixels", name);
        ts_image_free(&back);
    } else {
        CHECK_MSG(0, "%s: our PNG does not load: %s", name, err.msg);
    }
    snprintf(path, sizeof path, "%s/out.jpg", tmpdir);
    CHECK_MSG(ts_image_save(path, img, NULL, &err) == TS_OK, "%s as JPEG: %s", name, err.msg);
    CHECK_MSG(ts_image_load(path, NULL, &back, &err) == TS_OK, "%s: our JPEG does not load: %s",
              name, err.msg);
    ts_image_free(&back);
}

static ts_status load_one(const char *path, const char *name, int accept_damaged)
{
    ts_load_opts opts = {0, NULL, accept_damaged, 0};
    ts_image img;
    ts_err err = {0};
    ts_status st = ts_image_load(path, &opts, &img, &err);
    if (st == TS_OK) {
        CHECK(img.data && img.w > 0 && img.h > 0 && img.c >= 1 && img.c <= 4);
        CHECK(img.orientation >= 1 && img.orientation <= 8);
        save_and_reload(name, &img);
        ts_image_free(&img);
    } else {
        CHECK_MSG(ct_starts_with(err.msg, path), "%s: message does not name it: %s", name, err.msg);
        CHECK_MSG(strchr(err.msg, '\n') == NULL, "%s: message is not one line", name);
        CHECK(img.data == NULL && img.icc == NULL);
    }
    return st;
}

static void check_image_file(const char *dir, const char *file)
{
    char path[700], rel[400];
    snprintf(path, sizeof path, "%s/%s/%s", REGRESS, dir, file);
    snprintf(rel, sizeof rel, "%s/%s", dir, file);
    ts_status strict = load_one(path, rel, 0);
    ts_status lenient = load_one(path, rel, 1);
    /* Accepting damage can only turn a refusal into a success. */
    CHECK_MSG(strict != TS_OK || lenient == TS_OK, "%s: loads strict, not lenient", rel);
    ts_image_info info;
    ts_err err = {0};
    if (ts_image_probe(path, &info, &err) != TS_OK)
        CHECK_MSG(ct_starts_with(err.msg, path), "%s: probe message: %s", rel, err.msg);
    int want = expected_status(rel);
    if (want >= 0) {
        CHECK_MSG((int)strict == want, "%s: status %d, expected %d", rel, strict, want);
        n_expected++;
    }
    fprintf(stderr, "  %-28s strict: %s, damaged accepted: %s\n", rel, ts_status_name(strict),
            ts_status_name(lenient));
    n_images++;
}

static void check_chain_file(const char *file)
{
    char path[700];
    snprintf(path, sizeof path, "%s/chain/%s", REGRESS, file);
    size_t n;
    unsigned char *data = ct_read_file(path, &n);
    CHECK(data != NULL);
    if (!data)
        return;
    char *text = malloc(n + 1);
    memcpy(text, data, n);
    text[n] = '\0';
    ts_chain *chain = NULL, *again = NULL;
    ts_err err = {0};
    if (ts_chain_parse(text, &chain, &err) == TS_OK) {
        const char *canon = ts_chain_describe(chain);
        CHECK_MSG(ts_chain_parse(canon, &again, &err) == TS_OK, "%s: '%s': %s", file, canon, err.msg);
        if (again)
            CHECK_MSG(!strcmp(ts_chain_describe(again), canon), "%s: description changes", file);
        ts_chain_free(again);
        ts_chain_free(chain);
    } else {
        CHECK_MSG(err.msg[0] != '\0', "%s: refused without a reason", file);
    }
    n_chains++;
    free(text);
    free(data);
}

static void walk(const char *dir, void (*fn)(const char *dir, const char *file))
{
    char path[600];
    snprintf(path, sizeof path, "%s/%s", REGRESS, dir);
    DIR *d = opendir(path);
    if (!d)
        return;   /* git keeps no empty folders */
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            fn(dir, e->d_name);
    closedir(d);
}

static void chain_entry(const char *dir, const char *file)
{
    (void)dir;
    check_chain_file(file);
}

int main(void)
{
    check_seed();
    ct_tempdir(tmpdir, sizeof tmpdir, "ts_fuzzreg");
    walk("png", check_image_file);
    walk("jpeg", check_image_file);
    walk("chain", chain_entry);
    fprintf(stderr, "  %d images (%d with an expected status), %d chains\n", n_images, n_expected,
            n_chains);
    CHECK(n_images > 0);
    ct_remove_tree(tmpdir);
    return check_exit();
}

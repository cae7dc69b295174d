/* test_bombs.c - small files that claim gigabytes, and damaged JPEGs.
 *
 * Every hostile file is made here (PNG chunks written with zlib, JPEGs
 * patched from the fixtures) and loaded and probed in a child process, so
 * that the child's peak resident memory (wait4's ru_maxrss) can be checked:
 * under 300 MB for each of these files, all under 1 MB, at the default
 * limits. Each case also checks the status and what the message says.
 *
 * PNG: a row of 2^31-1 pixels; 2 GB lengths claimed by tEXt, zTXt, iTXt,
 * sCAL, sPLT, pCAL, eXIf and iCCP; zlib bombs in IDAT (refused, or decoded
 * when under the bomb budget) and in zTXt, iTXt and iCCP (1 GB each when
 * inflated), and a hundred zTXt chunks of 7 MB each.
 * JPEG: headers claiming 30000x30000, 65500x65500 and 65535x65535
 * (baseline and progressive), thousands of scans, a 12-bit file, and
 * entropy data cut short (refused unless damaged files are accepted).
 * The budget goes by the bytes the decoder reads: a large ignored PNG
 * chunk, or bytes after a JPEG's EOI, buy no larger image. A valid
 * progressive JPEG of 704 scans is refused by the work budget. */
#include "check.h"
#include "codec_test.h"
#include "codec_internal.h"
#include "tilestream.h"

#include <stdint.h>
#include <stdio.h>
#include <jpeglib.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <zlib.h>

#define JDIR TS_TEST_DATA "/jpeg"
#define RSS_LIMIT_KB (300000000 / 1024)    /* 300 MB */

static char tmpdir[512];

/* ------------------------------------------------------------ making files */

typedef struct buf {
    unsigned char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *data, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) {
            perror("realloc");
            exit(1);
        }
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
}

static void put_u32(buf *b, uint32_t v)
{
    unsigned char be[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                           (unsigned char)(v >> 8), (unsigned char)v};
    put(b, be, 4);
}

/* A chunk whose length field says claimed (the real data follows). */
static void put_chunk_claiming(buf *b, const char *type, const void *data, size_t n, uint32_t claimed)
{
    put_u32(b, claimed);
    put(b, type, 4);
    put(b, data, n);
    uLong crc = crc32(0, (const Bytef *)type, 4);
    crc = crc32(crc, data, (uInt)n);
    put_u32(b, (uint32_t)crc);
}

static void put_chunk(buf *b, const char *type, const void *data, size_t n)
{
    put_chunk_claiming(b, type, data, n, (uint32_t)n);
}

static void put_png_start(buf *b, uint32_t w, uint32_t h, int depth, int color_type)
{
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    put(b, sig, 8);
    unsigned char ihdr[13];
    for (int i = 0; i < 4; i++) {
        ihdr[i] = (unsigned char)(w >> (24 - 8 * i));
        ihdr[4 + i] = (unsigned char)(h >> (24 - 8 * i));
    }
    ihdr[8] = (unsigned char)depth;
    ihdr[9] = (unsigned char)color_type;
    ihdr[10] = ihdr[11] = ihdr[12] = 0;
    put_chunk(b, "IHDR", ihdr, 13);
}

/* zlib stream of `zeros` zero bytes (best compression, about 1000:1). */
static buf deflate_zeros(uint64_t zeros)
{
    buf out = {0};
    static unsigned char in[1 << 16], chunk[1 << 16];
    z_stream z;
    memset(&z, 0, sizeof z);
    deflateInit(&z, 9);
    int flush = Z_NO_FLUSH;
    do {
        size_t n = zeros > sizeof in ? sizeof in : (size_t)zeros;
        zeros -= n;
        flush = zeros ? Z_NO_FLUSH : Z_FINISH;
        z.next_in = in;
        z.avail_in = (uInt)n;
        do {
            z.next_out = chunk;
            z.avail_out = sizeof chunk;
            deflate(&z, flush);
            put(&out, chunk, sizeof chunk - z.avail_out);
        } while (z.avail_out == 0);
    } while (flush != Z_FINISH);
    deflateEnd(&z);
    return out;
}

/* The 1x1 RGB pixel data and the end of a PNG. */
static void put_png_end(buf *b)
{
    static const unsigned char row[4] = {0, 10, 20, 30};
    unsigned char z[64];
    uLongf zn = sizeof z;
    compress(z, &zn, row, sizeof row);
    put_chunk(b, "IDAT", z, zn);
    put_chunk(b, "IEND", "", 0);
}

static const char *write_case(const char *name, const buf *b)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    if (!ct_write_file(path, b->p, b->n)) {
        perror(path);
        exit(1);
    }
    CHECK_MSG(b->n < 1000000, "%s is %zu bytes, not under 1 MB", name, b->n);
    return path;
}

/* ------------------------------------------------------------ running one */

typedef struct outcome {
    ts_status load, probe;
    char msg[1024];         /* the load's message */
    long rss_kb;            /* the child's peak resident memory */
} outcome;

/* Load and probe path in a child process with these options. */
static outcome run_in_child(const char *path, uint64_t max_pixels, int accept_damaged)
{
    outcome o = {TS_E_IO, TS_E_IO, "", 0};
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(1);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        ts_load_opts opts = {max_pixels, NULL, accept_damaged, 0};
        ts_image img;
        ts_image_info info;
        ts_err err = {0}, probe_err = {0};
        outcome r = {0};
        r.load = ts_image_load(path, &opts, &img, &err);
        snprintf(r.msg, sizeof r.msg, "%s", err.msg);
        ts_image_free(&img);
        r.probe = ts_image_probe(path, &info, &probe_err);
        ssize_t n = write(fds[1], &r, sizeof r);
        _exit(n == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fds[1]);
    ssize_t n = read(fds[0], &o, sizeof o);
    close(fds[0]);
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    wait4(pid, &status, 0, &ru);
    CHECK_MSG(n == (ssize_t)sizeof o && WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "%s: the child died (status 0x%x)", path, status);
    o.rss_kb = ru.ru_maxrss;
    return o;
}

/* One case: the load's status, words its message must hold, the probe's
 * status, and the memory. */
static outcome expect(const char *path, uint64_t max_pixels, int accept_damaged, ts_status load,
                      const char *words, ts_status probe)
{
    outcome o = run_in_child(path, max_pixels, accept_damaged);
    const char *name = strrchr(path, '/') + 1;
    fprintf(stderr, "  %-28s %s peak %5ld MB  %s\n", name, accept_damaged ? "(damaged ok)" : "",
            o.rss_kb / 1024, o.msg[0] ? o.msg + strlen(tmpdir) + 1 : "ok");
    CHECK_MSG(o.load == load, "%s: load status %d, expected %d (%s)", name, o.load, load, o.msg);
    CHECK_MSG(o.probe == probe, "%s: probe status %d, expected %d", name, o.probe, probe);
    if (load != TS_OK)
        CHECK_MSG(ct_starts_with(o.msg, path), "%s: message does not name the file: %s", name, o.msg);
    if (words)
        CHECK_MSG(strstr(o.msg, words) != NULL, "%s: message lacks '%s': %s", name, words, o.msg);
    CHECK_MSG(o.rss_kb > 0 && o.rss_kb < RSS_LIMIT_KB, "%s: peak memory %ld KB", name, o.rss_kb);
    return o;
}

/* ------------------------------------------------------------ PNG */

static void test_png_huge_rows(void)
{
    buf b = {0};
    put_png_start(&b, 0x7fffffff, 1, 8, 2);
    put_png_end(&b);
    const char *path = write_case("wide-row.png", &b);
    expect(path, 0, 0, TS_E_LIMIT, "2147483647x1", TS_OK);
    expect(path, 1000, 0, TS_E_LIMIT, "limit of 1000 pixels", TS_OK);
    free(b.p);

    b = (buf){0};
    put_png_start(&b, 1, 0x7fffffff, 16, 6);
    put_png_end(&b);
    expect(write_case("tall.png", &b), 0, 0, TS_E_LIMIT, "1x2147483647", TS_OK);
    free(b.p);

    /* Under the pixel limit, over the memory a 69-byte file may claim. */
    b = (buf){0};
    put_png_start(&b, 30000, 30000, 8, 2);
    put_png_end(&b);
    expect(write_case("30000x30000.png", &b), 0, 0, TS_E_LIMIT, "decompression bomb", TS_OK);
    free(b.p);
}

/* Chunks claiming 2 GB in a 60-byte file: each ends early (the truncation
 * is found by reading, not by allocating what the length says). */
static void test_png_chunk_lengths(void)
{
    static const char *types[] = {"tEXt", "zTXt", "iTXt", "sCAL", "sPLT", "pCAL", "eXIf", "iCCP"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        buf b = {0};
        put_png_start(&b, 1, 1, 8, 2);
        put_chunk_claiming(&b, types[i], "k\0\0MM\0*", 8, 0x7ffffff0);
        char name[64];
        snprintf(name, sizeof name, "long-%s.png", types[i]);
        const char *path = write_case(name, &b);
        outcome o = expect(path, 0, 0, TS_E_CORRUPT, NULL, TS_E_CORRUPT);
        CHECK_MSG(strstr(o.msg, "truncated") || strstr(o.msg, "too large"), "%s", o.msg);
        free(b.p);
    }
}

static void test_png_zlib_bombs(void)
{
    /* IDAT: 30000x30000 grey of zeros, 0.9 GB from 0.87 MB. A valid file,
     * refused by the bomb guard at the default limit. */
    buf rows = deflate_zeros(30000ull * 30001ull);
    buf b = {0};
    put_png_start(&b, 30000, 30000, 8, 0);
    put_chunk(&b, "IDAT", rows.p, rows.n);
    put_chunk(&b, "IEND", "", 0);
    expect(write_case("idat-bomb.png", &b), 0, 0, TS_E_LIMIT, "decompression bomb", TS_OK);
    free(rows.p);
    free(b.p);

    /* 12000x12000 grey of zeros: 144 MB from 140 KB, under the budget a
     * file of any size gets. It decodes, within the memory bound. */
    rows = deflate_zeros(12000ull * 12001ull);
    b = (buf){0};
    put_png_start(&b, 12000, 12000, 8, 0);
    put_chunk(&b, "IDAT", rows.p, rows.n);
    put_chunk(&b, "IEND", "", 0);
    expect(write_case("idat-12000.png", &b), 0, 0, TS_OK, NULL, TS_OK);
    free(rows.p);
    free(b.p);

    /* Text and profile chunks inflating to 0.9 GB each: skipped (text) or
     * cut at libpng's chunk limit (iCCP, then dropped); the pixels load. */
    buf gig = deflate_zeros(900ull << 20);
    static const struct { const char *type, *head; size_t head_len; } bombs[] = {
        {"zTXt", "key\0\0", 5}, {"iTXt", "key\0\1\0\0\0", 8}, {"iCCP", "icc\0\0", 5}};
    for (size_t i = 0; i < sizeof bombs / sizeof bombs[0]; i++) {
        buf body = {0}, file = {0};
        put(&body, bombs[i].head, bombs[i].head_len);
        put(&body, gig.p, gig.n);
        put_png_start(&file, 1, 1, 8, 2);
        put_chunk(&file, bombs[i].type, body.p, body.n);
        put_png_end(&file);
        char name[64];
        snprintf(name, sizeof name, "%s-bomb.png", bombs[i].type);
        expect(write_case(name, &file), 0, 0, TS_OK, NULL, TS_OK);
        free(body.p);
        free(file.p);
    }
    free(gig.p);

    /* A hundred zTXt chunks of 7 MB each once inflated. */
    buf seven = deflate_zeros(7u << 20);
    b = (buf){0};
    put_png_start(&b, 1, 1, 8, 2);
    for (int i = 0; i < 100; i++) {
        buf body = {0};
        put(&body, "key\0\0", 5);
        put(&body, seven.p, seven.n);
        put_chunk(&b, "zTXt", body.p, body.n);
        free(body.p);
    }
    put_png_end(&b);
    expect(write_case("many-ztxt.png", &b), 0, 0, TS_OK, NULL, TS_OK);
    free(seven.p);
    free(b.p);
}

/* ------------------------------------------------------------ JPEG */

static buf read_fixture(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", JDIR, name);
    buf b = {0};
    b.p = ct_read_file(path, &b.n);
    if (!b.p) {
        perror(path);
        exit(1);
    }
    return b;
}

/* Offset of the first marker FF xx (xx in [lo, hi]) after the SOI. */
static size_t find_marker(const buf *b, unsigned lo, unsigned hi)
{
    for (size_t i = 2; i + 1 < b->n; i++)
        if (b->p[i] == 0xFF && b->p[i + 1] >= lo && b->p[i + 1] <= hi && b->p[i + 1] != 0xC4)
            return i;
    return 0;
}

static buf jpeg_claiming(const char *fixture, unsigned w, unsigned h)
{
    buf b = read_fixture(fixture);
    size_t sof = find_marker(&b, 0xC0, 0xC2);   /* SOF0..SOF2: length, precision, h, w */
    CHECK(sof > 0);
    b.p[sof + 5] = (unsigned char)(h >> 8);
    b.p[sof + 6] = (unsigned char)h;
    b.p[sof + 7] = (unsigned char)(w >> 8);
    b.p[sof + 8] = (unsigned char)w;
    return b;
}

static void test_jpeg_huge_claims(void)
{
    static const struct { const char *fixture; unsigned side; } cases[] = {
        {"baseline.jpg", 30000}, {"baseline.jpg", 65500},
        {"progressive.jpg", 30000}, {"progressive.jpg", 65500}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        buf b = jpeg_claiming(cases[i].fixture, cases[i].side, cases[i].side);
        char name[64];
        snprintf(name, sizeof name, "%u-%s", cases[i].side, cases[i].fixture);
        const char *path = write_case(name, &b);
        /* Default limits: over the pixel limit or the bomb budget. */
        expect(path, 0, 0, TS_E_LIMIT, NULL, TS_OK);
        /* A pixel limit that allows it: the file cannot hold that many
         * blocks, so it is refused before anything is allocated. */
        expect(path, 1ull << 33, 0, TS_E_CORRUPT, "needs at least", TS_OK);
        /* Accepting damaged files does not lift the memory bound. */
        expect(path, 0, 1, TS_E_LIMIT, NULL, TS_OK);
        free(b.p);

        /* Past libjpeg's own limit of 65500 a side: a limit, said as such. */
        if (cases[i].side != 65500)
            continue;
        b = jpeg_claiming(cases[i].fixture, 65535, 65535);
        snprintf(name, sizeof name, "65535-%s", cases[i].fixture);
        path = write_case(name, &b);
        expect(path, 0, 0, TS_E_LIMIT, "65500", TS_E_LIMIT);
        expect(path, 1ull << 33, 1, TS_E_LIMIT, "65500", TS_E_LIMIT);
        free(b.p);
    }
}

/* progressive.jpg with its last scan repeated up to 5000 scans. */
static void test_jpeg_many_scans(void)
{
    buf src = read_fixture("progressive.jpg");
    size_t last = 0, eoi = src.n - 2;
    for (size_t i = 2; i + 1 < src.n; i++)
        if (src.p[i] == 0xFF && src.p[i + 1] == 0xDA)
            last = i;
    buf b = {0};
    put(&b, src.p, eoi);
    for (int i = 0; i < 5000; i++)
        put(&b, src.p + last, eoi - last);
    put(&b, src.p + eoi, 2);
    const char *path = write_case("5000-scans.jpg", &b);
    expect(path, 0, 0, TS_E_CORRUPT, "damaged JPEG", TS_OK);
    expect(path, 0, 1, TS_E_CORRUPT, "progressive scans", TS_OK);
    free(b.p);
    free(src.p);
}

static void test_jpeg_12bit(void)
{
    buf b = read_fixture("baseline.jpg");
    size_t sof = find_marker(&b, 0xC0, 0xC0);
    CHECK(sof > 0);
    b.p[sof + 1] = 0xC1;                          /* extended sequential */
    b.p[sof + 4] = 12;                            /* data precision */
    const char *path = write_case("12bit.jpg", &b);
    expect(path, 0, 0, TS_E_FORMAT, "12-bit JPEG", TS_E_FORMAT);
    expect(path, 0, 1, TS_E_FORMAT, "not supported", TS_E_FORMAT);
    free(b.p);
}

/* Entropy data cut in the middle, then EOI: libjpeg warns "premature end
 * of data segment" and fills the rest with grey. Refused unless accepted;
 * a file cut without its EOI likewise. */
static void test_jpeg_damaged(void)
{
    buf src = read_fixture("baseline.jpg");
    size_t sos = find_marker(&src, 0xDA, 0xDA);
    CHECK(sos > 0);
    size_t cut = sos + (src.n - sos) / 2;
    buf b = {0};
    put(&b, src.p, cut);
    put(&b, "\xFF\xD9", 2);
    const char *path = write_case("cut-then-eoi.jpg", &b);
    expect(path, 0, 0, TS_E_CORRUPT, "premature end of data segment", TS_OK);
    expect(path, 0, 1, TS_OK, NULL, TS_OK);
    free(b.p);

    b = (buf){0};
    put(&b, src.p, cut);
    path = write_case("cut.jpg", &b);
    expect(path, 0, 0, TS_E_CORRUPT, "truncated", TS_OK);
    expect(path, 0, 1, TS_OK, NULL, TS_OK);
    free(b.p);
    free(src.p);
}

/* A large image of zeros padded with a 4 MB ancillary chunk that the
 * decoder skips: the budget is that of the IDAT data alone. */
static void test_png_padded(void)
{
    buf b = {0};
    uint32_t side = 16384;                 /* 256 MB of grey: over the floor */
    put_png_start(&b, side, side, 8, 0);
    buf z = deflate_zeros((uint64_t)side * (side + 1));
    put_chunk(&b, "IDAT", z.p, z.n);
    size_t pad = 4u << 20;
    unsigned char *junk = calloc(1, pad);
    put_chunk(&b, "zzZz", junk, pad);      /* ancillary, private, unknown */
    put_chunk(&b, "IEND", "", 0);
    char path[700];
    snprintf(path, sizeof path, "%s/padded-chunk.png", tmpdir);
    CHECK(ct_write_file(path, b.p, b.n));
    expect(path, 0, 0, TS_E_LIMIT, "decompression bomb", TS_OK);
    free(junk);
    free(z.p);
    free(b.p);
}

/* A JPEG claiming 16000x16000 (768 MB) followed by 4 MB after its EOI. */
static void test_jpeg_padded(void)
{
    buf head = jpeg_claiming("baseline.jpg", 16000, 16000);
    buf b = {0};
    put(&b, head.p, head.n);
    size_t pad = 4u << 20;
    unsigned char *junk = calloc(1, pad);
    put(&b, junk, pad);
    char path[700];
    snprintf(path, sizeof path, "%s/padded-after-eoi.jpg", tmpdir);
    CHECK(ct_write_file(path, b.p, b.n));
    expect(path, 0, 0, TS_E_LIMIT, "decompression bomb", TS_OK);
    free(junk);
    free(head.p);
    free(b.p);
}

/* A valid grey progressive JPEG of 704 scans: the DC band and each of the
 * 63 AC coefficients alone, each first at Al = 10 and refined down to 0. */
static void write_many_scan_jpeg(const char *path, int side)
{
    static jpeg_scan_info scans[64 * 11];
    int n = 0;
    for (int band = 0; band < 64; band++)
        for (int al = 10; al >= 0; al--) {
            jpeg_scan_info *s = &scans[n++];
            s->comps_in_scan = 1;
            s->component_index[0] = 0;
            s->Ss = band;
            s->Se = band;
            s->Ah = al == 10 ? 0 : al + 1;
            s->Al = al;
        }
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    jpeg_stdio_dest(&c, f);
    c.image_width = c.image_height = (JDIMENSION)side;
    c.input_components = 1;
    c.in_color_space = JCS_GRAYSCALE;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 95, TRUE);
    c.scan_info = scans;
    c.num_scans = n;
    jpeg_start_compress(&c, TRUE);
    unsigned char *row = malloc((size_t)side);
    while (c.next_scanline < c.image_height) {
        for (int x = 0; x < side; x++) row[x] = (unsigned char)((x * 7 + (int)c.next_scanline * 13) ^ (x >> 3));
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    fclose(f);
    free(row);
}

static void test_jpeg_work_budget(void)
{
    char path[700];
    snprintf(path, sizeof path, "%s/704-scans.jpg", tmpdir);
    write_many_scan_jpeg(path, 512);
    ts_image img;
    ts_err err = {0};
    ts_load_opts tight = {0, NULL, 0, 50u * 1000 * 1000};   /* 190 passes of 512x512 */
    CHECK_MSG(ts_image_load(path, &tight, &img, &err) == TS_E_LIMIT, "%s", err.msg);
    CHECK_MSG(ct_starts_with(err.msg, path) && strstr(err.msg, "--max-work"), "%s", err.msg);
    ts_load_opts plenty = {0, NULL, 0, 1000u * 1000 * 1000};
    CHECK_MSG(ts_image_load(path, &plenty, &img, &err) == TS_OK, "%s", err.msg);
    CHECK(img.w == 512 && img.h == 512);
    ts_image_free(&img);
    /* the default: 16 passes over the image, at least the floor */
    ts_load_limits lim = {0};
    CHECK(ts_decode_work_budget(&lim, 1000) == TS_WORK_FLOOR);
    CHECK(ts_decode_work_budget(&lim, 1000ull * 1000 * 1000) == TS_WORK_PASSES * 1000ull * 1000 * 1000);
    lim.max_work = 5;
    CHECK(ts_decode_work_budget(&lim, 1000ull * 1000 * 1000) == 5);
}

int main(void)
{
    check_seed();
    ct_tempdir(tmpdir, sizeof tmpdir, "ts_bombs");
    test_png_huge_rows();
    test_png_chunk_lengths();
    test_png_zlib_bombs();
    test_jpeg_huge_claims();
    test_jpeg_many_scans();
    test_jpeg_12bit();
    test_jpeg_damaged();
    test_png_padded();
    test_jpeg_padded();
    test_jpeg_work_budget();
    ct_remove_tree(tmpdir);
    return check_exit();
}

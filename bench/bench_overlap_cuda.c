/* bench_overlap_cuda.c - `tilestream bench overlap`: how well the engine
 * hides kernels behind PCIe copies and the two copy directions behind each
 * other, for 1, 2, 4 and 8 streams, from pinned and from pageable memory.
 *
 * An in-memory batch of random images (no codecs) goes through a 3-op
 * chain. The yardstick is the bus itself, measured in the same run: two
 * large copies in opposite directions at once. With enough streams the
 * engine's H2D + D2H should approach that rate. */
#include "bench.h"
#include "bench_text.h"
#include "engine_internal.h"
#include "tilestream.h"
#include "trace_internal.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_CHAIN "matrix=sepia,gauss=sigma=1,transpose"
enum { BENCH_IMAGES = 64, BENCH_C = 4 };
static const int stream_counts[] = {1, 2, 4, 8};
#define N_COUNTS ((int)(sizeof stream_counts / sizeof stream_counts[0]))

/* ------------------------------------------------------------ output */

typedef struct bench_out {
    const ts_bench_opts *o;  /* may be NULL */
    bench_text json;
} bench_out;

/* ------------------------------------------------------------ the bus */

typedef struct bus_rates {
    double h2d, d2h, both;   /* GB/s; both = bytes of the two directions / time */
} bus_rates;

static double time_copies(void *dev_a, void *host_a, void *dev_b, void *host_b, size_t bytes,
                          cudaStream_t s1, cudaStream_t s2, int up, int down, cudaEvent_t e0, cudaEvent_t e1)
{
    double best = 1e30;
    for (int rep = 0; rep < 4; rep++) {
        cudaDeviceSynchronize();
        cudaEventRecord(e0, s1);
        cudaStreamWaitEvent(s2, e0, 0);
        if (up) cudaMemcpyAsync(dev_a, host_a, bytes, cudaMemcpyHostToDevice, s1);
        if (down) cudaMemcpyAsync(host_b, dev_b, bytes, cudaMemcpyDeviceToHost, s2);
        cudaEventRecord(e1, s2);
        cudaStreamWaitEvent(s1, e1, 0);
        cudaEventRecord(e1, s1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rep > 0 && ms > 0 && ms < best) best = ms; /* the first one warms up */
    }
    return best * 1e-3;
}

/* Plain pinned copies of 256 MB: one direction, the other, both at once. */
static ts_status measure_bus(bus_rates *r, ts_err *err)
{
    const size_t bytes = (size_t)256 << 20;
    void *ha = NULL, *hb = NULL, *da = NULL, *db = NULL;
    cudaStream_t s1 = NULL, s2 = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudaError_t ce = cudaHostAlloc(&ha, bytes, cudaHostAllocDefault);
    if (ce == cudaSuccess) ce = cudaHostAlloc(&hb, bytes, cudaHostAllocDefault);
    if (ce == cudaSuccess) ce = cudaMalloc(&da, bytes);
    if (ce == cudaSuccess) ce = cudaMalloc(&db, bytes);
    if (ce == cudaSuccess) ce = cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    if (ce == cudaSuccess) ce = cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    if (ce == cudaSuccess) ce = cudaEventCreate(&e0);
    if (ce == cudaSuccess) ce = cudaEventCreate(&e1);
    if (ce == cudaSuccess) {
        memset(ha, 0x5a, bytes);
        cudaMemset(db, 0x3c, bytes);
        double t_up = time_copies(da, ha, db, hb, bytes, s1, s2, 1, 0, e0, e1);
        double t_down = time_copies(da, ha, db, hb, bytes, s1, s2, 0, 1, e0, e1);
        double t_both = time_copies(da, ha, db, hb, bytes, s1, s2, 1, 1, e0, e1);
        r->h2d = (double)bytes / t_up * 1e-9;
        r->d2h = (double)bytes / t_down * 1e-9;
        r->both = 2.0 * (double)bytes / t_both * 1e-9;
        ce = cudaGetLastError();
    }
    if (e0) cudaEventDestroy(e0);
    if (e1) cudaEventDestroy(e1);
    if (s1) cudaStreamDestroy(s1);
    if (s2) cudaStreamDestroy(s2);
    cudaFree(da);
    cudaFree(db);
    cudaFreeHost(ha);
    cudaFreeHost(hb);
    if (ce != cudaSuccess) return ts_err_set(err, TS_E_DEVICE, "bench overlap: measuring the bus: %s", cudaGetErrorString(ce));
    return TS_OK;
}

/* ------------------------------------------------------------ the batch */

typedef struct batch_mem {
    unsigned char *pinned, *pageable;
    size_t image_bytes;
    int n, w, h;
} batch_mem;

/* Random bytes, different for every image (xorshift64, 8 bytes a step). */
static void fill_random(unsigned char *p, size_t n, unsigned long long seed)
{
    unsigned long long x = seed | 1;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        memcpy(p + i, &x, 8);
    }
    for (; i < n; i++) p[i] = (unsigned char)(x >> (8 * (i & 7)));
}

static ts_status batch_make(batch_mem *m, int w, int h, int n, ts_err *err)
{
    memset(m, 0, sizeof *m);
    m->w = w;
    m->h = h;
    m->n = n;
    m->image_bytes = (size_t)w * (size_t)h * BENCH_C;
    size_t total = m->image_bytes * (size_t)n;
    cudaError_t ce = cudaHostAlloc((void **)&m->pinned, total, cudaHostAllocDefault);
    if (ce != cudaSuccess) {
        m->pinned = NULL;
        return ts_err_set(err, TS_E_NOMEM, "bench overlap: cannot pin %zu MB for the batch: %s", total >> 20,
                          cudaGetErrorString(ce));
    }
    m->pageable = malloc(total);
    if (!m->pageable) return ts_err_set(err, TS_E_NOMEM, "bench overlap: cannot allocate %zu MB", total >> 20);
    for (int i = 0; i < n; i++) fill_random(m->pinned + (size_t)i * m->image_bytes, m->image_bytes, 0x9e3779b97f4a7c15ull * (unsigned)(i + 1));
    memcpy(m->pageable, m->pinned, total);
    return TS_OK;
}

static void batch_free(batch_mem *m)
{
    cudaFreeHost(m->pinned);
    free(m->pageable);
}

static ts_image batch_image(const batch_mem *m, int i, int pageable)
{
    ts_image img;
    memset(&img, 0, sizeof img);
    img.w = m->w;
    img.h = m->h;
    img.c = BENCH_C;
    img.type = TS_U8;
    img.stride = (size_t)m->w * BENCH_C;
    img.data = (pageable ? m->pageable : m->pinned) + (size_t)i * m->image_bytes;
    img.orientation = 1;
    return img;
}

/* ------------------------------------------------------------ one run */

typedef struct run_figures {
    double wall_s;
    uint64_t h2d_bytes, d2h_bytes;
    double busy_h2d, busy_d2h, busy_kernels;  /* union of each stage class */
    double stage_sum;                          /* sum of every event's duration */
} run_figures;

/* Push the whole batch through e, keeping a few images in flight. */
static ts_status run_batch(ts_engine *e, const ts_chain *chain, const batch_mem *m, int pageable, int depth,
                           ts_err *err)
{
    ts_image *outs = calloc((size_t)m->n, sizeof *outs);
    if (!outs) return ts_err_set(err, TS_E_NOMEM, "bench overlap: out of memory");
    ts_status st = TS_OK;
    int submitted = 0, collected = 0;
    while (collected < submitted || (submitted < m->n && st == TS_OK)) {
        if (submitted < m->n && st == TS_OK && submitted - collected < depth) {
            ts_image in = batch_image(m, submitted, pageable);
            st = ts_engine_submit(e, chain, &in, &outs[submitted], NULL, submitted, err);
            if (st == TS_OK) submitted++;
            continue;
        }
        ts_status got = TS_OK;
        ts_err e2;
        if (!ts_engine_collect(e, NULL, &got, &e2)) break;
        ts_image_free(&outs[collected++]);
        if (got != TS_OK && st == TS_OK) {
            st = got;
            if (err) *err = e2;
        }
    }
    free(outs);
    return st;
}

static ts_status run_config(const ts_chain *chain, const batch_mem *m, int streams, int pageable, int tile_w,
                            int tile_h, int reps, run_figures *best, ts_err *err)
{
    static const ts_allocator malloc_alloc = {0};   /* zeroed: malloc and free */
    ts_trace *t = ts_trace_create();
    if (!t) return ts_err_set(err, TS_E_NOMEM, "bench overlap: out of memory");
    ts_engine_opts eo;
    memset(&eo, 0, sizeof eo);
    eo.streams = streams;
    eo.tile_w = tile_w;
    eo.tile_h = tile_h;
    eo.trace = t;
    ts_engine *e = NULL;
    ts_status st = ts_engine_create(&eo, &e, err);
    if (st == TS_OK && pageable) ts_engine_set_out_allocator(e, &malloc_alloc);
    int depth = 2 * streams + 2;
    /* The first pass fills the pinned pool and grows the device buffers. */
    if (st == TS_OK) st = run_batch(e, chain, m, pageable, depth, err);
    memset(best, 0, sizeof *best);
    best->wall_s = 1e30;
    for (int rep = 0; rep < reps && st == TS_OK; rep++) {
        ts_trace_clear(t);
        double t0 = ts_now();
        st = run_batch(e, chain, m, pageable, depth, err);
        double wall = ts_now() - t0;
        if (st != TS_OK || wall >= best->wall_s) continue;
        run_figures f;
        memset(&f, 0, sizeof f);
        f.wall_s = wall;
        ts_stage_stat s[32];
        int n = ts_trace_summary(t, s, 32);
        for (int i = 0; i < n; i++) {
            if (!strcmp(s[i].stage, "h2d")) f.h2d_bytes = s[i].bytes;
            if (!strcmp(s[i].stage, "d2h")) f.d2h_bytes = s[i].bytes;
            f.stage_sum += s[i].busy_s;
        }
        f.busy_h2d = ts_trace_busy(t, "h2d");
        f.busy_d2h = ts_trace_busy(t, "d2h");
        f.busy_kernels = ts_trace_busy(t, "!h2d,d2h");
        *best = f;
    }
    ts_engine_destroy(e);
    ts_trace_free(t);
    return st;
}

/* ------------------------------------------------------------ report */

static void report_run(bench_out *b, const run_figures *f, int streams, int pageable, const bus_rates *bus,
                       double serial_s, int first)
{
    double up = (double)f->h2d_bytes / f->wall_s * 1e-9, down = (double)f->d2h_bytes / f->wall_s * 1e-9;
    double share = (up + down) / bus->both;
    double overlap = (f->busy_h2d + f->busy_kernels + f->busy_d2h) / f->wall_s;
    bench_say(b->o, "%-9s %7d %9.2f %9.1f %9.1f %8.3f %9.2f %8.2f %9.2f %8.2f %8.2fx", pageable ? "pageable" : "pinned",
              streams, f->wall_s * 1e3, up, down, share, overlap, f->busy_h2d * 1e3, f->busy_kernels * 1e3,
              f->busy_d2h * 1e3, serial_s / f->wall_s);
    bench_text_add(&b->json,
                   "%s\n    {\"memory\": \"%s\", \"streams\": %d, \"wall_ms\": %.3f, \"h2d_GBps\": %.2f, "
                   "\"d2h_GBps\": %.2f, \"both_share_of_bus\": %.4f, \"overlap_efficiency\": %.3f, "
                   "\"busy_h2d_ms\": %.3f, \"busy_kernels_ms\": %.3f, \"busy_d2h_ms\": %.3f, "
                   "\"stage_sum_ms\": %.3f, \"speedup_vs_serial\": %.3f}",
                   first ? "" : ",", pageable ? "pageable" : "pinned", streams, f->wall_s * 1e3, up, down, share,
                   overlap, f->busy_h2d * 1e3, f->busy_kernels * 1e3, f->busy_d2h * 1e3, f->stage_sum * 1e3,
                   serial_s / f->wall_s);
}

static ts_status bench_all(bench_out *b, const ts_chain *chain, const batch_mem *m, const bus_rates *bus, int reps,
                           ts_err *err)
{
    bench_say(b->o, "%-9s %7s %9s %9s %9s %8s %9s %8s %9s %8s %9s", "memory", "streams", "wall ms", "H2D GB/s", "D2H GB/s",
              "of bus", "overlap", "h2d ms", "kernel ms", "d2h ms", "vs serial");
    bench_text_add(&b->json, "  \"runs\": [");
    ts_status st = TS_OK;
    int first = 1;
    for (int pageable = 0; pageable <= 1 && st == TS_OK; pageable++) {
        double serial = 0;
        for (int i = 0; i < N_COUNTS && st == TS_OK; i++) {
            run_figures f;
            st = run_config(chain, m, stream_counts[i], pageable, 0, 0, reps, &f, err);
            if (st != TS_OK) break;
            /* With one stream nothing overlaps: its stage sum is the serial time. */
            if (i == 0) serial = f.stage_sum;
            report_run(b, &f, stream_counts[i], pageable, bus, serial, first);
            first = 0;
        }
        if (st == TS_OK)
            bench_say(b->o, "%s: serial time (1-stream sum of h2d + kernels + d2h) %.2f ms",
                      pageable ? "pageable" : "pinned", serial * 1e3);
    }
    bench_text_add(&b->json, "\n  ]");
    return st;
}

/* The same pinned batch on 4 streams cut four ways: the engine's own
 * choice, whole images, full-width strips and full-height strips (the
 * chain transposes, so one copy direction of a strip has short rows). */
static ts_status bench_tilings(bench_out *b, const ts_chain *chain, const batch_mem *m, const bus_rates *bus,
                               int reps, ts_err *err)
{
    int out_w = m->h, out_h = m->w;   /* transposed */
    int strip_rows = (int)(((size_t)8 << 20) / ((size_t)out_w * BENCH_C));
    int strip_cols = (int)(((size_t)8 << 20) / ((size_t)out_h * BENCH_C));
    strip_rows = strip_rows < 1 ? 1 : strip_rows > out_h ? out_h : strip_rows;
    strip_cols = strip_cols < 1 ? 1 : strip_cols > out_w ? out_w : strip_cols;
    struct { const char *name; int tw, th; } tilings[] = {
        {"auto", 0, 0},
        {"whole image", out_w, out_h},
        {"8 MB rows", 0, strip_rows},
        {"8 MB columns", strip_cols, 0},
    };
    bench_say(b->o, "pinned, 4 streams, by tile shape:");
    bench_say(b->o, "%-14s %9s %9s %9s %8s %8s %8s", "tiles", "wall ms", "H2D GB/s", "D2H GB/s", "of bus", "h2d ms",
              "d2h ms");
    bench_text_add(&b->json, ",\n  \"tilings\": [");
    ts_status st = TS_OK;
    for (int i = 0; i < 4 && st == TS_OK; i++) {
        run_figures f;
        st = run_config(chain, m, 4, 0, tilings[i].tw, tilings[i].th, reps, &f, err);
        if (st != TS_OK) break;
        double up = (double)f.h2d_bytes / f.wall_s * 1e-9, down = (double)f.d2h_bytes / f.wall_s * 1e-9;
        char shape[32];
        snprintf(shape, sizeof shape, "%dx%d", tilings[i].tw ? tilings[i].tw : out_w, tilings[i].th ? tilings[i].th : out_h);
        bench_say(b->o, "%-14s %9.2f %9.1f %9.1f %8.3f %8.2f %8.2f   %s", tilings[i].name, f.wall_s * 1e3, up, down,
                  (up + down) / bus->both, f.busy_h2d * 1e3, f.busy_d2h * 1e3, i ? shape : "");
        bench_text_add(&b->json,
                       "%s\n    {\"tiles\": \"%s\", \"tile_w\": %d, \"tile_h\": %d, \"wall_ms\": %.3f, \"h2d_GBps\": %.2f, "
                       "\"d2h_GBps\": %.2f, \"both_share_of_bus\": %.4f, \"busy_h2d_ms\": %.3f, \"busy_d2h_ms\": %.3f}",
                       i ? "," : "", tilings[i].name, tilings[i].tw, tilings[i].th, f.wall_s * 1e3, up, down,
                       (up + down) / bus->both, f.busy_h2d * 1e3, f.busy_d2h * 1e3);
    }
    bench_text_add(&b->json, "\n  ]");
    return st;
}

ts_status ts_bench_overlap(const ts_bench_opts *opts, char **json, ts_err *err)
{
    bench_out b;
    memset(&b, 0, sizeof b);
    b.o = opts;
    if (json) *json = NULL;
    int w = opts && opts->w > 0 ? opts->w : 3840, h = opts && opts->h > 0 ? opts->h : 2160;
    int reps = opts && opts->reps ? opts->reps : 3;
    if (ts_option_check(TS_OPT_REPS, reps, err) != TS_OK) return TS_E_ARG;
    char name[160];
    if (!ts_gpu_probe(name, sizeof name, err)) return err ? err->status : TS_E_DEVICE;
    ts_chain *chain = NULL;
    ts_status st = ts_chain_parse(BENCH_CHAIN, &chain, err);
    if (st != TS_OK) return st;
    bus_rates bus = {0, 0, 0};
    st = measure_bus(&bus, err);
    batch_mem m;
    memset(&m, 0, sizeof m);
    if (st == TS_OK) st = batch_make(&m, w, h, BENCH_IMAGES, err);
    if (st == TS_OK) {
        bench_say(b.o, "overlap: %d images of %dx%d RGBA8 (%.1f MB each), in memory, chain %s", BENCH_IMAGES, w, h,
                  (double)m.image_bytes / 1e6, BENCH_CHAIN);
        bench_say(b.o, "device %s; bus, pinned, 256 MB copies: H2D %.1f GB/s, D2H %.1f GB/s, both at once %.1f GB/s",
                  name, bus.h2d, bus.d2h, bus.both);
        bench_say(b.o, "of bus = (H2D + D2H bytes) / wall / both-at-once rate; overlap = (h2d + kernel + d2h busy) / wall;"
                       " vs serial = 1-stream stage sum / wall");
        bench_text_add(&b.json,
                       "{\n  \"device\": \"%s\", \"images\": %d, \"w\": %d, \"h\": %d, \"c\": %d, \"type\": \"u8\", "
                       "\"chain\": \"%s\", \"reps\": %d,\n  \"bus_GBps\": {\"h2d\": %.2f, \"d2h\": %.2f, \"both\": %.2f},\n",
                       name, BENCH_IMAGES, w, h, BENCH_C, BENCH_CHAIN, reps, bus.h2d, bus.d2h, bus.both);
        st = bench_all(&b, chain, &m, &bus, reps, err);
        if (st == TS_OK) st = bench_tilings(&b, chain, &m, &bus, reps, err);
        bench_text_add(&b.json, "\n}");
    }
    batch_free(&m);
    ts_chain_free(chain);
    if (st == TS_OK && b.json.failed) st = ts_err_set(err, TS_E_NOMEM, "bench overlap: out of memory for the JSON");
    if (st == TS_OK && json) *json = b.json.s;
    else free(b.json.s);
    return st;
}

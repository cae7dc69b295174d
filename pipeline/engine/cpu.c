/* cpu.c - the CPU backend: runs a plan tile by tile with the fast CPU ops
 * (kernels/<family>/cpu_*.c, each checked against the reference), the tiles of an
 * image spread over a thread pool. The fallback without a GPU. */
#include "plan.h"
#include "pool.h"
#include "tsk_cpu.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A view over rectangle r of a whole image held in img. */
static ts_view image_view(const ts_image *img, ts_rect r, int full_w, int full_h)
{
    ts_view v;
    size_t px = ts_pixel_bytes(img);
    v.data = img->data + (size_t)r.y0 * img->stride + (size_t)r.x0 * px;
    v.pitch = img->stride;
    v.x0 = r.x0; v.y0 = r.y0; v.w = r.w; v.h = r.h;
    v.full_w = full_w; v.full_h = full_h;
    v.c = img->c; v.type = img->type;
    return v;
}

/* A buffer from a (malloc when zeroed) holding rectangle r of a stage. */
static ts_status alloc_view(ts_view *v, ts_rect r, int full_w, int full_h, int c, ts_type t, const ts_allocator *a,
                            ts_err *err)
{
    size_t pitch = (size_t)(r.w > 0 ? r.w : 1) * (size_t)c * (size_t)t;
    size_t bytes = pitch * (size_t)(r.h > 0 ? r.h : 1);
    v->data = a->alloc ? a->alloc(a->ctx, bytes) : malloc(bytes);
    if (!v->data) return ts_err_set(err, TS_E_NOMEM, "out of memory for a %dx%d tile", r.w, r.h);
    v->pitch = pitch;
    v->x0 = r.x0; v->y0 = r.y0; v->w = r.w; v->h = r.h;
    v->full_w = full_w; v->full_h = full_h;
    v->c = c; v->type = t;
    return TS_OK;
}

static void free_view_data(const ts_allocator *a, void *p)
{
    if (a->free) a->free(a->ctx, p);
    else free(p);
}

/* Compute output rectangle tile of plan into out: each op in turn on
 * exactly the region the rest of the chain needs, the stages in between
 * in buffers from a. */
static ts_status run_tile(const ts_plan *plan, const ts_image *in, ts_rect tile, ts_rect *r,
                          const ts_allocator *a, ts_image *out, ts_err *err)
{
    ts_plan_regions(plan, tile, r);
    ts_view src = image_view(in, r[0], plan->w[0], plan->h[0]);
    unsigned char *owned = NULL;
    ts_status st = TS_OK;
    for (int k = 0; k < plan->n && st == TS_OK; k++) {
        ts_view dst;
        if (k == plan->n - 1) {
            dst = image_view(out, r[k + 1], plan->w[k + 1], plan->h[k + 1]);
        } else if ((st = alloc_view(&dst, r[k + 1], plan->w[k + 1], plan->h[k + 1], plan->c, plan->type, a, err)) !=
                   TS_OK) {
            break;
        }
        st = tsk_cpu_apply(&plan->ops[k], &src, &dst, err);
        free_view_data(a, owned);
        owned = k == plan->n - 1 ? NULL : dst.data;
        src = dst;
    }
    free_view_data(a, owned);
    return st;
}

/* The tiles of one image, run as tasks of the pool; the first failure is
 * kept and the tiles not yet started are skipped. */
typedef struct tile_job {
    const ts_plan *plan;
    const ts_image *in;
    ts_image *out;
    ts_allocator alloc;       /* the stages between ops */
    int tile_w, tile_h, tiles_x;
    pthread_mutex_t lock;
    int failed;
    ts_status st;
    ts_err *err;
} tile_job;

static void tile_task(void *ctx, int i)
{
    tile_job *j = ctx;
    int ow = j->plan->w[j->plan->n], oh = j->plan->h[j->plan->n];
    int x = (i % j->tiles_x) * j->tile_w, y = (i / j->tiles_x) * j->tile_h;
    ts_rect t = { x, y, x + j->tile_w <= ow ? j->tile_w : ow - x, y + j->tile_h <= oh ? j->tile_h : oh - y };
    ts_rect r_small[16], *r = r_small;
    ts_err e = { 0 };
    ts_status st = TS_OK;
    pthread_mutex_lock(&j->lock);
    int skip = j->failed;
    pthread_mutex_unlock(&j->lock);
    if (skip) return;
    if (j->plan->n + 1 > 16 && !(r = malloc(sizeof(ts_rect) * (size_t)(j->plan->n + 1))))
        st = ts_err_set(&e, TS_E_NOMEM, "out of memory");
    if (st == TS_OK) st = run_tile(j->plan, j->in, t, r, &j->alloc, j->out, &e);
    if (r != r_small) free(r);
    if (st == TS_OK) return;
    pthread_mutex_lock(&j->lock);
    if (!j->failed) {
        j->failed = 1;
        j->st = st;
        if (j->err) *j->err = e;
    }
    pthread_mutex_unlock(&j->lock);
}

/* Automatic tiles: squares of 256 pixels, or smaller (down to 64) while an
 * image has fewer than two per thread. Strips of whole rows (about 128, a
 * multiple of the thread count), used before, were rejected: slower on a
 * chain with a transpose, the outputs byte-identical
 * (docs/measurements/pipeline.md). A strip of a transposed output needs a
 * tall narrow column of input (on a 6000x4000 image, 4000 rows of 375
 * bytes: a page and a TLB entry per row), and a few large tasks
 * per thread leave threads idle at the end where many small ones even out.
 * The halo a convolution repeats costs the same 10% either way (12 more rows
 * and columns of 256, against 12 more rows of 125).
 *
 * A chain that only maps rows to rows (per-pixel ops, flips, rot180) reads
 * and writes whole rows in memory order when cut into strips of as many
 * pixels as a square, where a square reads 256 pieces of 768 bytes (RGB8)
 * from as many pages, and runs markedly slower for it
 * (docs/measurements/pipeline.md). */
void ts_cpu_auto_tile(int ow, int oh, int threads, int rows, int *tile_w, int *tile_h)
{
    if (rows) {
        long th = (65536L + ow - 1) / (ow > 0 ? ow : 1);
        while (th > 1 && (oh + th - 1) / th < 2L * threads) th = (th + 1) / 2;
        *tile_w = ow > 0 ? ow : 1;
        *tile_h = (int)th;
        return;
    }
    int side = 256;
    while (side > 64 && (long)((ow + side - 1) / side) * ((oh + side - 1) / side) < 2L * threads) side /= 2;
    *tile_w = side;
    *tile_h = side;
}

/* Whether every op of the plan maps each row of its input to one row of its
 * output, needing no neighbours: strips of rows then suit it. */
static int rows_to_rows(const ts_plan *plan)
{
    for (int k = 0; k < plan->n; k++)
        if (!tsk_rows_to_rows(&plan->ops[k])) return 0;
    return 1;
}

static void copy_pixels(const ts_image *in, ts_image *out)
{
    size_t row = (size_t)in->w * ts_pixel_bytes(in);
    for (int y = 0; y < in->h; y++)
        memcpy(out->data + (size_t)y * out->stride, in->data + (size_t)y * in->stride, row);
}

static void copy_icc(const ts_image *in, ts_image *out)
{
    if (!in->icc || !in->icc_len) return;
    out->icc = malloc(in->icc_len);
    if (!out->icc) return;
    memcpy(out->icc, in->icc, in->icc_len);
    out->icc_len = in->icc_len;
}

static ts_status run_tiles(const ts_plan *plan, const ts_image *in, int tile_w, int tile_h, ts_pool *pool,
                           ts_image *out, ts_err *err)
{
    int ow = plan->w[plan->n], oh = plan->h[plan->n];
    if (tile_w <= 0 && tile_h <= 0) ts_cpu_auto_tile(ow, oh, ts_pool_threads(pool), rows_to_rows(plan), &tile_w, &tile_h);
    if (tile_w <= 0 || tile_w > ow) tile_w = ow;
    if (tile_h <= 0 || tile_h > oh) tile_h = oh;
    tile_job j = { .plan = plan, .in = in, .out = out, .alloc = ts_pool_allocator(pool), .tile_w = tile_w,
                   .tile_h = tile_h, .tiles_x = (ow + tile_w - 1) / tile_w, .st = TS_OK, .err = err };
    pthread_mutex_init(&j.lock, NULL);
    long tiles = (long)j.tiles_x * ((oh + tile_h - 1) / tile_h);
    if (tiles > INT_MAX) j.st = ts_err_set(err, TS_E_ARG, "%ld tiles of %dx%d: too many", tiles, tile_w, tile_h);
    else ts_pool_run(pool, (int)tiles, tile_task, &j);
    pthread_mutex_destroy(&j.lock);
    return j.st;
}

ts_status ts_cpu_run_pool(const ts_chain *chain, const ts_image *in, int tile_w, int tile_h, ts_pool *pool,
                          ts_image *out, ts_err *err)
{
    ts_plan plan;
    ts_status st = ts_plan_make(chain, in->w, in->h, in->c, in->type, &plan, err);
    if (st != TS_OK) return st;
    ts_allocator a = ts_pool_allocator(pool);   /* reused buffers: no page faults for each image */
    st = ts_image_alloc(out, plan.w[plan.n], plan.h[plan.n], in->c, in->type, 0, a.alloc ? &a : NULL, err);
    if (st != TS_OK) { ts_plan_free(&plan); return st; }
    out->orientation = 1;
    copy_icc(in, out);
    if (plan.n == 0) copy_pixels(in, out); /* empty chain: pixels unchanged */
    else st = run_tiles(&plan, in, tile_w, tile_h, pool, out, err);
    ts_plan_free(&plan);
    if (st != TS_OK) ts_image_free(out);
    return st;
}

ts_status ts_cpu_run(const ts_chain *chain, const ts_image *in, int tile_w, int tile_h,
                     ts_image *out, ts_err *err)
{
    return ts_cpu_run_pool(chain, in, tile_w, tile_h, NULL, out, err);
}

ts_status ts_chain_out_size(const ts_chain *chain, int w, int h, int c, int *out_w, int *out_h, ts_err *err)
{
    ts_plan plan;
    ts_status st = ts_plan_make(chain, w, h, c, TS_U8, &plan, err);
    if (st != TS_OK) return st;
    *out_w = plan.w[plan.n];
    *out_h = plan.h[plan.n];
    ts_plan_free(&plan);
    return TS_OK;
}

ts_status ts_chain_check_pixels(const ts_chain *chain, int w, int h, int c, uint64_t max_pixels, ts_err *err)
{
    ts_plan plan;
    ts_status st = ts_plan_make(chain, w, h, c, TS_U8, &plan, err);
    if (st != TS_OK) return st;
    uint64_t limit = max_pixels ? max_pixels : TS_DEFAULT_MAX_PIXELS;
    for (int k = 1; k <= plan.n && st == TS_OK; k++) {
        uint64_t px = (uint64_t)plan.w[k] * (uint64_t)plan.h[k];
        if (px > limit)
            st = ts_err_set(err, TS_E_LIMIT, "the chain would make %s of %dx%d = %llu pixels, over the limit of %llu "
                            "(--max-pixels)", k == plan.n ? "an output" : "an intermediate image", plan.w[k], plan.h[k],
                            (unsigned long long)px, (unsigned long long)limit);
    }
    ts_plan_free(&plan);
    return st;
}

/* batch.c - `tilestream run`: files and folders in, processed images out.
 *
 * Worker threads (--jobs) decode and encode; the ops run either in the
 * worker itself (CPU backend) or on the GPU engine, which one thread feeds
 * with decoded images and drains in submission order. Workers prefer
 * encoding to decoding, so finished images leave memory first. */
#include "pool.h"
#include "engine_internal.h"
#include "tilestream.h"
#include "trace_internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ inputs */

typedef struct file_list {
    char **in, **out;
    int n, cap;
} file_list;

static int has_image_extension(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (!strcasecmp(dot, ".png") || !strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"));
}

static ts_status add_file(file_list *l, const char *in, const char *out, ts_err *err)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        char **a = realloc(l->in, sizeof(char *) * (size_t)cap), **b;
        if (!a) return ts_err_set(err, TS_E_NOMEM, "out of memory listing inputs");
        l->in = a;
        b = realloc(l->out, sizeof(char *) * (size_t)cap);
        if (!b) return ts_err_set(err, TS_E_NOMEM, "out of memory listing inputs");
        l->out = b;
        l->cap = cap;
    }
    l->in[l->n] = strdup(in);
    l->out[l->n] = strdup(out);
    if (!l->in[l->n] || !l->out[l->n]) {
        free(l->in[l->n]);
        free(l->out[l->n]);
        return ts_err_set(err, TS_E_NOMEM, "out of memory listing inputs");
    }
    l->n++;
    return TS_OK;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Folders the walk leaves out: OUTDIR, and OUTDIR/<input folder's name>
 * where that input's outputs go. */
typedef struct skip_dirs { struct stat dir[2]; int n; } skip_dirs;

static int is_skipped(const skip_dirs *skip, const struct stat *sb)
{
    for (int i = 0; i < skip->n; i++)
        if (skip->dir[i].st_dev == sb->st_dev && skip->dir[i].st_ino == sb->st_ino) return 1;
    return 0;
}

static void skip_add(skip_dirs *skip, const char *path)
{
    if (skip->n < 2 && stat(path, &skip->dir[skip->n]) == 0 && S_ISDIR(skip->dir[skip->n].st_mode)) skip->n++;
}

/* Walk dir recursively; rel is the path below the input folder, which the
 * output mirrors. Entries are sorted so runs are repeatable. The output
 * folder (skip) is left out, so `run in -o in/out` never takes its own
 * outputs as inputs on the next run. */
static ts_status walk(file_list *l, const char *dir, const char *outdir, const char *rel, int depth,
                      const skip_dirs *skip, ts_err *err)
{
    if (depth > 64) return ts_err_set(err, TS_E_IO, "%s: folders nested too deeply (a link loop?)", dir);
    DIR *d = opendir(dir);
    if (!d) return ts_err_set(err, TS_E_IO, "%s: cannot open folder: %s", dir, strerror(errno));
    char **names = NULL;
    int n = 0, cap = 0;
    ts_status st = TS_OK;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue; /* ., .., hidden files and our own temporaries */
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            char **nn = realloc(names, sizeof(char *) * (size_t)cap);
            if (!nn) { st = ts_err_set(err, TS_E_NOMEM, "out of memory"); break; }
            names = nn;
        }
        if (!(names[n] = strdup(e->d_name))) { st = ts_err_set(err, TS_E_NOMEM, "out of memory"); break; }
        n++;
    }
    closedir(d);
    if (names) qsort(names, (size_t)n, sizeof(char *), cmp_names);
    for (int i = 0; i < n && st == TS_OK; i++) {
        char path[PATH_MAX], sub[PATH_MAX], out[PATH_MAX];
        struct stat sb;
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path ||
            snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", names[i]) >= (int)sizeof sub ||
            snprintf(out, sizeof out, "%s/%s", outdir, sub) >= (int)sizeof out) {
            st = ts_err_set(err, TS_E_IO, "%s/%s: path too long", dir, names[i]);
            break;
        }
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode) && !is_skipped(skip, &sb)) st = walk(l, path, outdir, sub, depth + 1, skip, err);
        else if (S_ISREG(sb.st_mode) && has_image_extension(names[i])) st = add_file(l, path, out, err);
    }
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return st;
}

static ts_status collect_inputs(const ts_batch_opts *o, file_list *l, ts_err *err)
{
    for (int i = 0; i < o->n_inputs; i++) {
        const char *in = o->inputs[i];
        struct stat sb;
        if (stat(in, &sb) != 0) {
            /* a missing file is that input's failure, reported with the others */
            char out[PATH_MAX];
            const char *base = strrchr(in, '/');
            snprintf(out, sizeof out, "%s/%s", o->outdir, base ? base + 1 : in);
            ts_status st = add_file(l, in, out, err);
            if (st != TS_OK) return st;
            continue;
        }
        if (S_ISDIR(sb.st_mode)) {
            /* photos/ -> out/photos/... so that several folders do not collide */
            char trimmed[PATH_MAX], outdir[PATH_MAX];
            snprintf(trimmed, sizeof trimmed, "%s", in);
            size_t len = strlen(trimmed);
            while (len > 1 && trimmed[len - 1] == '/') trimmed[--len] = '\0';
            const char *base = strrchr(trimmed, '/');
            base = base ? base + 1 : trimmed;
            int n = !strcmp(base, ".") || !strcmp(base, "..")
                        ? snprintf(outdir, sizeof outdir, "%s", o->outdir)
                        : snprintf(outdir, sizeof outdir, "%s/%s", o->outdir, base);
            if (n >= (int)sizeof outdir) return ts_err_set(err, TS_E_IO, "%s: output path too long", in);
            skip_dirs skip = { .n = 0 };
            skip_add(&skip, o->outdir);
            skip_add(&skip, outdir);
            ts_status st = walk(l, trimmed, outdir, "", 0, &skip, err);
            if (st != TS_OK) return st;
        } else {
            char out[PATH_MAX];
            const char *base = strrchr(in, '/');
            snprintf(out, sizeof out, "%s/%s", o->outdir, base ? base + 1 : in);
            ts_status st = add_file(l, in, out, err);
            if (st != TS_OK) return st;
        }
    }
    return TS_OK;
}

/* Number the inputs by their place in the list sorted by path (what {n}
 * and --shard go by, so every process of a sharded run agrees), then keep
 * the shard's share, in the order the inputs were given. */
static const file_list *sort_list;
static int by_input(const void *a, const void *b)
{
    return strcmp(sort_list->in[*(const int *)a], sort_list->in[*(const int *)b]);
}

static ts_status number_and_shard(file_list *l, const ts_shard *shard, int **numbers, ts_err *err)
{
    int *order = malloc(sizeof(int) * (size_t)(l->n + 1)), *num = malloc(sizeof(int) * (size_t)(l->n + 1));
    if (!order || !num) { free(order); free(num); return ts_err_set(err, TS_E_NOMEM, "out of memory listing inputs"); }
    for (int i = 0; i < l->n; i++) order[i] = i;
    sort_list = l;  /* qsort has no context argument; inputs are listed on one thread */
    qsort(order, (size_t)l->n, sizeof *order, by_input);
    for (int rank = 0; rank < l->n; rank++) num[order[rank]] = rank + 1;
    int kept = 0;
    for (int i = 0; i < l->n; i++) {
        if (!ts_shard_takes(shard, (size_t)(num[i] - 1))) { free(l->in[i]); free(l->out[i]); continue; }
        l->in[kept] = l->in[i];
        l->out[kept] = l->out[i];
        num[kept++] = num[i];
    }
    l->n = kept;
    free(order);
    *numbers = num;
    return TS_OK;
}

/* The cheap checks, before anything is decoded: the output format can be
 * written by this build, the name template is sound, and the output folder
 * is (or can be made) a writable folder. Nothing is created here. */
static ts_status check_before_work(const ts_batch_opts *o, ts_err *err)
{
    if (o->format != TS_FMT_UNKNOWN && !ts_format_can_write(o->format))
        return ts_err_set(err, TS_E_FORMAT, "--format %s: this build cannot write it (built without stb_image_write)",
                          ts_format_name(o->format));
    ts_err name_err;
    if (o->name_template && ts_outname_check(o->name_template, &name_err) != TS_OK)
        return ts_err_set(err, name_err.status, "%s", name_err.msg);
    char dir[PATH_MAX];
    struct stat sb;
    if (snprintf(dir, sizeof dir, "%s", o->outdir) >= (int)sizeof dir)
        return ts_err_set(err, TS_E_IO, "%s: path too long", o->outdir);
    /* the nearest folder that exists must be a writable folder */
    while (stat(dir, &sb) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) return ts_err_set(err, TS_E_IO, "%s: %s", dir, strerror(errno));
        size_t len = strlen(dir);
        while (len > 1 && dir[len - 1] == '/') dir[--len] = '\0';
        char *slash = strrchr(dir, '/');
        if (!slash) snprintf(dir, sizeof dir, ".");
        else if (slash == dir) dir[1] = '\0';
        else *slash = '\0';
    }
    int is_outdir = !strcmp(dir, o->outdir);
    if (!S_ISDIR(sb.st_mode))
        return is_outdir ? ts_err_set(err, TS_E_IO, "%s: the output folder is not a folder", dir)
                         : ts_err_set(err, TS_E_IO, "%s: cannot make the output folder %s: not a folder", dir, o->outdir);
    if (access(dir, W_OK | X_OK) != 0)
        return is_outdir ? ts_err_set(err, TS_E_IO, "%s: cannot write in the output folder: %s", dir, strerror(errno))
                         : ts_err_set(err, TS_E_IO, "%s: cannot make the output folder %s there: %s", dir, o->outdir,
                                      strerror(errno));
    return TS_OK;
}

/* Replace the extension of path with that of format f. */
static char *with_extension(const char *path, ts_format f)
{
    const char *ext = ts_format_extension(f);
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
    char *s = malloc(stem + strlen(ext) + 1);
    if (!s) return NULL;
    memcpy(s, path, stem);
    strcpy(s + stem, ext);
    return s;
}

/* mkdir -p for the folder that holds path. */
static ts_status make_parent_dirs(const char *path, ts_err *err)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", path);
    char *slash = strrchr(buf, '/');
    if (!slash) return TS_OK;
    *slash = '\0';
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST)
            return ts_err_set(err, TS_E_IO, "%s: cannot create folder: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST)
        return ts_err_set(err, TS_E_IO, "%s: cannot create folder: %s", buf, strerror(errno));
    return TS_OK;
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0) return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static uint64_t file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* ------------------------------------------------------------ the run */

enum { ST_PENDING, ST_DECODED, ST_ON_GPU, ST_PROCESSED, ST_ENCODING, ST_DONE };

typedef struct job {
    ts_image in, out;
    int state;
    ts_format out_format;
} job;

typedef struct batch {
    const ts_batch_opts *o;
    ts_batch_result *r;
    job *jobs;
    ts_chain *chains[9];      /* [orientation]: the chain with that EXIF orientation applied */
    ts_engine *engine;
    ts_pool *pool;            /* CPU ops: the tiles of every image in flight share these threads */
    ts_allocator pinned;
    int use_gpu;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int next_decode;          /* next job to decode */
    int next_gpu;             /* next job to hand to the GPU, in order */
    int in_memory;            /* decoded images not yet encoded (bounds memory) */
    int max_in_memory;
    int done;
    int fatal;                /* a device error: stop everything */
    ts_err fatal_err;
    int lanes_next;
} batch;

static int stopping(const batch *b) { return b->fatal || (b->o->stop && *b->o->stop); }

static void fail(batch *b, int i, ts_status st, const ts_err *e)
{
    ts_image_result *res = &b->r->images[i];
    res->status = st;
    snprintf(res->error, sizeof res->error, "%s", e->msg);
}

/* Called with the lock held. */
static void finish(batch *b, int i)
{
    job *j = &b->jobs[i];
    ts_image_result *res = &b->r->images[i];
    ts_image_free(&j->in);
    ts_image_free(&j->out);
    j->state = ST_DONE;
    b->in_memory--;
    b->done++;
    if (res->skipped) b->r->n_skipped++;
    else if (res->status == TS_OK) {
        b->r->n_ok++;
        b->r->pixels_in += (uint64_t)res->w * (uint64_t)res->h;
        b->r->pixels_out += (uint64_t)res->out_w * (uint64_t)res->out_h;
    } else b->r->n_failed++;
    if (b->o->on_image) b->o->on_image(b->o->ctx, res, b->done, b->r->n_images);
    pthread_cond_broadcast(&b->changed);
}

static void trace(batch *b, int lane, const char *stage, double t0, double t1, uint64_t bytes, int image)
{
    if (b->o->trace) ts_trace_add(b->o->trace, lane, stage, t0, t1, bytes, image);
}

static size_t image_bytes(const ts_image *img) { return (size_t)img->w * (size_t)img->h * ts_pixel_bytes(img); }

/* Decode job i (no lock held). Returns 1 if it is ready for the ops. */
static int decode(batch *b, int i, int lane)
{
    ts_image_result *res = &b->r->images[i];
    job *j = &b->jobs[i];
    ts_err e = { 0 };
    ts_load_opts lo = { b->o->max_pixels, b->use_gpu ? &b->pinned : NULL, b->o->accept_damaged };
    double t0 = ts_now();
    ts_status st = ts_image_load(res->input, &lo, &j->in, &e);
    double t1 = ts_now();
    res->decode_s = t1 - t0;
    res->in_bytes = file_size(res->input);
    if (st != TS_OK) { fail(b, i, st, &e); return 0; }
    res->w = j->in.w; res->h = j->in.h; res->c = j->in.c; res->type = j->in.type;
    trace(b, lane, "decode", t0, t1, image_bytes(&j->in), i);
    return 1;
}

static const ts_chain *chain_for(batch *b, const ts_image *img)
{
    int o = b->o->keep_orientation ? 1 : img->orientation;
    return b->chains[o >= 1 && o <= 8 ? o : 1];
}

static void cpu_ops(batch *b, int i, int lane)
{
    job *j = &b->jobs[i];
    ts_image_result *res = &b->r->images[i];
    ts_err e = { 0 };
    double t0 = ts_now();
    ts_status st = ts_cpu_run_pool(chain_for(b, &j->in), &j->in, b->o->tile_w, b->o->tile_h, b->pool, &j->out, &e);
    double t1 = ts_now();
    res->ops_s = t1 - t0;
    if (st != TS_OK) {
        ts_err named;
        ts_err_set(&named, st, "%s: %s", res->input, e.msg);
        fail(b, i, st, &named);
        return;
    }
    trace(b, lane, "ops (cpu)", t0, t1, image_bytes(&j->in) + image_bytes(&j->out), i);
}

static void encode(batch *b, int i, int lane)
{
    job *j = &b->jobs[i];
    ts_image_result *res = &b->r->images[i];
    ts_err e = { 0 };
    ts_save_opts so = { j->out_format, b->o->quality, b->o->png_level, 0 };
    /* Carry the ICC profile, EXIF and XMP over; the writers set the EXIF
     * orientation to 1 where the chain applied it, else keep the input's. */
    ts_image_copy_metadata(&j->out, &j->in, NULL);
    if (b->o->keep_orientation) j->out.orientation = j->in.orientation;
    res->out_w = j->out.w; res->out_h = j->out.h;
    double t0 = ts_now();
    ts_status st = make_parent_dirs(res->output, &e);
    if (st == TS_OK) st = ts_image_save(res->output, &j->out, &so, &e);
    double t1 = ts_now();
    res->encode_s = t1 - t0;
    if (st != TS_OK) { fail(b, i, st, &e); return; }
    res->out_bytes = file_size(res->output);
    trace(b, lane, "encode", t0, t1, image_bytes(&j->out), i);
}

/* Work for a CPU worker, chosen under the lock: an image the GPU has
 * finished (encode it), else the next one to decode. -1 = nothing now,
 * -2 = all done. */
static int next_work(batch *b, int *is_encode)
{
    for (;;) {
        for (int i = 0; i < b->r->n_images; i++)
            if (b->jobs[i].state == ST_PROCESSED) {
                b->jobs[i].state = ST_ENCODING; /* claimed */
                *is_encode = 1;
                return i;
            }
        if (b->done == b->r->n_images) return -2;
        while (b->next_decode < b->r->n_images && b->jobs[b->next_decode].state == ST_DONE)
            b->next_decode++; /* refused or skipped while planning */
        if (!stopping(b) && b->next_decode < b->r->n_images && b->in_memory < b->max_in_memory) {
            *is_encode = 0;
            b->in_memory++;
            if (b->o->on_image_begin)
                b->o->on_image_begin(b->o->ctx, &b->r->images[b->next_decode], b->done, b->r->n_images);
            return b->next_decode++;
        }
        if (stopping(b) && b->next_decode < b->r->n_images) {
            /* account for what will never start, so done reaches n_images */
            while (b->next_decode < b->r->n_images) {
                int i = b->next_decode++;
                if (b->jobs[i].state == ST_DONE) continue;
                ts_err e;
                ts_err_set(&e, b->fatal ? TS_E_DEVICE : TS_E_INTERRUPTED, "%s: not processed: %s",
                           b->r->images[i].input, b->fatal ? "the run stopped after a device error" : "interrupted");
                fail(b, i, e.status, &e);
                b->in_memory++;
                finish(b, i);
            }
            continue;
        }
        pthread_cond_wait(&b->changed, &b->lock);
    }
}

typedef struct worker_arg { batch *b; int lane; } worker_arg;

static void *worker(void *p)
{
    worker_arg *wa = p;
    batch *b = wa->b;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        int is_encode = 0, i = next_work(b, &is_encode);
        if (i == -2) break;
        pthread_mutex_unlock(&b->lock);
        ts_pool_busy(b->pool, 1); /* codecs count against the CPU ops' thread limit too */
        ts_image_result *res = &b->r->images[i];
        int keep = 1;
        if (is_encode) {
            if (res->status == TS_OK) encode(b, i, wa->lane);
            keep = 0;
        } else if (!decode(b, i, wa->lane)) {
            keep = 0;
        } else if (!b->use_gpu) {
            cpu_ops(b, i, wa->lane);
            if (res->status == TS_OK) encode(b, i, wa->lane);
            keep = 0;
        }
        ts_pool_busy(b->pool, 0);
        pthread_mutex_lock(&b->lock);
        if (!keep) finish(b, i);
        else { b->jobs[i].state = ST_DECODED; pthread_cond_broadcast(&b->changed); }
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

/* The GPU feeder: submits decoded images in input order, keeps up to
 * `depth` in flight, and hands finished ones back to the workers. */
static void *gpu_feeder(void *p)
{
    batch *b = p;
    /* two images per stream keep every stream busy; more would only pin memory */
    int streams = b->o->streams > 0 ? b->o->streams : 3, in_flight = 0, depth = 2 * streams;
    pthread_mutex_lock(&b->lock);
    for (;;) {
        /* skip images that failed to decode */
        while (b->next_gpu < b->r->n_images && b->jobs[b->next_gpu].state == ST_DONE) b->next_gpu++;
        int ready = b->next_gpu < b->r->n_images && b->jobs[b->next_gpu].state == ST_DECODED;
        if (ready && in_flight < depth && !b->fatal) {
            int i = b->next_gpu++;
            job *j = &b->jobs[i];
            j->state = ST_ON_GPU;
            pthread_mutex_unlock(&b->lock);
            ts_err e = { 0 };
            double t0 = ts_now();
            ts_status st = ts_engine_submit(b->engine, chain_for(b, &j->in), &j->in, &j->out, (void *)(intptr_t)i, i, &e);
            b->r->images[i].ops_s = ts_now() - t0;
            pthread_mutex_lock(&b->lock);
            if (st == TS_OK) { in_flight++; continue; }
            fail(b, i, st, &e);
            if (st == TS_E_DEVICE) { b->fatal = 1; b->fatal_err = e; }
            finish(b, i);
            continue;
        }
        if (in_flight > 0) {
            pthread_mutex_unlock(&b->lock);
            void *tag = NULL;
            ts_status st = TS_OK;
            ts_err e = { 0 };
            double t0 = ts_now();
            int got = ts_engine_collect(b->engine, &tag, &st, &e);
            double t1 = ts_now();
            pthread_mutex_lock(&b->lock);
            if (!got) { in_flight = 0; continue; }
            in_flight--;
            int i = (int)(intptr_t)tag;
            b->r->images[i].ops_s += t1 - t0;
            if (st == TS_OK) b->jobs[i].state = ST_PROCESSED;
            else {
                fail(b, i, st, &e);
                if (st == TS_E_DEVICE && !b->fatal) { b->fatal = 1; b->fatal_err = e; }
                finish(b, i);
            }
            pthread_cond_broadcast(&b->changed);
            continue;
        }
        if (b->next_gpu >= b->r->n_images || (b->fatal && in_flight == 0)) break;
        pthread_cond_wait(&b->changed, &b->lock);
    }
    pthread_mutex_unlock(&b->lock);
    return NULL;
}

static int cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* Decide the device; fill r->device and r->device_note. */
static ts_status pick_device(const ts_batch_opts *o, ts_batch_result *r, int *use_gpu, ts_err *err)
{
    char name[160];
    ts_err why = { 0 };
    *use_gpu = 0;
    if (o->device == TS_DEVICE_CPU) {
        snprintf(r->device, sizeof r->device, "cpu");
        snprintf(r->device_note, sizeof r->device_note, "asked for with --device cpu");
        return TS_OK;
    }
    int have = ts_gpu_probe(name, sizeof name, &why);
    if (have) {
        *use_gpu = 1;
        snprintf(r->device, sizeof r->device, "%s", name);
        snprintf(r->device_note, sizeof r->device_note, "%s", o->device == TS_DEVICE_AUTO ? "found a CUDA device" : "asked for with --device gpu");
        return TS_OK;
    }
    if (o->device == TS_DEVICE_GPU) return ts_err_set(err, TS_E_DEVICE, "--device gpu: %s", why.msg);
    snprintf(r->device, sizeof r->device, "cpu");
    snprintf(r->device_note, sizeof r->device_note, "%.200s", why.msg);
    return TS_OK;
}

/* Run the chain once on small RGB and RGBA images so that CUDA loads the
 * kernels it uses (modules load lazily, a few ms each on first launch)
 * before any stage is timed; then drop those events. */
static void gpu_warm_up(batch *b)
{
    for (int c = 3; c <= 4; c++) {
        ts_image img = { 0 }, out = { 0 };
        ts_err e = { 0 };
        if (ts_image_alloc(&img, 16, 16, c, TS_U8, 0, NULL, &e) != TS_OK) continue;
        for (size_t i = 0; i < img.stride * 16; i++) img.data[i] = (unsigned char)(i * 37);
        ts_gpu_run(b->engine, b->chains[1], &img, &out, &e);
        ts_image_free(&out);
        ts_image_free(&img);
    }
    if (b->o->trace) ts_trace_clear(b->o->trace);
}

static void batch_cleanup(batch *b)
{
    for (int i = 0; i < 9; i++) ts_chain_free(b->chains[i]);
    if (b->engine) ts_engine_destroy(b->engine);
    free(b->jobs);
    pthread_mutex_destroy(&b->lock);
    pthread_cond_destroy(&b->changed);
}

/* The output's path: the input tree below outdir, or --name's template. */
static char *output_name(const ts_batch_opts *o, const char *default_out, ts_format f, int number, ts_err *e)
{
    if (!o->name_template) {
        char *s = with_extension(default_out, f);
        if (!s) ts_err_set(e, TS_E_NOMEM, "out of memory");
        return s;
    }
    char name[PATH_MAX], *s;
    const char *rel = default_out + strlen(o->outdir) + 1; /* collect_inputs made it outdir/rel */
    if (ts_outname_make(o->name_template, rel, f, number, name, sizeof name, e) != TS_OK) return NULL;
    size_t n = strlen(o->outdir) + strlen(name) + 2;
    if ((s = malloc(n)) == NULL) { ts_err_set(e, TS_E_NOMEM, "out of memory"); return NULL; }
    snprintf(s, n, "%s/%s", o->outdir, name);
    ts_format named = ts_format_from_path(s);
    if (named != TS_FMT_UNKNOWN && named != f) {
        ts_err_set(e, TS_E_ARG, "--name gives %s, a .%s name for %s data (use {ext} or --format %s)", s,
                   ts_format_name(named), ts_format_name(f), ts_format_name(named));
        free(s);
        return NULL;
    }
    return s;
}

static const ts_batch_result *sort_result;
static int by_output(const void *a, const void *b)
{
    int c = strcmp(sort_result->images[*(const int *)a].output, sort_result->images[*(const int *)b].output);
    return c ? c : *(const int *)a - *(const int *)b;
}

/* Two inputs that would write the same output (a --name without {dir} or
 * {n}, or a.png and a.jpg with --format jpg): the first in the list keeps
 * it, the others are refused, each named. */
static void refuse_duplicate_outputs(batch *b)
{
    int n = 0, *order = malloc(sizeof(int) * (size_t)(b->r->n_images + 1));
    if (!order) return;
    for (int i = 0; i < b->r->n_images; i++)
        if (b->jobs[i].state != ST_DONE) order[n++] = i;
    sort_result = b->r;
    qsort(order, (size_t)n, sizeof *order, by_output);
    for (int k = 1; k < n; k++) {
        ts_image_result *first = &b->r->images[order[k - 1]], *res = &b->r->images[order[k]];
        if (strcmp(first->output, res->output)) continue;
        ts_err e;
        fail(b, order[k], ts_err_set(&e, TS_E_EXISTS, "%s: not processed: %s is also the output of %s", res->input,
                                     res->output, first->input), &e);
        b->jobs[order[k]].state = ST_DONE;
        order[k] = order[k - 1];  /* compare the next with the one that keeps the name */
    }
    free(order);
}

/* Plan the outputs: formats, names, skip/refuse rules. Every image refused
 * or skipped here is reported now, before any work. Returns the number of
 * images that need work. */
static int plan_outputs(batch *b, file_list *l, const int *numbers)
{
    const ts_batch_opts *o = b->o;
    int work = 0;
    for (int i = 0; i < l->n; i++) {
        ts_image_result *res = &b->r->images[i];
        job *j = &b->jobs[i];
        res->index = i;
        res->input = l->in[i];
        ts_format in_fmt = ts_format_from_path(l->in[i]);
        j->out_format = o->format != TS_FMT_UNKNOWN ? o->format : in_fmt != TS_FMT_UNKNOWN ? in_fmt : TS_FMT_PNG;
        ts_err e = { 0 };
        res->output = output_name(o, l->out[i], j->out_format, numbers[i], &e);
        free(l->out[i]);
        l->in[i] = l->out[i] = NULL;
        if (!res->output) {
            ts_err named;
            fail(b, i, ts_err_set(&named, e.status, "%s: %s", res->input, e.msg), &named);
            res->output = strdup("");
            j->state = ST_DONE;
        } else if (same_file(res->input, res->output) && !o->overwrite) {
            fail(b, i, ts_err_set(&e, TS_E_EXISTS, "%s: the output would replace the input (use --replace-input)", res->input), &e);
            j->state = ST_DONE;
        } else if (o->skip_existing && file_size(res->output) > 0) {
            res->skipped = 1;
            j->state = ST_DONE;
        }
    }
    refuse_duplicate_outputs(b);
    for (int i = 0; i < l->n; i++) {
        ts_image_result *res = &b->r->images[i];
        if (b->jobs[i].state != ST_DONE) { work++; continue; }
        b->done++;
        if (res->skipped) b->r->n_skipped++;
        else b->r->n_failed++;
        if (o->on_image) o->on_image(o->ctx, res, b->done, b->r->n_images);
    }
    return work;
}

/* Every image succeeded (TS_OK), or the first failure's status. */
static ts_status final_status(const ts_batch_opts *o, const batch *b, ts_err *err)
{
    const ts_batch_result *r = b->r;
    if (b->fatal)
        return ts_err_set(err, TS_E_DEVICE, "%s (completed %d of %d images)", b->fatal_err.msg, r->n_ok, r->n_images);
    if (o->stop && *o->stop)
        return ts_err_set(err, TS_E_INTERRUPTED, "interrupted after %d of %d images", r->n_ok, r->n_images);
    for (int i = 0; r->n_failed > 0 && i < r->n_images; i++)
        if (r->images[i].status != TS_OK && !r->images[i].skipped)
            return ts_err_set(err, r->images[i].status, "%d of %d images %s; first: %s", r->n_failed, r->n_images,
                              o->dry_run ? "would fail" : "failed", r->images[i].error);
    return TS_OK;
}

ts_status ts_batch_run(const ts_batch_opts *o, ts_batch_result *r, ts_err *err)
{
    batch b;
    file_list l = { 0 };
    memset(&b, 0, sizeof b);
    memset(r, 0, sizeof *r);
    b.o = o;
    b.r = r;
    pthread_mutex_init(&b.lock, NULL);
    pthread_cond_init(&b.changed, NULL);
    double t_start = ts_now();

    ts_status st = TS_OK;
    for (int k = 1; k <= 8 && st == TS_OK; k++) {
        st = ts_chain_parse(o->chain_text ? o->chain_text : "", &b.chains[k], err);
        if (st == TS_OK) st = ts_chain_prepend_orientation(b.chains[k], k, err);
    }
    if (st == TS_OK && !o->outdir) st = ts_err_set(err, TS_E_ARG, "no output folder (-o OUTDIR)");
    if (st == TS_OK) st = check_before_work(o, err);
    if (st == TS_OK) st = collect_inputs(o, &l, err);
    int *numbers = NULL;
    if (st == TS_OK) st = number_and_shard(&l, &o->shard, &numbers, err);
    if (st == TS_OK && l.n == 0)
        st = o->shard.count > 1 ? ts_err_set(err, TS_E_ARG, "no PNG or JPEG files for shard %d of %d in the inputs",
                                             o->shard.index, o->shard.count)
                                : ts_err_set(err, TS_E_ARG, "no PNG or JPEG files found in the inputs");
    if (st == TS_OK) st = pick_device(o, r, &b.use_gpu, err);
    if (st == TS_OK) {
        r->n_images = l.n;
        r->images = calloc((size_t)l.n, sizeof *r->images);
        b.jobs = calloc((size_t)l.n, sizeof *b.jobs);
        if (!r->images || !b.jobs) st = ts_err_set(err, TS_E_NOMEM, "out of memory");
    }
    if (st != TS_OK) {
        for (int i = 0; i < l.n; i++) { free(l.in[i]); free(l.out[i]); }
        free(l.in); free(l.out); free(numbers);
        r->n_images = 0;
        batch_cleanup(&b);
        return st;
    }
    if (o->on_start) o->on_start(o->ctx, r);
    int work = plan_outputs(&b, &l, numbers);
    free(l.in);
    free(l.out);
    free(numbers);

    if (!o->dry_run && work > 0 && b.use_gpu) {
        ts_engine_opts eo = { o->streams, o->tile_w, o->tile_h, o->path, o->trace, 0 };
        st = ts_engine_create(&eo, &b.engine, err);
        if (st != TS_OK) { batch_cleanup(&b); return st; }
        b.pinned = ts_engine_allocator(b.engine);
        ts_err perr = { 0 };
        ts_engine_peak_rates(b.engine, &r->peak, &perr); /* zeros if it fails: the table then omits shares */
        gpu_warm_up(&b);
    }
    if (o->dry_run) {
        for (int i = 0; i < r->n_images; i++)
            if (b.jobs[i].state != ST_DONE && o->on_image) o->on_image(o->ctx, &r->images[i], i + 1, r->n_images);
        st = final_status(o, &b, err);
        batch_cleanup(&b);
        r->wall_s = ts_now() - t_start;
        return st;
    }

    int nworkers = o->jobs > 0 ? o->jobs : cpu_count();
    if (nworkers > 256) nworkers = 256;
    /* decoded images not yet encoded: one per worker, plus those on the GPU */
    b.max_in_memory = b.use_gpu ? nworkers + 2 * (o->streams > 0 ? o->streams : 3) + 2 : nworkers;
    if (!b.use_gpu) b.pool = ts_pool_create(nworkers); /* NULL: each image on its worker's thread */
    pthread_t threads[257];
    worker_arg args[256];
    int started = 0;
    for (int w = 0; w < nworkers; w++) {
        char lane[32];
        snprintf(lane, sizeof lane, "cpu worker %d", w);
        args[w].b = &b;
        args[w].lane = o->trace ? ts_trace_lane(o->trace, lane) : 0;
        if (pthread_create(&threads[w], NULL, worker, &args[w]) == 0) started++;
        else break;
    }
    pthread_t feeder;
    int feeder_started = b.use_gpu && pthread_create(&feeder, NULL, gpu_feeder, &b) == 0;
    if (started == 0 || (b.use_gpu && !feeder_started)) {
        /* no threads at all: do the CPU work on this thread */
        if (started == 0 && !b.use_gpu) { args[0].b = &b; args[0].lane = 0; worker(&args[0]); }
        else st = ts_err_set(err, TS_E_NOMEM, "cannot start worker threads");
    }
    for (int w = 0; w < started; w++) pthread_join(threads[w], NULL);
    if (feeder_started) pthread_join(feeder, NULL);
    r->wall_s = ts_now() - t_start;
    ts_pool_free(b.pool);

    if (st == TS_OK) st = final_status(o, &b, err);
    batch_cleanup(&b);
    return st;
}

void ts_batch_result_free(ts_batch_result *r)
{
    for (int i = 0; i < r->n_images; i++) {
        free(r->images[i].input);
        free(r->images[i].output);
    }
    free(r->images);
    memset(r, 0, sizeof *r);
}

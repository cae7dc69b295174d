/* outputs.c - where a run writes: the checks before work, output names,
 * folders made on the way, and the rule that nothing is lost.
 *
 * The rule: an output may replace no input of the run (its own or any
 * other, compared after links by device and inode) unless --replace-input,
 * and no output may lead outside OUTDIR through a link below it. Both are
 * checked while planning, before anything is decoded, so a refused output
 * is never written. */
#include "outputs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Make the folders from existing (the nearest that exists) down to outdir,
 * then remove them again: access() says yes to root where mkdir still
 * fails (/proc, /sys, read-only mounts), and this is to be known before
 * any work. */
static ts_status try_making(const char *outdir, const char *existing, ts_err *err)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/", outdir) >= (int)sizeof path) return ts_err_set(err, TS_E_IO, "%s: path too long", outdir);
    ts_status st = ts_make_parent_dirs(path, err);
    if (st != TS_OK) return ts_err_set(err, TS_E_IO, "cannot make the output folder %s: %s", outdir, strerror(errno));
    /* remove what was made, deepest first, down to the folder that existed */
    snprintf(path, sizeof path, "%s", outdir);
    for (;;) {
        size_t len = strlen(path);
        while (len > 1 && path[len - 1] == '/') path[--len] = '\0';
        if (!*path || !strcmp(path, existing) || rmdir(path) != 0) break;
        char *slash = strrchr(path, '/');
        if (!slash) break;
        *slash = '\0';
    }
    return TS_OK;
}

ts_status ts_outputs_check_before_work(const ts_batch_opts *o, ts_err *err)
{
    if (o->format != TS_FMT_UNKNOWN && !ts_format_can_write(o->format))
        return ts_err_set(err, TS_E_FORMAT, "--format %s: this build cannot write it (built without stb_image_write)",
                          ts_format_name(o->format));
    ts_err name_err;
    if (o->name_template && ts_outname_check(o->name_template, &name_err) != TS_OK)
        return ts_err_set(err, name_err.status, "%s", name_err.msg);
    char probe[PATH_MAX];
    if (o->name_template && o->format != TS_FMT_UNKNOWN &&
        ts_outname_make(o->name_template, "d/s.png", o->format, 1, probe, sizeof probe, NULL) == TS_OK) {
        ts_format named = ts_format_from_path(probe);
        if (named != TS_FMT_UNKNOWN && named != o->format)
            return ts_err_set(err, TS_E_ARG, "--name %s gives .%s names for --format %s (use {ext}, or leave --format out)",
                              o->name_template, ts_format_name(named), ts_format_name(o->format));
    }
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
    if (!is_outdir && !o->dry_run) return try_making(o->outdir, dir, err);
    return TS_OK;
}

/* OUTDIR/rel with its extension replaced by that of format f. */
static char *default_path(const char *outdir, const char *rel, ts_format f)
{
    const char *ext = ts_format_extension(f);
    const char *slash = strrchr(rel, '/'), *dot = strrchr(rel, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - rel) : strlen(rel);
    size_t n = strlen(outdir) + 1 + stem + strlen(ext) + 1;
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s/%.*s%s", outdir, (int)stem, rel, ext);
    return s;
}

char *ts_output_path(const ts_batch_opts *o, const char *rel, ts_format *format, int number, ts_err *e)
{
    ts_format f = *format;
    if (!o->name_template) {
        char *s = default_path(o->outdir, rel, f);
        if (!s) ts_err_set(e, TS_E_NOMEM, "out of memory");
        return s;
    }
    char name[PATH_MAX], *s;
    if (ts_outname_make(o->name_template, rel, f, number, name, sizeof name, e) != TS_OK) return NULL;
    size_t n = strlen(o->outdir) + strlen(name) + 2;
    if ((s = malloc(n)) == NULL) { ts_err_set(e, TS_E_NOMEM, "out of memory"); return NULL; }
    snprintf(s, n, "%s/%s", o->outdir, name);
    ts_format named = ts_format_from_path(s);
    if (named != TS_FMT_UNKNOWN && named != f && o->format == TS_FMT_UNKNOWN && ts_format_can_write(named)) {
        *format = named;   /* "{stem}.png" without --format: the name says PNG */
        return s;
    }
    if (named != TS_FMT_UNKNOWN && named != f) {
        ts_err_set(e, TS_E_ARG, "--name gives %s, a .%s name for %s data (use {ext} or --format %s)", s,
                   ts_format_name(named), ts_format_name(f), ts_format_name(named));
        free(s);
        return NULL;
    }
    return s;
}

ts_status ts_make_parent_dirs(const char *path, ts_err *err)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf) return ts_err_set(err, TS_E_IO, "%s: path too long", path);
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

/* ------------------------------------------------------------ the guard */

typedef struct input_id {
    dev_t dev;
    ino_t ino;
    char *path;
} input_id;

struct ts_output_guard {
    input_id *ids;     /* every input that exists, sorted by (dev, ino) */
    int n;
    char *outdir;      /* as given */
    char *real_outdir; /* after links; NULL while it does not exist */
};

static int by_node(const void *a, const void *b)
{
    const input_id *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino) return x->ino < y->ino ? -1 : 1;
    return 0;
}

ts_output_guard *ts_output_guard_make(const char *outdir, const ts_input_list *inputs)
{
    ts_output_guard *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->ids = malloc(sizeof *g->ids * (size_t)(inputs->n + 1));
    g->outdir = strdup(outdir);
    if (!g->ids || !g->outdir) { ts_output_guard_free(g); return NULL; }
    g->real_outdir = realpath(outdir, NULL);
    for (int i = 0; i < inputs->n; i++) {
        struct stat sb;
        if (stat(inputs->v[i].path, &sb) != 0) continue;
        char *path = strdup(inputs->v[i].path);
        if (!path) { ts_output_guard_free(g); return NULL; }
        g->ids[g->n++] = (input_id){ sb.st_dev, sb.st_ino, path };
    }
    qsort(g->ids, (size_t)g->n, sizeof *g->ids, by_node);
    return g;
}

void ts_output_guard_free(ts_output_guard *g)
{
    if (!g) return;
    for (int i = 0; i < g->n; i++) free(g->ids[i].path);
    free(g->ids);
    free(g->outdir);
    free(g->real_outdir);
    free(g);
}

/* 1 when real (a resolved path) is the folder base or below it. */
static int is_below(const char *real, const char *base)
{
    size_t n = strlen(base);
    if (n == 1 && base[0] == '/') return 1;
    return !strncmp(real, base, n) && (real[n] == '\0' || real[n] == '/');
}

/* The folders between OUTDIR and the output that exist: none may be a
 * link that resolves outside OUTDIR (mkdir -p and the rename would follow
 * it). The output's own name is replaced by rename, not followed. */
static ts_status check_inside(const ts_output_guard *g, const char *output, ts_err *err)
{
    size_t n = strlen(g->outdir);
    if (!g->real_outdir || strncmp(output, g->outdir, n) || output[n] != '/') return TS_OK;
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", output) >= (int)sizeof path) return TS_OK;
    for (char *p = path + n + 1; (p = strchr(p, '/')) != NULL; p++) {
        *p = '\0';
        struct stat sb;
        if (lstat(path, &sb) != 0) return TS_OK;   /* made by mkdir below: a real folder */
        if (S_ISLNK(sb.st_mode)) {
            char *real = realpath(path, NULL);
            int inside = real && is_below(real, g->real_outdir);
            ts_status st = inside ? TS_OK
                                  : ts_err_set(err, TS_E_EXISTS, "%s is a link to %s, outside the output folder %s",
                                               path, real ? real : "a missing folder", g->outdir);
            free(real);
            if (st != TS_OK) return st;
        }
        *p = '/';
    }
    return TS_OK;
}

ts_status ts_output_guard_check(const ts_output_guard *g, const char *input, const char *output, int replace_input,
                                ts_err *err)
{
    struct stat sb;
    if (!replace_input && stat(output, &sb) == 0) {
        input_id key = { sb.st_dev, sb.st_ino, NULL };
        const input_id *hit = bsearch(&key, g->ids, (size_t)g->n, sizeof key, by_node);
        if (hit) {
            struct stat own;
            if (stat(input, &own) == 0 && own.st_dev == sb.st_dev && own.st_ino == sb.st_ino)
                return ts_err_set(err, TS_E_EXISTS, "%s: the output would replace the input (use --replace-input)", input);
            return ts_err_set(err, TS_E_EXISTS, "%s: not processed: its output %s would replace the input %s "
                              "(use --replace-input)", input, output, hit->path);
        }
    }
    ts_err why;
    if (check_inside(g, output, &why) != TS_OK) return ts_err_set(err, why.status, "%s: not processed: %s", input, why.msg);
    return TS_OK;
}

static int by_string(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void ts_outputs_sweep_temps(const ts_image_result *images, const int *needs_work, int n)
{
    char **dirs = malloc(sizeof(char *) * (size_t)(n + 1));
    int nd = 0;
    if (!dirs) return;
    for (int i = 0; i < n; i++) {
        const char *out = images[i].output, *slash = needs_work[i] && out ? strrchr(out, '/') : NULL;
        if (slash && (dirs[nd] = strndup(out, (size_t)(slash - out))) != NULL) nd++;
    }
    qsort(dirs, (size_t)nd, sizeof *dirs, by_string);
    for (int i = 0; i < nd; i++)
        if (i == 0 || strcmp(dirs[i], dirs[i - 1])) ts_save_sweep_temps(dirs[i]);
    for (int i = 0; i < nd; i++) free(dirs[i]);
    free(dirs);
}

/* ------------------------------------------------------------ the plan */

static void refuse(ts_image_result *res, int *needs_work, ts_status st, const char *msg)
{
    res->status = st;
    snprintf(res->error, sizeof res->error, "%s", msg);
    *needs_work = 0;
}

static const ts_image_result *sort_images;
static int by_output(const void *a, const void *b)
{
    int c = strcmp(sort_images[*(const int *)a].output, sort_images[*(const int *)b].output);
    return c ? c : *(const int *)a - *(const int *)b;
}

/* Two inputs that would write the same output (a --name without {dir} or
 * {n}, or a.png and a.jpg with --format jpg): the first in the list keeps
 * it, the others are refused, each named. */
static void refuse_duplicates(ts_image_result *images, int *needs_work, int n_images)
{
    int n = 0, *order = malloc(sizeof(int) * (size_t)(n_images + 1));
    if (!order) return;
    for (int i = 0; i < n_images; i++)
        if (needs_work[i]) order[n++] = i;
    sort_images = images;   /* qsort has no context argument; outputs are planned on one thread */
    qsort(order, (size_t)n, sizeof *order, by_output);
    for (int k = 1; k < n; k++) {
        ts_image_result *first = &images[order[k - 1]], *res = &images[order[k]];
        if (strcmp(first->output, res->output)) continue;
        ts_err e;
        ts_err_set(&e, TS_E_EXISTS, "%s: not processed: %s is also the output of %s", res->input, res->output,
                   first->input);
        refuse(res, &needs_work[order[k]], e.status, e.msg);
        order[k] = order[k - 1];  /* compare the next with the one that keeps the name */
    }
    free(order);
}

void ts_outputs_plan(const ts_batch_opts *o, ts_input_list *l, const int *numbers, const ts_output_guard *g,
                     ts_image_result *images, ts_format *formats, int *needs_work)
{
    for (int i = 0; i < l->n; i++) {
        ts_image_result *res = &images[i];
        ts_input *in = &l->v[i];
        res->index = i;
        res->input = in->path;
        in->path = NULL;
        ts_format in_fmt = ts_format_from_path(res->input);
        formats[i] = o->format != TS_FMT_UNKNOWN ? o->format : in_fmt != TS_FMT_UNKNOWN ? in_fmt : TS_FMT_PNG;
        needs_work[i] = 1;
        ts_err e = { 0 };
        struct stat sb;
        res->output = in->error ? NULL : ts_output_path(o, in->rel, &formats[i], numbers[i], &e);
        if (in->error) refuse(res, &needs_work[i], TS_E_IO, in->error);
        else if (!res->output) {
            ts_err named;
            ts_err_set(&named, e.status, "%s: %s", res->input, e.msg);
            refuse(res, &needs_work[i], named.status, named.msg);
        } else if (ts_output_guard_check(g, res->input, res->output, o->overwrite, &e) != TS_OK)
            refuse(res, &needs_work[i], e.status, e.msg);
        else if (o->skip_existing && stat(res->output, &sb) == 0 && sb.st_size > 0) {
            res->skipped = 1;
            needs_work[i] = 0;
        }
        if (!res->output) res->output = strdup("");
    }
    refuse_duplicates(images, needs_work, l->n);
}

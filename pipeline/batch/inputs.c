/* inputs.c - which files a run reads: files named, and folders walked.
 *
 * A folder is walked recursively in name order (runs are repeatable), its
 * hidden entries and our own temporaries left out, and the output folder
 * left out (so `run in -o in/out` never takes its own outputs as inputs on
 * the next run). Whatever cannot be listed (a folder that will not open, a
 * link that leads back to a folder above it, a FIFO or device named as an
 * input) becomes one failed entry with its reason: the rest of the run
 * goes on. */
#include "tilestream.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

enum { MAX_DEPTH = 64 };

int ts_input_extension_ok(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (!strcasecmp(dot, ".png") || !strcasecmp(dot, ".jpg") || !strcasecmp(dot, ".jpeg"));
}

static ts_status add(ts_input_list *l, const char *path, const char *rel, const char *why, ts_err *err)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        ts_input *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v) return ts_err_set(err, TS_E_NOMEM, "out of memory listing inputs");
        l->v = v;
        l->cap = cap;
    }
    ts_input *in = &l->v[l->n];
    in->path = strdup(path);
    in->rel = strdup(rel);
    in->error = why ? strdup(why) : NULL;
    if (!in->path || !in->rel || (why && !in->error)) {
        free(in->path); free(in->rel); free(in->error);
        return ts_err_set(err, TS_E_NOMEM, "out of memory listing inputs");
    }
    l->n++;
    return TS_OK;
}

/* A failed entry: path, with the reason printed after it. */
static ts_status add_failed(ts_input_list *l, const char *path, const char *rel, ts_err *err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static ts_status add_failed(ts_input_list *l, const char *path, const char *rel, ts_err *err, const char *fmt, ...)
{
    char why[sizeof ((ts_err *)0)->msg];
    int n = snprintf(why, sizeof why, "%s: ", path);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && n < (int)sizeof why) vsnprintf(why + n, sizeof why - (size_t)n, fmt, ap);
    va_end(ap);
    return add(l, path, rel, why, err);
}

/* The folders being walked, outermost first: a folder met again below
 * itself is a link loop. Also the folders the walk leaves out. */
typedef struct walk_state {
    ts_input_list *l;
    struct stat above[MAX_DEPTH + 1];
    int depth;
    struct stat skip[2];
    int n_skip;
} walk_state;

static int same_node(const struct stat *a, const struct stat *b) { return a->st_dev == b->st_dev && a->st_ino == b->st_ino; }

static int is_skipped(const walk_state *w, const struct stat *sb)
{
    for (int i = 0; i < w->n_skip; i++)
        if (same_node(&w->skip[i], sb)) return 1;
    return 0;
}

static void skip_add(walk_state *w, const char *path)
{
    if (w->n_skip < 2 && stat(path, &w->skip[w->n_skip]) == 0 && S_ISDIR(w->skip[w->n_skip].st_mode)) w->n_skip++;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names in dir, sorted; NULL with *n = -1 when it cannot be read. */
static char **list_dir(const char *dir, int *n, int *error)
{
    DIR *d = opendir(dir);
    *n = 0;
    if (!d) { *error = errno; *n = -1; return NULL; }
    char **names = NULL;
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue; /* ., .., hidden files and our own temporaries */
        if (*n == cap) {
            cap = cap ? cap * 2 : 32;
            char **nn = realloc(names, sizeof(char *) * (size_t)cap);
            if (!nn) break;
            names = nn;
        }
        if (!(names[*n] = strdup(e->d_name))) break;
        (*n)++;
    }
    int failed = e != NULL;
    closedir(d);
    if (failed) {
        for (int i = 0; i < *n; i++) free(names[i]);
        free(names);
        *error = ENOMEM;
        *n = -1;
        return NULL;
    }
    if (names) qsort(names, (size_t)*n, sizeof(char *), cmp_names);
    return names;
}

static ts_status walk(walk_state *w, const char *dir, const char *rel, const struct stat *here, ts_err *err);

/* One entry of a folder: a file to read, a folder to walk, or neither. */
static ts_status walk_entry(walk_state *w, const char *path, const char *rel, const char *name, ts_err *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno == ELOOP) return add_failed(w->l, path, rel, err, "a link that leads to itself");
        return TS_OK;   /* a dangling link, or gone since it was listed: nothing to read */
    }
    if (S_ISDIR(sb.st_mode)) {
        if (is_skipped(w, &sb)) return TS_OK;
        for (int k = 0; k <= w->depth; k++)
            if (same_node(&w->above[k], &sb))
                return add_failed(w->l, path, rel, err, "a link back to a folder above it (a loop); not walked");
        if (w->depth >= MAX_DEPTH)
            return add_failed(w->l, path, rel, err, "folders nested more than %d deep; not walked", MAX_DEPTH);
        return walk(w, path, rel, &sb, err);
    }
    if (S_ISREG(sb.st_mode) && ts_input_extension_ok(name)) return add(w->l, path, rel, NULL, err);
    return TS_OK;
}

/* Walk dir; rel is its path in the output tree ("" at the top). */
static ts_status walk(walk_state *w, const char *dir, const char *rel, const struct stat *here, ts_err *err)
{
    int n, error = 0;
    char **names = list_dir(dir, &n, &error);
    if (n < 0) {
        if (error == ENOMEM) return ts_err_set(err, TS_E_NOMEM, "out of memory listing %s", dir);
        return add_failed(w->l, dir, *rel ? rel : ".", err, "cannot open folder: %s", strerror(error));
    }
    w->above[++w->depth] = *here;
    ts_status st = TS_OK;
    for (int i = 0; i < n && st == TS_OK; i++) {
        char path[PATH_MAX], sub[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, names[i]) >= (int)sizeof path ||
            snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", names[i]) >= (int)sizeof sub)
            st = add_failed(w->l, dir, rel, err, "a path below it is too long (%s)", names[i]);
        else st = walk_entry(w, path, sub, names[i], err);
    }
    w->depth--;
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
    return st;
}

/* A folder given by name: photos/ -> OUTDIR/photos/..., so that several
 * folders do not collide; "." and ".." go straight into OUTDIR. */
static ts_status add_folder(walk_state *w, const char *in, const char *outdir, const struct stat *sb, ts_err *err)
{
    char trimmed[PATH_MAX], outsub[PATH_MAX];
    if (snprintf(trimmed, sizeof trimmed, "%s", in) >= (int)sizeof trimmed)
        return add_failed(w->l, in, in, err, "path too long");
    size_t len = strlen(trimmed);
    while (len > 1 && trimmed[len - 1] == '/') trimmed[--len] = '\0';
    const char *base = strrchr(trimmed, '/');
    base = base ? base + 1 : trimmed;
    const char *rel = !strcmp(base, ".") || !strcmp(base, "..") || !strcmp(base, "/") ? "" : base;
    w->n_skip = 0;
    if (outdir) {
        skip_add(w, outdir);
        if (snprintf(outsub, sizeof outsub, "%s/%s", outdir, rel) < (int)sizeof outsub && *rel) skip_add(w, outsub);
    }
    w->depth = -1;
    return walk(w, trimmed, rel, sb, err);
}

ts_status ts_inputs_collect(const char *const *inputs, int n, const char *outdir, ts_input_list *l, ts_err *err)
{
    walk_state *w = calloc(1, sizeof *w);
    if (!w) return ts_err_set(err, TS_E_NOMEM, "out of memory listing inputs");
    w->l = l;
    ts_status st = TS_OK;
    for (int i = 0; i < n && st == TS_OK; i++) {
        const char *in = inputs[i], *base = strrchr(in, '/');
        base = base && base[1] ? base + 1 : in;
        struct stat sb;
        if (stat(in, &sb) != 0) st = add(l, in, base, NULL, err);   /* the decode names the error */
        else if (S_ISDIR(sb.st_mode)) st = add_folder(w, in, outdir, &sb, err);
        else if (S_ISREG(sb.st_mode)) st = add(l, in, base, NULL, err);
        else st = add_failed(l, in, base, err, "not a regular file (a FIFO, socket or device); not read");
    }
    free(w);
    return st;
}

/* The numbers go by the list sorted by path, so that every process of a
 * sharded run agrees on them. */
static const ts_input_list *sort_list;
static int by_input(const void *a, const void *b)
{
    return strcmp(sort_list->v[*(const int *)a].path, sort_list->v[*(const int *)b].path);
}

ts_status ts_inputs_number_and_shard(ts_input_list *l, const ts_shard *shard, int **numbers, ts_err *err)
{
    int *order = malloc(sizeof(int) * (size_t)(l->n + 1)), *num = malloc(sizeof(int) * (size_t)(l->n + 1));
    if (!order || !num) { free(order); free(num); return ts_err_set(err, TS_E_NOMEM, "out of memory listing inputs"); }
    for (int i = 0; i < l->n; i++) order[i] = i;
    sort_list = l;  /* qsort has no context argument; inputs are listed on one thread */
    qsort(order, (size_t)l->n, sizeof *order, by_input);
    for (int rank = 0; rank < l->n; rank++) num[order[rank]] = rank + 1;
    int kept = 0;
    for (int i = 0; i < l->n; i++) {
        if (!ts_shard_takes(shard, (size_t)(num[i] - 1))) {
            free(l->v[i].path); free(l->v[i].rel); free(l->v[i].error);
            continue;
        }
        l->v[kept] = l->v[i];
        num[kept++] = num[i];
    }
    l->n = kept;
    free(order);
    *numbers = num;
    return TS_OK;
}

void ts_inputs_free(ts_input_list *l)
{
    for (int i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].rel);
        free(l->v[i].error);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

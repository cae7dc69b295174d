/* shard.c - split one input list over N processes (--shard K/N).
 *
 * The batch sorts its inputs, then shard K of N takes every input whose
 * position i in that list has i % N == K: N processes over the same folder
 * cover every file exactly once, each gets within one file of the same
 * count, and a retried shard picks the same files (with --skip-existing it
 * redoes nothing). K and N come from the option, or from the environment of
 * the usual launchers. */
#include "tilestream.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole non-negative decimal number, nothing else. */
static int parse_count(const char *s, int *out)
{
    if (!s || !*s) return 0;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0 || v > INT_MAX || s[0] == '-' || s[0] == '+' || s[0] == ' ') return 0;
    *out = (int)v;
    return 1;
}

static ts_status check_range(ts_shard *s, const char *from, ts_err *err)
{
    if (s->count < 1)
        return ts_err_set(err, TS_E_ARG, "shard count %d from %s: must be at least 1", s->count, from);
    if (s->index < 0 || s->index >= s->count)
        return ts_err_set(err, TS_E_ARG, "shard %d of %d from %s: the index must be 0 to %d", s->index, s->count,
                          from, s->count - 1);
    return TS_OK;
}

/* The launchers this knows, in the order they are tried: an index and a
 * count variable (count NULL: the count must be given, as Kubernetes'
 * indexed Jobs give only the index). */
static const struct launcher {
    const char *name, *index, *count, *index_base;
} launchers[] = {
    {"Slurm array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", NULL},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", NULL},
    {"PMI", "PMI_RANK", "PMI_SIZE", NULL},
    {"Kubernetes indexed Job", "JOB_COMPLETION_INDEX", NULL, NULL},
};

ts_status ts_shard_from_env(ts_shard *s, int count, ts_env_fn getenv_fn, ts_err *err)
{
    if (!getenv_fn) getenv_fn = getenv;
    for (size_t i = 0; i < sizeof launchers / sizeof launchers[0]; i++) {
        const struct launcher *l = &launchers[i];
        const char *iv = getenv_fn(l->index);
        if (!iv) continue;
        int index = 0, n = count, base = 0;
        if (!parse_count(iv, &index))
            return ts_err_set(err, TS_E_ARG, "%s=%s: not a shard index", l->index, iv);
        if (l->index_base && getenv_fn(l->index_base) && !parse_count(getenv_fn(l->index_base), &base))
            return ts_err_set(err, TS_E_ARG, "%s=%s: not a number", l->index_base, getenv_fn(l->index_base));
        if (l->count) {
            const char *cv = getenv_fn(l->count);
            if (!cv) continue;   /* e.g. a Slurm array variable without its count: try the next */
            if (!parse_count(cv, &n)) return ts_err_set(err, TS_E_ARG, "%s=%s: not a shard count", l->count, cv);
            if (count > 0 && count != n)
                return ts_err_set(err, TS_E_ARG, "--shard auto/%d, but %s=%d", count, l->count, n);
        } else if (count <= 0) {
            return ts_err_set(err, TS_E_ARG, "%s is set but gives no shard count: use --shard auto/N", l->index);
        }
        s->index = index - base;
        s->count = n;
        snprintf(s->source, sizeof s->source, "%s: %s=%d", l->name, l->index, index);
        return check_range(s, l->index, err);
    }
    return ts_err_set(err, TS_E_ARG,
                      "--shard auto: no launcher environment found (SLURM_ARRAY_TASK_ID, SLURM_PROCID, "
                      "OMPI_COMM_WORLD_RANK, PMI_RANK, JOB_COMPLETION_INDEX); give --shard K/N");
}

ts_status ts_shard_parse(const char *text, ts_shard *s, ts_env_fn getenv_fn, ts_err *err)
{
    memset(s, 0, sizeof *s);
    s->count = 1;
    if (!text) return ts_err_set(err, TS_E_ARG, "--shard needs K/N or auto");
    const char *slash = strchr(text, '/');
    char k[32];
    size_t klen = slash ? (size_t)(slash - text) : strlen(text);
    if (klen >= sizeof k) return ts_err_set(err, TS_E_ARG, "--shard %s: expected K/N (e.g. 0/4) or auto", text);
    memcpy(k, text, klen);
    k[klen] = '\0';
    int n = 0;
    if (strcmp(k, "auto") == 0) {
        if (slash && !parse_count(slash + 1, &n))
            return ts_err_set(err, TS_E_ARG, "--shard %s: expected auto or auto/N", text);
        return ts_shard_from_env(s, slash ? n : 0, getenv_fn, err);
    }
    if (!slash || !parse_count(k, &s->index) || !parse_count(slash + 1, &s->count))
        return ts_err_set(err, TS_E_ARG, "--shard %s: expected K/N with 0 <= K < N (e.g. 0/4) or auto", text);
    snprintf(s->source, sizeof s->source, "--shard %d/%d", s->index, s->count);
    return check_range(s, "--shard", err);
}

int ts_shard_takes(const ts_shard *s, size_t position)
{
    if (!s || s->count <= 1) return 1;
    return (int)(position % (size_t)s->count) == s->index;
}

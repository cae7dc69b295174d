/* test_shard.c - --shard K/N: parsing, the launchers' environments, and
 * coverage (over all K, every input exactly once, counts within one). */
#include "check.h"
#include "tilestream.h"

#include <string.h>

/* A stand-in environment: NAME=VALUE pairs. */
static const char *const *fake_env;
static char *fake_getenv(const char *name)
{
    for (int i = 0; fake_env && fake_env[i]; i += 2)
        if (strcmp(fake_env[i], name) == 0) return (char *)fake_env[i + 1];
    return NULL;
}

static int parse_with(const char *text, const char *const *env, ts_shard *s, ts_err *err)
{
    fake_env = env;
    memset(err, 0, sizeof *err);
    return ts_shard_parse(text, s, fake_getenv, err) == TS_OK;
}

static void test_parse(void)
{
    ts_shard s;
    ts_err err;
    CHECK(parse_with("0/4", NULL, &s, &err) && s.index == 0 && s.count == 4);
    CHECK(parse_with("3/4", NULL, &s, &err) && s.index == 3 && s.count == 4);
    CHECK(parse_with("0/1", NULL, &s, &err) && s.count == 1);
    const char *bad[] = {"4/4", "-1/4", "1/0", "1", "/4", "1/", "a/4", "1/4x", "1/ 4", "+1/4", "99999999999/2", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_MSG(!parse_with(bad[i], NULL, &s, &err), "'%s' accepted", bad[i]);
        CHECK_MSG(err.msg[0] != '\0', "'%s': no message", bad[i]);
    }
    CHECK(!parse_with("4/4", NULL, &s, &err) && strstr(err.msg, "0 to 3"));
}

static void test_env(void)
{
    ts_shard s;
    ts_err err;
    const char *slurm_array[] = {"SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN",
                                 "3", "SLURM_PROCID", "0", "SLURM_NTASKS", "1", NULL};
    CHECK(parse_with("auto", slurm_array, &s, &err) && s.index == 2 && s.count == 4);
    CHECK(strstr(s.source, "Slurm array") != NULL);
    const char *slurm_tasks[] = {"SLURM_PROCID", "7", "SLURM_NTASKS", "8", NULL};
    CHECK(parse_with("auto", slurm_tasks, &s, &err) && s.index == 7 && s.count == 8);
    const char *ompi[] = {"OMPI_COMM_WORLD_RANK", "1", "OMPI_COMM_WORLD_SIZE", "3", NULL};
    CHECK(parse_with("auto", ompi, &s, &err) && s.index == 1 && s.count == 3);
    const char *pmi[] = {"PMI_RANK", "0", "PMI_SIZE", "2", NULL};
    CHECK(parse_with("auto", pmi, &s, &err) && s.index == 0 && s.count == 2);
    const char *k8s[] = {"JOB_COMPLETION_INDEX", "9", NULL};
    CHECK(parse_with("auto/10", k8s, &s, &err) && s.index == 9 && s.count == 10);
    CHECK(!parse_with("auto", k8s, &s, &err) && strstr(err.msg, "auto/N"));   /* the count must be given */
    CHECK(!parse_with("auto/9", k8s, &s, &err));                             /* index 9 of 9 */
    CHECK(!parse_with("auto/5", ompi, &s, &err) && strstr(err.msg, "OMPI_COMM_WORLD_SIZE"));  /* disagree */
    CHECK(!parse_with("auto", NULL, &s, &err) && strstr(err.msg, "K/N"));
    const char *garbage[] = {"SLURM_PROCID", "x", "SLURM_NTASKS", "2", NULL};
    CHECK(!parse_with("auto", garbage, &s, &err) && strstr(err.msg, "SLURM_PROCID"));
    const char *no_count[] = {"SLURM_ARRAY_TASK_ID", "1", "PMI_RANK", "1", "PMI_SIZE", "2", NULL};
    CHECK(parse_with("auto", no_count, &s, &err) && s.index == 1 && s.count == 2 && strstr(s.source, "PMI"));
}

/* Every position taken by exactly one shard; shard sizes within one. */
static void test_coverage(void)
{
    for (int n = 1; n <= 9; n++)
        for (size_t len = 0; len <= 60; len++) {
            int taken_by[61], sizes[9] = {0};
            for (size_t i = 0; i < len; i++) taken_by[i] = 0;
            for (int k = 0; k < n; k++) {
                ts_shard s = {k, n, ""};
                for (size_t i = 0; i < len; i++)
                    if (ts_shard_takes(&s, i)) {
                        taken_by[i]++;
                        sizes[k]++;
                    }
            }
            int once = 1, lo = 1 << 30, hi = 0;
            for (size_t i = 0; i < len; i++) once &= taken_by[i] == 1;
            for (int k = 0; k < n; k++) {
                if (sizes[k] < lo) lo = sizes[k];
                if (sizes[k] > hi) hi = sizes[k];
            }
            CHECK_MSG(once, "%d shards over %zu inputs: not exactly once", n, len);
            CHECK_MSG(hi - lo <= 1, "%d shards over %zu inputs: sizes %d..%d", n, len, lo, hi);
        }
    CHECK(ts_shard_takes(NULL, 5));
}

int main(void)
{
    test_parse();
    test_env();
    test_coverage();
    return check_exit();
}

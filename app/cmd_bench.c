/* cmd_bench.c - `tilestream bench [kernels|overlap|all|cpu]`. */
#include "cli.h"
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `bench cpu`: the CPU ops on one thread and on -j threads (default all cores). */
static int bench_cpu(cli_opts *o)
{
    ts_bench_opts bo = { o->bench_w, o->bench_h, o->reps, o->only, cli_print_line, NULL };
    char *json = NULL;
    ts_err err = { 0 };
    if (ts_bench_cpu(&bo, o->jobs, o->json ? &json : NULL, &err) != TS_OK) {
        fprintf(stderr, "tilestream bench cpu: %s\n", err.msg);
        return EXIT_USAGE;
    }
    int rc = EXIT_ALL_OK;
    if (o->json) {
        FILE *f = fopen(o->json, "w");
        if (!f || fprintf(f, "{\n\"cpu\": %s}\n", json) < 0 || fclose(f) != 0) {
            fprintf(stderr, "tilestream bench: cannot write %s\n", o->json);
            rc = EXIT_USAGE;
        }
    }
    free(json);
    return rc;
}

int cmd_bench(cli_opts *o)
{
    char name[160];
    ts_err probe = { 0 };
    /* without an argument: what this build and machine can run */
    if (o->n_inputs == 0 && !ts_gpu_probe(name, sizeof name, &probe)) {
        fprintf(stderr, "tilestream bench: no GPU here (%s): benchmarking the CPU ops (`bench cpu`)\n", probe.msg);
        return bench_cpu(o);
    }
    const char *what = o->n_inputs > 0 ? o->inputs[0] : "all";
    if (!strcmp(what, "cpu") && o->n_inputs == 1) return bench_cpu(o);
    int kernels = !strcmp(what, "kernels") || !strcmp(what, "all");
    int overlap = !strcmp(what, "overlap") || !strcmp(what, "all");
    if ((!kernels && !overlap) || o->n_inputs > 1) {
        fprintf(stderr, "tilestream bench: say kernels, overlap, all or cpu, not '%s'\n", what);
        return EXIT_USAGE;
    }
    ts_bench_opts bo = { o->bench_w, o->bench_h, o->reps, o->only, cli_print_line, NULL };
    char *kjson = NULL, *ojson = NULL;
    ts_err err = { 0 };
    int rc = EXIT_ALL_OK;
    if (kernels && ts_bench_kernels(&bo, o->json ? &kjson : NULL, &err) != TS_OK) {
        fprintf(stderr, "tilestream bench: %s\n", err.msg);
        rc = EXIT_USAGE;
    }
    if (overlap && rc == EXIT_ALL_OK) {
        if (kernels) putchar('\n');
        if (ts_bench_overlap(&bo, o->json ? &ojson : NULL, &err) != TS_OK) {
            fprintf(stderr, "tilestream bench: %s\n", err.msg);
            rc = EXIT_USAGE;
        }
    }
    if (o->json && (kjson || ojson)) {
        FILE *f = fopen(o->json, "w");
        if (!f) {
            fprintf(stderr, "tilestream bench: cannot write %s\n", o->json);
            rc = EXIT_USAGE;
        } else {
            fprintf(f, "{\n\"kernels\": %s,\n\"overlap\": %s\n}\n", kjson ? kjson : "null", ojson ? ojson : "null");
            if (fclose(f) != 0) rc = EXIT_USAGE;
        }
    }
    free(kjson);
    free(ojson);
    return rc;
}

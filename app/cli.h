/* cli.h - the command line: options shared by the commands, and the
 * commands themselves. Uses only the public header. */
#ifndef TS_CLI_H
#define TS_CLI_H

#include "tilestream.h"

#include <stdint.h>

/* Exit codes: all done, some inputs failed, usage or fatal error. */
enum { EXIT_ALL_OK = 0, EXIT_SOME_FAILED = 1, EXIT_USAGE = 2 };

typedef struct cli_opts {
    const char *ops;            /* --ops CHAIN */
    const char *outdir;         /* -o */
    ts_device device;
    ts_path path;
    int streams;
    int tile_w, tile_h;
    int jobs;
    ts_format format;           /* --format; UNKNOWN = same */
    int quality, png_level;
    int skip_existing, overwrite, dry_run, keep_orientation;
    uint64_t max_pixels;
    int accept_damaged;         /* --accept-damaged */
    uint64_t memory;            /* --memory BYTES (0 = default) */
    const char *gpus;           /* --gpus all|N|LIST */
    ts_codec codec;             /* --codec auto|cpu|gpu */
    int no_shrink_on_load;      /* --no-shrink-on-load */
    const char *report, *trace, *timeline, *json;
    const char *diff_out, *html;  /* compare: heat maps folder, page */
    int quiet, verbose;
    int bench_w, bench_h, reps;
    const char *only;
    const char **inputs;        /* positional arguments */
    int n_inputs;
} cli_opts;

/* Parse argv[first..]; returns 0, or prints the problem and returns EXIT_USAGE.
 * Sets *help when --help was given. */
int cli_parse(int argc, char **argv, int first, const char *command, cli_opts *o, int *help);

int cmd_run(cli_opts *o);
int cmd_info(cli_opts *o);
int cmd_ops(cli_opts *o);
int cmd_bench(cli_opts *o);
int cmd_compare(cli_opts *o);

void cli_usage(const char *command);  /* help text for one command, or all */

/* Print a line (the library's line callback). */
void cli_print_line(void *ctx, const char *line);

#endif

/* cli.h - the command line: options shared by the commands, and the
 * commands themselves. Uses only the public header. */
#ifndef TS_CLI_H
#define TS_CLI_H

#include "tilestream.h"

#include <stdint.h>

/* Exit codes: all done, some inputs failed, usage or fatal error, and
 * interrupted (128 + SIGINT, as shells report a Ctrl-C). */
enum { EXIT_ALL_OK = 0, EXIT_SOME_FAILED = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

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
    int skip_existing;          /* -n/--skip-existing (-y turns it off again) */
    int replace_input;          /* --replace-input (old name --overwrite) */
    int dry_run, keep_orientation;
    uint64_t max_pixels;
    uint64_t max_work;          /* --max-work: JPEG decode work, samples over all scans (0 = default) */
    const char *background;     /* --background: alpha onto this colour where the format has none */
    int accept_damaged;         /* --accept-damaged */
    uint64_t memory;            /* --memory BYTES (0 = default) */
    const char *gpus;           /* --gpus all|N|LIST */
    ts_codec codec;             /* --codec auto|cpu|gpu */
    int no_shrink_on_load;      /* --no-shrink-on-load */
    const char *report, *trace, *timeline, *json;
    const char *report_lines;   /* --report-lines FILE: JSON lines, one per image */
    const char *name_template;  /* --name TEMPLATE */
    const char *files_from;     /* --files-from FILE|- */
    int null_separated;         /* -0: the list is NUL-separated */
    const char *shard;          /* --shard K/N|auto|auto/N */
    const char *diff_out, *html;  /* compare: heat maps folder, page */
    int quiet, verbose;
    int stats;                  /* --stats: the stage table after a run (also with -v) */
    int bench_w, bench_h, reps;
    const char *only;
    const char **inputs;        /* positional arguments */
    int n_inputs;
    int inputs_cap;
    char *files_buf;            /* --files-from's text; inputs point into it */
    char *ops_buf;              /* --ops @FILE: the chain read from FILE; ops points to it */
    int argc;                   /* the whole command line, for the report */
    char **argv;
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

/* The files command writes besides its images (--report, --json, ...): 1
 * when each may be written, else the reason on stderr and 0 (written.c). */
int cli_check_written_files(const char *command, const cli_opts *o);

/* The nearest of the candidates to word if it is close enough to be a
 * likely misspelling, else NULL (app/suggest.c). */
const char *cli_nearest(const char *word, const char *const *cands, int ncands);

/* Read a list of file names (one a line, or NUL-separated) from path ("-"
 * is stdin) and append them to o->inputs. 0, or prints why and returns
 * EXIT_USAGE (app/files_from.c). */
int cli_read_files_from(cli_opts *o, const char *path, int null_separated);

/* Print a line (the library's line callback). */
void cli_print_line(void *ctx, const char *line);

#endif

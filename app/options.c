/* options.c - the command line's options: one table says which command
 * takes which option; getopt_long does the parsing (--opt=value, --opt
 * value, bundled short flags -qv, `--` ends the options, options and
 * inputs in any order). An option of another command is an error that says
 * whose it is; a misspelt one gets the nearest name. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_RUN = 1, C_COMPARE = 2, C_BENCH = 4, C_INFO = 8, C_OPS = 16, C_ALL = 31 };

/* Ids of options without a short form start past every char. */
enum {
    O_OPS = 256, O_DEVICE, O_PATH, O_STREAMS, O_TILE, O_SIZE, O_FORMAT, O_QUALITY, O_PNG_LEVEL, O_REPS,
    O_MAX_PIXELS, O_MAX_WORK, O_BACKGROUND, O_STATS, O_REPLACE_INPUT, O_DRY_RUN, O_KEEP_ORIENTATION, O_ACCEPT_DAMAGED, O_REPORT,
    O_REPORT_LINES, O_TRACE, O_TIMELINE, O_JSON, O_DIFF_OUT, O_HTML, O_ONLY, O_NAME, O_FILES_FROM,
    O_SHARD, O_VERSION, O_MEMORY, O_GPUS, O_CODEC, O_NO_SHRINK_ON_LOAD,
};

typedef struct opt_def {
    const char *name;
    int has_arg;
    int id;          /* the short option's char, or an O_ id */
    unsigned cmds;   /* the commands that take it */
} opt_def;

static const opt_def OPTIONS[] = {
    { "help", no_argument, 'h', C_ALL },
    { "version", no_argument, O_VERSION, C_ALL },
    { "ops", required_argument, O_OPS, C_RUN | C_COMPARE },
    { "out", required_argument, 'o', C_RUN },
    { "device", required_argument, O_DEVICE, C_RUN },
    { "path", required_argument, O_PATH, C_RUN },
    { "streams", required_argument, O_STREAMS, C_RUN | C_COMPARE },
    { "tile", required_argument, O_TILE, C_RUN | C_COMPARE },
    { "size", required_argument, O_SIZE, C_BENCH },
    { "jobs", required_argument, 'j', C_RUN | C_BENCH },
    { "format", required_argument, O_FORMAT, C_RUN },
    { "quality", required_argument, O_QUALITY, C_RUN },
    { "png-level", required_argument, O_PNG_LEVEL, C_RUN },
    { "reps", required_argument, O_REPS, C_COMPARE | C_BENCH },
    { "max-pixels", required_argument, O_MAX_PIXELS, C_RUN | C_COMPARE },
    { "max-work", required_argument, O_MAX_WORK, C_RUN | C_COMPARE },
    { "background", required_argument, O_BACKGROUND, C_RUN },
    { "skip-existing", no_argument, 'n', C_RUN },
    { "no-clobber", no_argument, 'n', C_RUN },
    { "yes", no_argument, 'y', C_RUN },
    { "replace-input", no_argument, O_REPLACE_INPUT, C_RUN },
    { "overwrite", no_argument, O_REPLACE_INPUT, C_RUN },  /* the old name of --replace-input */
    { "dry-run", no_argument, O_DRY_RUN, C_RUN },
    { "keep-orientation", no_argument, O_KEEP_ORIENTATION, C_RUN },
    { "accept-damaged", no_argument, O_ACCEPT_DAMAGED, C_RUN | C_COMPARE },
    { "report", required_argument, O_REPORT, C_RUN | C_COMPARE },
    { "report-lines", required_argument, O_REPORT_LINES, C_RUN },
    { "trace", required_argument, O_TRACE, C_RUN },
    { "timeline", required_argument, O_TIMELINE, C_RUN },
    { "json", required_argument, O_JSON, C_BENCH | C_INFO },
    { "diff-out", required_argument, O_DIFF_OUT, C_COMPARE },
    { "html", required_argument, O_HTML, C_COMPARE },
    { "only", required_argument, O_ONLY, C_BENCH },
    { "name", required_argument, O_NAME, C_RUN },
    { "files-from", required_argument, O_FILES_FROM, C_RUN },
    { "null", no_argument, '0', C_RUN },
    { "shard", required_argument, O_SHARD, C_RUN },
    { "memory", required_argument, O_MEMORY, C_RUN },
    { "gpus", required_argument, O_GPUS, C_RUN },
    { "codec", required_argument, O_CODEC, C_RUN },
    { "no-shrink-on-load", no_argument, O_NO_SHRINK_ON_LOAD, C_RUN },
    { "quiet", no_argument, 'q', C_RUN },
    { "verbose", no_argument, 'v', C_RUN },
    { "stats", no_argument, O_STATS, C_RUN },
};
enum { N_OPTIONS = sizeof OPTIONS / sizeof OPTIONS[0] };

/* Short options; each also has a long name above, which says its commands. */
static const char SHORT_OPTIONS[] = ":ho:j:nyqv0";

static unsigned command_bit(const char *command)
{
    static const char *const names[] = { "run", "compare", "bench", "info", "ops" };
    for (unsigned i = 0; i < 5; i++)
        if (!strcmp(command, names[i])) return 1u << i;
    return 0;
}

static const char *commands_of(unsigned cmds)
{
    static char buf[64];
    static const char *const names[] = { "run", "compare", "bench", "info", "ops" };
    buf[0] = '\0';
    for (unsigned i = 0; i < 5; i++)
        if (cmds & (1u << i)) {
            if (buf[0]) strcat(buf, " and ");
            strcat(buf, names[i]);
        }
    return buf;
}

static const opt_def *find_by_id(int id)
{
    for (int i = 0; i < N_OPTIONS; i++)
        if (OPTIONS[i].id == id) return &OPTIONS[i];
    return NULL;
}

static int bad_usage(const char *command, const char *fmt, const char *arg)
{
    fprintf(stderr, "tilestream %s: ", command);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see `tilestream %s --help`)\n", command);
    return EXIT_USAGE;
}

/* An option getopt does not know: name it, and the nearest of this
 * command's options when one is close. */
static int unknown_option(const char *command, unsigned bit, const char *arg, int short_opt)
{
    if (short_opt) {
        char s[3] = { '-', (char)short_opt, '\0' };
        return bad_usage(command, "unknown option '%s'", s);
    }
    char word[64];
    const char *name = arg + strspn(arg, "-");
    snprintf(word, sizeof word, "%.*s", (int)strcspn(name, "="), name);
    const char *cands[N_OPTIONS];
    int n = 0;
    for (int i = 0; i < N_OPTIONS; i++)
        if (OPTIONS[i].cmds & bit) cands[n++] = OPTIONS[i].name;
    const char *near = cli_nearest(word, cands, n);
    fprintf(stderr, "tilestream %s: unknown option '--%s'", command, word);
    if (near) fprintf(stderr, "; did you mean '--%s'?", near);
    fprintf(stderr, "\n(see `tilestream %s --help`)\n", command);
    return EXIT_USAGE;
}

/* A number with a range of its own (tilestream.h's ts_option): the
 * library's check, so that the message and the range are the ones every
 * other side gives. */
static int take_number(const char *command, ts_option opt, const char *v, int *out)
{
    ts_err e = { 0 };
    return ts_option_parse(opt, v, out, &e) == TS_OK ? 0 : bad_usage(command, "%s", e.msg);
}

/* "WxH", each side in TS_OPT_TILE's range (--tile, and bench's --size). */
static int take_size(const char *command, const char *flag, const char *s, int *w, int *h)
{
    const ts_option_range *r = ts_option_range_of(TS_OPT_TILE);
    char *end, *end2 = NULL;
    errno = 0;
    long a = strtol(s, &end, 10), b = 0;
    if (end != s && (*end == 'x' || *end == 'X')) b = strtol(end + 1, &end2, 10);
    if (!end2 || end2 == end + 1 || *end2 || errno || a < r->min || a > r->max || b < r->min || b > r->max) {
        fprintf(stderr, "tilestream %s: %s wants WxH, each side in %d..%d, not '%s'\n(see `tilestream %s --help`)\n",
                command, flag, r->min, r->max, s, command);
        return EXIT_USAGE;
    }
    *w = (int)a;
    *h = (int)b;
    return 0;
}

/* "4G", "512M", "64k", "1000000": bytes (K, M, G, T are powers of 1024). */
static int parse_bytes(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-') return 0;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    case '\0': break;
    default: return 0;
    }
    if (*end && end[1] && strcmp(end + 1, "B") && strcmp(end + 1, "iB")) return 0;
    if (v == 0 || v > (UINT64_MAX >> shift)) return 0;
    *out = (uint64_t)v << shift;
    return 1;
}

/* --ops @FILE: the chain in a file such as samples/chains/sepia-soften.chain: lines
 * starting with '#' are comments, the other lines are joined with ','. */
static int read_chain_file(const char *command, cli_opts *o)
{
    const char *path = o->ops + 1;
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "tilestream %s: --ops @%s: %s\n", command, path, strerror(errno));
        return EXIT_USAGE;
    }
    enum { MAX_CHAIN = 1 << 16 };
    char *buf = calloc(1, MAX_CHAIN + 1), line[4096];
    size_t len = 0;
    int too_long = 0;
    while (buf && fgets(line, sizeof line, f)) {
        size_t n = strcspn(line, "\r\n"), start = strspn(line, " \t");
        line[n] = '\0';
        if (start >= n || line[start] == '#') continue;
        if (len + (n - start) + 2 > MAX_CHAIN) { too_long = 1; break; }
        if (len) buf[len++] = ',';
        memcpy(buf + len, line + start, n - start);
        len += n - start;
    }
    int failed = ferror(f);
    fclose(f);
    if (!buf || failed || too_long || len == 0) {
        fprintf(stderr, "tilestream %s: --ops @%s: %s\n", command, path,
                !buf ? "out of memory" : failed ? "read error" : too_long ? "the chain is over 64 KB" : "no op in the file");
        free(buf);
        return EXIT_USAGE;
    }
    o->ops_buf = buf;
    o->ops = buf;
    return 0;
}

/* Options with a value: check it and store it. 0 or EXIT_USAGE. */
static int take_value(const char *command, int id, const char *v, cli_opts *o)
{
    switch (id) {
    case O_OPS: o->ops = v; return 0;
    case 'o': o->outdir = v; return 0;
    case O_DEVICE:
        if (!strcmp(v, "auto")) o->device = TS_DEVICE_AUTO;
        else if (!strcmp(v, "gpu")) o->device = TS_DEVICE_GPU;
        else if (!strcmp(v, "cpu")) o->device = TS_DEVICE_CPU;
        else return bad_usage(command, "--device is auto, gpu or cpu, not '%s'", v);
        return 0;
    case O_PATH:
        if (!strcmp(v, "global")) o->path = TS_PATH_GLOBAL;
        else if (!strcmp(v, "texture")) o->path = TS_PATH_TEXTURE;
        else return bad_usage(command, "--path is global or texture, not '%s'", v);
        return 0;
    case O_STREAMS: return take_number(command, TS_OPT_STREAMS, v, &o->streams);
    case O_TILE: return take_size(command, "--tile", v, &o->tile_w, &o->tile_h);
    case O_SIZE: return take_size(command, "--size", v, &o->bench_w, &o->bench_h);
    case 'j': return take_number(command, TS_OPT_JOBS, v, &o->jobs);
    case O_FORMAT:
        if (!strcmp(v, "same")) o->format = TS_FMT_UNKNOWN;
        else if ((o->format = ts_format_from_name(v)) == TS_FMT_UNKNOWN)
            return bad_usage(command, "--format is same, png, jpg, bmp, tga or hdr, not '%s'", v);
        return 0;
    case O_QUALITY: return take_number(command, TS_OPT_QUALITY, v, &o->quality);
    case O_PNG_LEVEL: return take_number(command, TS_OPT_PNG_LEVEL, v, &o->png_level);
    case O_REPS: return take_number(command, TS_OPT_REPS, v, &o->reps);
    case O_MAX_PIXELS: {
        char *end;
        errno = 0;
        unsigned long long mp = strtoull(v, &end, 10);
        if (errno || end == v || *end || mp == 0 || v[0] == '-')
            return bad_usage(command, "--max-pixels wants a positive number, not '%s'", v);
        o->max_pixels = mp;
        return 0;
    }
    case O_MAX_WORK:
        return parse_bytes(v, &o->max_work) ? 0 : bad_usage(command, "--max-work wants a count of samples such as 40G, not '%s'", v);
    case O_BACKGROUND: {
        unsigned char rgb[3];
        ts_err e = { 0 };
        if (ts_colour_parse(v, rgb, &e) != TS_OK) return bad_usage(command, "--background: %s", e.msg);
        o->background = v;
        return 0;
    }
    case O_REPORT: o->report = v; return 0;
    case O_REPORT_LINES: o->report_lines = v; return 0;
    case O_TRACE: o->trace = v; return 0;
    case O_TIMELINE: o->timeline = v; return 0;
    case O_JSON: o->json = v; return 0;
    case O_DIFF_OUT: o->diff_out = v; return 0;
    case O_HTML: o->html = v; return 0;
    case O_ONLY: o->only = v; return 0;
    case O_NAME: o->name_template = v; return 0;
    case O_FILES_FROM: o->files_from = v; return 0;
    case O_SHARD: o->shard = v; return 0;
    case O_MEMORY:
        return parse_bytes(v, &o->memory) ? 0 : bad_usage(command, "--memory wants bytes such as 4G, 512M or 1000000, not '%s'", v);
    case O_GPUS: o->gpus = v; return 0;
    case O_CODEC:
        if (!strcmp(v, "auto")) o->codec = TS_CODEC_AUTO;
        else if (!strcmp(v, "cpu")) o->codec = TS_CODEC_CPU;
        else if (!strcmp(v, "gpu")) o->codec = TS_CODEC_GPU;
        else return bad_usage(command, "--codec is auto, cpu or gpu, not '%s'", v);
        return 0;
    }
    return bad_usage(command, "internal: option %s has no handler", "?");
}

/* Flags. Returns 1 when --version was given (print and stop). */
static int take_flag(int id, cli_opts *o, int *help)
{
    switch (id) {
    case 'h': *help = 1; break;
    case 'n': o->skip_existing = 1; break;
    case 'y': o->skip_existing = 0; break;   /* the last of -n and -y wins */
    case O_REPLACE_INPUT: o->replace_input = 1; break;
    case O_DRY_RUN: o->dry_run = 1; break;
    case O_STATS: o->stats = 1; break;
    case O_KEEP_ORIENTATION: o->keep_orientation = 1; break;
    case O_ACCEPT_DAMAGED: o->accept_damaged = 1; break;
    case O_NO_SHRINK_ON_LOAD: o->no_shrink_on_load = 1; break;
    case '0': o->null_separated = 1; break;
    case 'q': o->quiet = 1; break;
    case 'v': o->verbose = 1; break;
    case O_VERSION: return 1;
    }
    return 0;
}

static void fill_long_options(struct option *lo)
{
    for (int i = 0; i < N_OPTIONS; i++) {
        lo[i].name = OPTIONS[i].name;
        lo[i].has_arg = OPTIONS[i].has_arg;
        lo[i].flag = NULL;
        lo[i].val = OPTIONS[i].id;
    }
    memset(&lo[N_OPTIONS], 0, sizeof lo[N_OPTIONS]);
}

static int add_positional(cli_opts *o, const char *a)
{
    if (o->n_inputs + 1 >= o->inputs_cap) return 0;
    o->inputs[o->n_inputs++] = a;
    o->inputs[o->n_inputs] = NULL;
    return 1;
}

int cli_parse(int argc, char **argv, int first, const char *command, cli_opts *o, int *help)
{
    memset(o, 0, sizeof *o);
    o->png_level = -1;
    o->argc = argc;
    o->argv = argv;
    o->inputs_cap = argc + 1;
    o->inputs = calloc((size_t)o->inputs_cap, sizeof(char *));
    if (!o->inputs) return EXIT_USAGE;
    *help = 0;
    unsigned bit = command_bit(command);
    struct option lo[N_OPTIONS + 1];
    fill_long_options(lo);
    /* getopt works on argv[0..]: start it on the command's name */
    int n = argc - first + 1;
    char **args = argv + first - 1;
    opterr = 0;
    optind = 1;
    for (;;) {
        int index = -1;
        int c = getopt_long(n, args, SHORT_OPTIONS, lo, &index);
        if (c == -1) break;
        if (c == '?') return unknown_option(command, bit, args[optind - 1], optopt);
        const opt_def *d = index >= 0 ? &OPTIONS[index] : find_by_id(c == ':' ? optopt : c);
        if (c == ':') {
            if (d) return bad_usage(command, "--%s needs a value", d->name);
            return bad_usage(command, "an option needs a value: '%s'", args[optind - 1]);
        }
        if (!d) return bad_usage(command, "unknown option '%s'", args[optind - 1]);
        if (!(d->cmds & bit)) {
            fprintf(stderr, "tilestream %s: --%s is an option of %s, not of %s\n(see `tilestream %s --help`)\n",
                    command, d->name, commands_of(d->cmds), command, command);
            return EXIT_USAGE;
        }
        int rc = d->has_arg == required_argument ? take_value(command, d->id, optarg, o) : 0;
        if (rc) return rc;
        if (d->has_arg == no_argument && take_flag(d->id, o, help)) {
            ts_build_info(cli_print_line, NULL);
            *help = 2;
            return 0;
        }
        if (*help) return 0;
    }
    for (int i = optind; i < n; i++)
        if (!add_positional(o, args[i])) return EXIT_USAGE;
    if (o->ops && o->ops[0] == '@' && read_chain_file(command, o) != 0) return EXIT_USAGE;
    if (o->files_from) return cli_read_files_from(o, o->files_from, o->null_separated);
    if (o->null_separated) return bad_usage(command, "%s only goes with --files-from", "-0");
    return 0;
}

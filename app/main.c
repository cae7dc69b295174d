/* main.c - `tilestream`: command dispatch, option parsing, help. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const USAGE_ALL =
    "tilestream " TS_VERSION_STRING " - stream images through chains of operations on the GPU or CPU\n"
    "\n"
    "usage:\n"
    "  tilestream run   [opts] INPUT... -o OUTDIR   process files and folders (folders recursively)\n"
    "  tilestream compare [opts] INPUT...           global vs texture path: time and pixel difference\n"
    "  tilestream bench [kernels|overlap|all]       kernel versions vs copy bandwidth (and NPP); streams 1..N\n"
    "  tilestream info  FILE...                     size, channels, bit depth, format, orientation\n"
    "  tilestream ops                               list ops and their parameters\n"
    "\n"
    "`tilestream COMMAND --help` shows a command's options. Exit codes: 0 all done,\n"
    "1 some inputs failed (each named with its reason), 2 usage or fatal error.\n";

static const char *const USAGE_RUN =
    "usage: tilestream run [opts] INPUT... -o OUTDIR\n"
    "Process PNG and JPEG files and folders (walked recursively; the output mirrors the tree).\n"
    "  --ops CHAIN          op chain, e.g. \"matrix=sepia,gauss=sigma=1.5,rot90\" (see `tilestream ops`)\n"
    "  -o, --out DIR        output folder (created if missing)\n"
    "  --device D           auto (GPU when present, default) | gpu | cpu\n"
    "  --path P             sampling ops on the GPU: global (default) | texture\n"
    "  --streams N          CUDA streams (default 3)\n"
    "  --tile WxH           output tile size (default: automatic)\n"
    "  -j, --jobs N         codec and CPU-op threads (default: all cores)\n"
    "  --format F           same (default) | png | jpg | bmp | tga | hdr\n"
    "  --quality Q          JPEG quality 1..100 (default 90)\n"
    "  --png-level L        PNG zlib level 0..9 (default 3)\n"
    "  --skip-existing      leave outputs that already exist\n"
    "  --overwrite          allow an output to replace its own input\n"
    "  --dry-run            list what would be done\n"
    "  --keep-orientation   do not apply the EXIF orientation\n"
    "  --max-pixels N       refuse larger images (default 1073741824)\n"
    "  --accept-damaged     decode corrupt or truncated JPEGs as far as possible (default: refuse)\n"
    "  --memory BYTES       images in flight, decoded to encoded, e.g. 4G or 512M (default: 1/4 of RAM,\n"
    "                       at most 8G); an image larger than this runs alone\n"
    "  --gpus G             all (default) | N (the first N) | a list: 0,1 or 1, (device 1) or 0,0 (two engines)\n"
    "  --codec C            JPEG codec: auto (GPU where built and possible, default) | cpu | gpu\n"
    "  --no-shrink-on-load  decode JPEGs whole even when the chain starts by shrinking 2x or more\n"
    "  --report FILE.json   per-image and per-stage figures\n"
    "  --trace FILE.json    Chrome trace (Perfetto, chrome://tracing): one lane per stream and worker\n"
    "  --timeline FILE.svg  the same timeline as a picture\n"
    "  -q, --quiet          only errors\n"
    "  -v, --verbose        a line per image\n";

static const char *const USAGE_COMPARE =
    "usage: tilestream compare [opts] INPUT...\n"
    "Every sampling op of the chain (resize, scale, rotate, affine) on every input (files, folders\n"
    "walked recursively) through the GPU's global-memory path and its texture path and on the CPU\n"
    "reference: per op the kernel time (median), GB/s and the pixel differences.\n"
    "  --ops CHAIN          default \"scale=2,rotate=deg=10,scale=0.5\"\n"
    "  --reps N             timed runs per op and path (default 9)\n"
    "  --diff-out DIR       a heat map PNG of global vs texture per input and op\n"
    "  --html FILE          one self-contained page: the table and thumbnails\n"
    "  --report FILE.json   the same figures as JSON\n"
    "  --streams N, --tile WxH, --max-pixels N (as for run)\n";

static const char *const USAGE_BENCH =
    "usage: tilestream bench [kernels|overlap|all|cpu] [opts]\n"
    "  kernels: every kernel version on an image in device memory: ms, GB/s, MP/s and the ratio to\n"
    "           a device-to-device copy measured in the same run (and NPP when built with it)\n"
    "  overlap: an in-memory batch through H2D, a 3-op chain and D2H for 1, 2, 4, 8 streams,\n"
    "           pinned vs pageable memory\n"
    "  cpu:     the CPU ops on an RGB8 image on 1 and -j threads (default all cores), against\n"
    "           memcpy on as many threads; and the chain gauss=sigma=2,matrix=sepia,transpose\n"
    "  --size WxH           image size (kernels default 7680x4320, overlap 3840x2160, cpu 6000x4000)\n"
    "  --reps N             timed repetitions per line\n"
    "  --only NAME          only lines whose op contains NAME\n"
    "  --json FILE          the same figures as JSON\n";

static const char *const USAGE_INFO = "usage: tilestream info FILE...\n"
                                      "Print size, channels, bit depth, format, orientation and ICC of each file.\n";
static const char *const USAGE_OPS = "usage: tilestream ops\nList every op with its parameters and defaults.\n";

void cli_usage(const char *command)
{
    const char *text = USAGE_ALL;
    if (command && !strcmp(command, "run")) text = USAGE_RUN;
    else if (command && !strcmp(command, "compare")) text = USAGE_COMPARE;
    else if (command && !strcmp(command, "bench")) text = USAGE_BENCH;
    else if (command && !strcmp(command, "info")) text = USAGE_INFO;
    else if (command && !strcmp(command, "ops")) text = USAGE_OPS;
    fputs(text, stdout);
}

void cli_print_line(void *ctx, const char *line)
{
    (void)ctx;
    puts(line);
}

/* ------------------------------------------------------------ options */

static int bad_usage(const char *command, const char *fmt, const char *arg)
{
    fprintf(stderr, "tilestream %s: ", command);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see `tilestream %s --help`)\n", command);
    return EXIT_USAGE;
}

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static int parse_size(const char *s, int *w, int *h)
{
    char *end;
    long a = strtol(s, &end, 10);
    if (end == s || (*end != 'x' && *end != 'X')) return 0;
    char *end2;
    long b = strtol(end + 1, &end2, 10);
    if (end2 == end + 1 || *end2 || a < 1 || b < 1 || a > 1 << 20 || b > 1 << 20) return 0;
    *w = (int)a;
    *h = (int)b;
    return 1;
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

int cli_parse(int argc, char **argv, int first, const char *command, cli_opts *o, int *help)
{
    memset(o, 0, sizeof *o);
    o->png_level = -1;
    o->inputs = calloc((size_t)argc + 1, sizeof(char *));
    if (!o->inputs) return EXIT_USAGE;
    *help = 0;
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
#define NEED_VALUE() do { if (!v) return bad_usage(command, "%s needs a value", a); i++; } while (0)
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { *help = 1; return 0; }
        else if (!strcmp(a, "--ops")) { NEED_VALUE(); o->ops = v; }
        else if (!strcmp(a, "-o") || !strcmp(a, "--out")) { NEED_VALUE(); o->outdir = v; }
        else if (!strcmp(a, "--device")) {
            NEED_VALUE();
            if (!strcmp(v, "auto")) o->device = TS_DEVICE_AUTO;
            else if (!strcmp(v, "gpu")) o->device = TS_DEVICE_GPU;
            else if (!strcmp(v, "cpu")) o->device = TS_DEVICE_CPU;
            else return bad_usage(command, "--device is auto, gpu or cpu, not '%s'", v);
        } else if (!strcmp(a, "--path")) {
            NEED_VALUE();
            if (!strcmp(v, "global")) o->path = TS_PATH_GLOBAL;
            else if (!strcmp(v, "texture")) o->path = TS_PATH_TEXTURE;
            else return bad_usage(command, "--path is global or texture, not '%s'", v);
        } else if (!strcmp(a, "--streams")) {
            NEED_VALUE();
            if (!parse_int(v, 1, 16, &n)) return bad_usage(command, "--streams wants 1..16, not '%s'", v);
            o->streams = (int)n;
        } else if (!strcmp(a, "--tile")) {
            NEED_VALUE();
            if (!parse_size(v, &o->tile_w, &o->tile_h)) return bad_usage(command, "--tile wants WxH, not '%s'", v);
        } else if (!strcmp(a, "--size")) {
            NEED_VALUE();
            if (!parse_size(v, &o->bench_w, &o->bench_h)) return bad_usage(command, "--size wants WxH, not '%s'", v);
        } else if (!strcmp(a, "-j") || !strcmp(a, "--jobs")) {
            NEED_VALUE();
            if (!parse_int(v, 1, 256, &n)) return bad_usage(command, "--jobs wants 1..256, not '%s'", v);
            o->jobs = (int)n;
        } else if (!strcmp(a, "--format")) {
            NEED_VALUE();
            if (!strcmp(v, "same")) o->format = TS_FMT_UNKNOWN;
            else if ((o->format = ts_format_from_name(v)) == TS_FMT_UNKNOWN)
                return bad_usage(command, "--format is same, png, jpg, bmp, tga or hdr, not '%s'", v);
        } else if (!strcmp(a, "--quality")) {
            NEED_VALUE();
            if (!parse_int(v, 1, 100, &n)) return bad_usage(command, "--quality wants 1..100, not '%s'", v);
            o->quality = (int)n;
        } else if (!strcmp(a, "--png-level")) {
            NEED_VALUE();
            if (!parse_int(v, 0, 9, &n)) return bad_usage(command, "--png-level wants 0..9, not '%s'", v);
            o->png_level = (int)n;
        } else if (!strcmp(a, "--reps")) {
            NEED_VALUE();
            if (!parse_int(v, 1, 100000, &n)) return bad_usage(command, "--reps wants a positive number, not '%s'", v);
            o->reps = (int)n;
        } else if (!strcmp(a, "--max-pixels")) {
            NEED_VALUE();
            char *end;
            unsigned long long mp = strtoull(v, &end, 10);
            if (end == v || *end || mp == 0) return bad_usage(command, "--max-pixels wants a positive number, not '%s'", v);
            o->max_pixels = mp;
        } else if (!strcmp(a, "--memory")) {
            NEED_VALUE();
            if (!parse_bytes(v, &o->memory)) return bad_usage(command, "--memory wants bytes such as 4G, 512M or 1000000, not '%s'", v);
        } else if (!strcmp(a, "--gpus")) {
            NEED_VALUE();
            o->gpus = v;
        } else if (!strcmp(a, "--codec")) {
            NEED_VALUE();
            if (!strcmp(v, "auto")) o->codec = TS_CODEC_AUTO;
            else if (!strcmp(v, "cpu")) o->codec = TS_CODEC_CPU;
            else if (!strcmp(v, "gpu")) o->codec = TS_CODEC_GPU;
            else return bad_usage(command, "--codec is auto, cpu or gpu, not '%s'", v);
        } else if (!strcmp(a, "--no-shrink-on-load")) o->no_shrink_on_load = 1;
        else if (!strcmp(a, "--skip-existing")) o->skip_existing = 1;
        else if (!strcmp(a, "--overwrite")) o->overwrite = 1;
        else if (!strcmp(a, "--dry-run")) o->dry_run = 1;
        else if (!strcmp(a, "--keep-orientation")) o->keep_orientation = 1;
        else if (!strcmp(a, "--accept-damaged")) o->accept_damaged = 1;
        else if (!strcmp(a, "--report")) { NEED_VALUE(); o->report = v; }
        else if (!strcmp(a, "--trace")) { NEED_VALUE(); o->trace = v; }
        else if (!strcmp(a, "--timeline")) { NEED_VALUE(); o->timeline = v; }
        else if (!strcmp(a, "--json")) { NEED_VALUE(); o->json = v; }
        else if (!strcmp(a, "--diff-out")) { NEED_VALUE(); o->diff_out = v; }
        else if (!strcmp(a, "--html")) { NEED_VALUE(); o->html = v; }
        else if (!strcmp(a, "--only")) { NEED_VALUE(); o->only = v; }
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o->quiet = 1;
        else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) o->verbose = 1;
        else if (!strcmp(a, "--version")) { printf("tilestream %s\n", TS_VERSION_STRING); exit(0); }
        else if (a[0] == '-' && a[1] != '\0') return bad_usage(command, "unknown option '%s'", a);
        else o->inputs[o->n_inputs++] = a;
#undef NEED_VALUE
    }
    return 0;
}

static void print_line(void *ctx, const char *line)
{
    (void)ctx;
    printf("%s\n", line);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_usage(NULL);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        cli_usage(argc > 2 ? argv[2] : NULL);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
        ts_build_info(print_line, NULL);
        return 0;
    }
    static const struct { const char *name; int (*fn)(cli_opts *); } commands[] = {
        { "run", cmd_run }, { "compare", cmd_compare }, { "bench", cmd_bench },
        { "info", cmd_info }, { "ops", cmd_ops },
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(cmd, commands[i].name)) continue;
        cli_opts o;
        int help = 0, rc = cli_parse(argc, argv, 2, cmd, &o, &help);
        if (rc == 0 && help) cli_usage(cmd);
        else if (rc == 0) rc = commands[i].fn(&o);
        free(o.inputs);
        return rc;
    }
    fprintf(stderr, "tilestream: unknown command '%s' (run, compare, bench, info, ops; see --help)\n", cmd);
    return EXIT_USAGE;
}

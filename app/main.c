/* main.c - `tilestream`: command dispatch, option parsing, help. */
#include "cli.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

static const char *const USAGE_ALL =
    "tilestream " TS_VERSION_STRING " - stream images through chains of operations on the GPU or CPU\n"
    "\n"
    "usage:\n"
    "  tilestream run   [opts] INPUT... -o OUTDIR   process files and folders (folders are walked recursively)\n"
    "  tilestream compare [opts] INPUT...           global vs texture path: time and pixel difference per op\n"
    "  tilestream bench [kernels|overlap|all|cpu]   kernel versions vs copy bandwidth (and NPP); streams 1..N; CPU ops\n"
    "  tilestream info  INPUT...                    size, channels, bit depth, format, orientation, ICC (folders walked)\n"
    "  tilestream ops                               list ops and their parameters\n"
    "\n"
    "`tilestream COMMAND --help` shows a command's options. Exit codes: 0 all done,\n"
    "1 some inputs failed (each named with its reason), 2 usage or fatal error, 130 interrupted\n"
    "(Ctrl-C), 143 terminated (SIGTERM).\n";

static const char *const USAGE_RUN =
    "usage: tilestream run [opts] INPUT... -o OUTDIR\n"
    "Process PNG and JPEG files and folders (walked recursively; the output mirrors the tree).\n"
    "Values go as `--opt value` or `--opt=value`; short flags bundle (-qv); `--` ends the options.\n"
    "  --ops CHAIN          op chain, e.g. \"matrix=sepia,gauss=sigma=1.5,rot90\" (see `tilestream ops`),\n"
    "                       or @FILE: a chain file (samples/chains/; '#' lines are comments)\n"
    "  -o, --out DIR        output folder (created if missing; never walked as an input)\n"
    "  --name TEMPLATE      output path below DIR from {dir} {stem} {ext} {n} {n:W}\n"
    "                       (default {dir}/{stem}.{ext}: the input tree)\n"
    "  --files-from FILE    also take the inputs listed in FILE, one a line (- = stdin)\n"
    "  -0, --null           the --files-from list is NUL-separated (find -print0)\n"
    "  --shard K/N          only the K-th of N shares of the sorted inputs (0 <= K < N);\n"
    "                       auto or auto/N: from Slurm, Open MPI, PMI or a Kubernetes indexed Job\n"
    "  --device D           auto (GPU when present, default) | gpu | cpu\n"
    "  --path P             sampling ops on the GPU: global (default) | texture\n"
    "  --streams N          CUDA streams (default 3)\n"
    "  --tile WxH           output tile size (default: automatic)\n"
    "  -j, --jobs N         codec and CPU-op threads (default: all cores)\n"
    "  --format F           same (default) | png | jpg | bmp | tga | hdr\n"
    "  --quality Q          JPEG quality 1..100 (default 90)\n"
    "  --png-level L        PNG zlib level 0..9 (default 3)\n"
    "  -n, --skip-existing  leave outputs that already exist (also --no-clobber)\n"
    "  -y, --yes            replace outputs that already exist (the default; undoes -n)\n"
    "  --replace-input      allow an output to replace an input of the run (old name: --overwrite)\n"
    "  --dry-run            print every planned output and every refusal; write nothing\n"
    "  --keep-orientation   do not apply the EXIF orientation\n"
    "  --background COLOUR  alpha goes onto this where the format has none (JPEG, HDR; default white)\n"
    "  --max-pixels N       refuse larger images (default 1073741824)\n"
    "  --max-work N         refuse JPEGs whose scans decode more samples, e.g. 40G (default: 16\n"
    "                       passes over the image, at least 2000000000): bounds the time per file\n"
    "  --accept-damaged     decode corrupt or truncated JPEGs as far as possible (default: refuse)\n"
    "  --memory BYTES       images in flight, decoded to encoded, e.g. 4G or 512M (default: 1/4 of RAM,\n"
    "                       at most 8G); an image larger than this runs alone\n"
    "  --gpus G             all (default) | N (the first N) | a list: 0,1 or 1, (device 1) or 0,0 (two engines)\n"
    "  --codec C            JPEG codec: auto (GPU where built and possible, default) | cpu | gpu\n"
    "  --no-shrink-on-load  decode JPEGs whole even when the chain starts by shrinking 2x or more\n"
    "  --report FILE.json   the run as JSON: options, device, stages, every image (docs/REPORT.md)\n"
    "  --report-lines FILE  one JSON line per image as it finishes\n"
    "  --trace FILE.json    Chrome trace (Perfetto, chrome://tracing): one lane per stream and worker\n"
    "  --timeline FILE.svg  the same timeline as a picture\n"
    "  -q, --quiet          only errors\n"
    "  -v, --verbose        a line per image, skipped ones too, and the stage table\n"
    "  --stats              the stage table after the run (default: a one-line summary)\n"
    "Exit codes: 0 all done; 1 some inputs failed or were refused (each named); 2 usage or fatal\n"
    "error, found before any image is read where it can be; 130 interrupted (Ctrl-C) or 143\n"
    "terminated (SIGTERM), after the images in flight are finished (SIGTERM: within 10 s).\n";

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
    "  --streams N, --tile WxH, --max-pixels N, --max-work N (as for run)\n";

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

static const char *const USAGE_INFO = "usage: tilestream info [--json FILE] INPUT...\n"
                                      "Print size, channels, bit depth, format, orientation and ICC of each file\n"
                                      "(folders are walked as `run` walks them).\n"
                                      "  --json FILE          also a JSON object a line per file in FILE (- : on\n"
                                      "                       stdout, instead of the text): input, format, width,\n"
                                      "                       height, channels, color, bits, palette, interlaced,\n"
                                      "                       progressive, orientation, icc_bytes; a file that\n"
                                      "                       fails: input, error\n";
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

static const char *const COMMANDS[] = { "run", "compare", "bench", "info", "ops" };

static int unknown_command(const char *cmd)
{
    const char *near = cli_nearest(cmd, COMMANDS, 5);
    fprintf(stderr, "tilestream: unknown command '%s'", cmd);
    if (near) fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, "\n(commands: run, compare, bench, info, ops; see `tilestream --help`)\n");
    return EXIT_USAGE;
}

/* libjpeg mallocs a progressive JPEG's coefficient arrays (a 24 MP photo:
 * about 72 MB in three blocks) for each image it decodes. Above glibc's
 * mmap threshold each block is a fresh mapping, faulted in page by page and
 * unmapped after, and a heap's top is trimmed back to the system as soon as
 * 128 KB of it is free; the next image faults the same pages in again.
 * With blocks up to 64 MB kept in the heaps, and a heap trimmed only past
 * 128 MB free, the next decode on the same worker reuses them, already
 * faulted in (docs/PERFORMANCE.md, "the CPU backend"). Larger blocks are
 * mapped as before. The price is memory a worker keeps between images. */
static void keep_decode_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
#endif
}

int main(int argc, char **argv)
{
    keep_decode_memory();
    /* A closed pipe (stderr into `head`) or the file-size limit (ulimit -f)
     * fail the write that meets them (EPIPE, EFBIG), which the caller
     * reports for that file; by default either signal would kill the whole
     * run and leave its temporaries. */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
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
        ts_build_info(cli_print_line, NULL);
        return 0;
    }
    static int (*const run_command[])(cli_opts *) = { cmd_run, cmd_compare, cmd_bench, cmd_info, cmd_ops };
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++) {
        if (strcmp(cmd, COMMANDS[i])) continue;
        cli_opts o;
        int help = 0, rc = cli_parse(argc, argv, 2, cmd, &o, &help);
        if (rc == 0 && help == 1) cli_usage(cmd);
        else if (rc == 0 && help == 0) rc = cli_check_written_files(cmd, &o) ? run_command[i](&o) : EXIT_USAGE;
        free(o.inputs);
        free(o.files_buf);
        free(o.ops_buf);
        return rc;
    }
    return unknown_command(cmd);
}

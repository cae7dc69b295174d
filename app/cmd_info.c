/* cmd_info.c - `tilestream info` and `tilestream ops`. */
#include "cli.h"

#include <stdio.h>

static const char *const ORIENTATION_NAMES[9] = {
    "?", "normal", "flip h", "rot180", "flip v", "transpose", "rot90 cw", "transverse", "rot270 cw",
};

int cmd_info(cli_opts *o)
{
    int failed = 0;
    if (o->n_inputs == 0) {
        fprintf(stderr, "tilestream info: no files (see `tilestream info --help`)\n");
        return EXIT_USAGE;
    }
    /* folders are walked as `run` walks them */
    ts_input_list files = { 0 };
    ts_err walk_err = { 0 };
    if (ts_inputs_collect((const char *const *)o->inputs, o->n_inputs, NULL, &files, &walk_err) != TS_OK) {
        fprintf(stderr, "tilestream info: %s\n", walk_err.msg);
        return EXIT_USAGE;
    }
    for (int i = 0; i < files.n; i++) {
        ts_image_info info;
        ts_err err = { 0 };
        const char *path = files.v[i].path;
        if (files.v[i].error) {
            fprintf(stderr, "tilestream: %s\n", files.v[i].error);
            failed++;
            continue;
        }
        if (ts_image_probe(path, &info, &err) != TS_OK) {
            fprintf(stderr, "tilestream: %s\n", err.msg);
            failed++;
            continue;
        }
        int orient = info.orientation >= 1 && info.orientation <= 8 ? info.orientation : 1;
        printf("%s: %s %dx%d, %d channel%s (%s), %d-bit%s%s%s, orientation %d (%s)", path,
               ts_format_name(info.format), info.w, info.h, info.c, info.c == 1 ? "" : "s",
               info.color ? info.color : "?", info.bit_depth, info.palette ? ", palette" : "",
               info.interlaced ? ", interlaced" : "", info.progressive ? ", progressive" : "", orient,
               ORIENTATION_NAMES[orient]);
        if (info.icc_len) printf(", ICC profile %zu bytes", info.icc_len);
        putchar('\n');
    }
    if (files.n == 0) fprintf(stderr, "tilestream info: no PNG or JPEG files found\n"), failed = 1;
    ts_inputs_free(&files);
    return failed ? EXIT_SOME_FAILED : EXIT_ALL_OK;
}

int cmd_ops(cli_opts *o)
{
    if (o->n_inputs > 0) {
        fprintf(stderr, "tilestream ops: takes no arguments ('%s'); it lists every op\n", o->inputs[0]);
        return EXIT_USAGE;
    }
    ts_ops_list(cli_print_line, NULL);
    return EXIT_ALL_OK;
}

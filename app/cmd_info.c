/* cmd_info.c - `tilestream info` and `tilestream ops`. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const ORIENTATION_NAMES[9] = {
    "?", "normal", "flip h", "rot180", "flip v", "transpose", "rot90 cw", "transverse", "rot270 cw",
};

/* One JSON line for path: its header, or why it could not be read. */
static void info_json(FILE *f, const char *path, const ts_image_info *info, int orient, const char *error)
{
    fputs("{\"input\": ", f);
    ts_json_string(f, path);
    if (error) {
        fputs(", \"error\": ", f);
        ts_json_string(f, error);
        fputs("}\n", f);
        return;
    }
    fprintf(f, ", \"format\": \"%s\", \"width\": %d, \"height\": %d, \"channels\": %d, \"color\": ",
            ts_format_name(info->format), info->w, info->h, info->c);
    ts_json_string(f, info->color ? info->color : "");
    fprintf(f, ", \"bits\": %d, \"palette\": %s, \"interlaced\": %s, \"progressive\": %s, \"orientation\": %d, "
               "\"icc_bytes\": %zu}\n",
            info->bit_depth, info->palette ? "true" : "false", info->interlaced ? "true" : "false",
            info->progressive ? "true" : "false", orient, info->icc_len);
}

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
    /* --json FILE: a line per file there; "-": on stdout, instead of the text */
    const int json_out = o->json && !strcmp(o->json, "-");
    FILE *json = json_out ? stdout : o->json ? fopen(o->json, "w") : NULL;
    if (o->json && !json) {
        fprintf(stderr, "tilestream info: cannot write %s: %s\n", o->json, strerror(errno));
        ts_inputs_free(&files);
        return EXIT_USAGE;
    }
    for (int i = 0; i < files.n; i++) {
        ts_image_info info;
        ts_err err = { 0 };
        const char *path = files.v[i].path;
        if (files.v[i].error) {
            fprintf(stderr, "tilestream: %s\n", files.v[i].error);
            if (json) info_json(json, path, NULL, 0, files.v[i].error);
            failed++;
            continue;
        }
        if (ts_image_probe(path, &info, &err) != TS_OK) {
            fprintf(stderr, "tilestream: %s\n", err.msg);
            if (json) info_json(json, path, NULL, 0, err.msg);
            failed++;
            continue;
        }
        int orient = info.orientation >= 1 && info.orientation <= 8 ? info.orientation : 1;
        if (json) info_json(json, path, &info, orient, NULL);
        if (json_out) continue;
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
    if (json && (json_out ? fflush(json) : fclose(json)) != 0) {
        fprintf(stderr, "tilestream info: cannot write %s\n", json_out ? "standard output" : o->json);
        return EXIT_USAGE;
    }
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

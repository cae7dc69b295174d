/* files_from.c - `run --files-from FILE|-`: inputs listed in a file, one a
 * line (a trailing '\r' and empty lines ignored), or NUL-separated with -0
 * as `find -print0` writes them, for names that hold newlines. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *slurp(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (ferror(f) || feof(f)) break;
        char *bigger = cap < ((size_t)1 << 40) ? realloc(buf, cap * 2) : NULL;
        if (!bigger) { free(buf); return NULL; }
        buf = bigger;
        cap *= 2;
    }
    if (!buf || ferror(f)) { free(buf); return NULL; }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static int add_input(cli_opts *o, const char *name)
{
    if (o->n_inputs + 1 >= o->inputs_cap) {
        int cap = o->inputs_cap * 2 + 16;
        const char **v = realloc(o->inputs, sizeof *v * (size_t)cap);
        if (!v) return 0;
        o->inputs = v;
        o->inputs_cap = cap;
    }
    o->inputs[o->n_inputs++] = name;
    o->inputs[o->n_inputs] = NULL;
    return 1;
}

int cli_read_files_from(cli_opts *o, const char *path, int null_separated)
{
    int is_stdin = !strcmp(path, "-");
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "tilestream run: --files-from %s: %s\n", path, strerror(errno));
        return EXIT_USAGE;
    }
    size_t len = 0;
    char *buf = slurp(f, &len);
    int read_errno = errno;
    if (!is_stdin) fclose(f);
    if (!buf) {
        fprintf(stderr, "tilestream run: --files-from %s: cannot read: %s\n", path, strerror(read_errno));
        return EXIT_USAGE;
    }
    free(o->files_buf);
    o->files_buf = buf;
    char sep = null_separated ? '\0' : '\n';
    for (size_t start = 0; start < len;) {
        char *end = memchr(buf + start, sep, len - start);
        size_t stop = end ? (size_t)(end - buf) : len;
        buf[stop] = '\0';
        if (!null_separated && stop > start && buf[stop - 1] == '\r') buf[stop - 1] = '\0';
        if (buf[start] && !add_input(o, buf + start)) {
            fprintf(stderr, "tilestream run: --files-from %s: out of memory\n", path);
            return EXIT_USAGE;
        }
        start = stop + 1;
    }
    return 0;
}

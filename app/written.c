/* written.c - the files a command writes besides its images (--report,
 * --report-lines, --trace, --timeline, --json, --html): checked before
 * any work, so that a mistyped command line loses nothing. `run --report
 * a.jpg b.jpg -o out` takes a.jpg for the report's name; replacing it
 * with JSON at the end would destroy a photo. So an existing file is
 * replaced only when it already holds what the option writes (its first
 * byte that is not blank: '{' or '[' for JSON, '<' for SVG and HTML),
 * as a report from an earlier run does; and the folder must be writable,
 * since each is written beside its name and renamed. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first byte of path that is not blank, or -1 (empty, unreadable). */
static int first_byte(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int c;
    while ((c = fgetc(f)) != EOF && strchr(" \t\r\n", c)) {}
    fclose(f);
    return c == EOF ? -1 : c;
}

/* 1 when command may write path for option (firsts: the bytes its content
 * may start with); else a line on stderr and 0. */
static int check_file(const char *command, const char *option, const char *path, const char *firsts,
                      const char *what)
{
    struct stat sb;
    char dir[4096];
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            fprintf(stderr, "tilestream %s: %s %s: is a folder\n", command, option, path);
            return 0;
        }
        if (!S_ISREG(sb.st_mode)) return 1;   /* a pipe or a device (/dev/stdout): writing replaces nothing */
        int c = sb.st_size > 0 ? first_byte(path) : -1;
        if (sb.st_size > 0 && (c < 0 || !strchr(firsts, c))) {
            fprintf(stderr, "tilestream %s: %s %s: exists and is not %s, so it is not replaced (name a new file, "
                            "or remove it first)\n", command, option, path, what);
            return 0;
        }
    }
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = '\0';
    else *slash = '\0';
    errno = 0;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "tilestream %s: %s %s: cannot write in %s: %s\n", command, option, path, dir,
                errno ? strerror(errno) : "not a folder");
        return 0;
    }
    return 1;
}

int cli_check_written_files(const char *command, const cli_opts *o)
{
    static const char JSON[] = "{[", MARKUP[] = "<";
    return (!o->report || check_file(command, "--report", o->report, JSON, "JSON")) &&
           (!o->report_lines || check_file(command, "--report-lines", o->report_lines, JSON, "JSON")) &&
           (!o->trace || check_file(command, "--trace", o->trace, JSON, "JSON")) &&
           (!o->timeline || check_file(command, "--timeline", o->timeline, MARKUP, "an SVG picture")) &&
           (!o->json || !strcmp(o->json, "-") || check_file(command, "--json", o->json, JSON, "JSON")) &&
           (!o->html || check_file(command, "--html", o->html, MARKUP, "an HTML page"));
}

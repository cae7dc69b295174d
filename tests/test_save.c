/* test_save.c - saving never leaves a half-written file or a temporary
 * behind: unwritable destinations fail cleanly, a failure while encoding
 * (the file size limit stands in for a full disk) leaves the old file as
 * it was, a destination that is a folder is refused after encoding, and
 * parallel writers to one path leave exactly one complete image. A process
 * killed in the middle of an encode removes its temporary in the signal
 * handler (ts_save_remove_temps), and a leftover of an earlier run that was
 * killed harder is swept by the next save of that output. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <utime.h>
#include <unistd.h>
#include "check.h"
#include "codec_test.h"
#include "tilestream.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

static char tmpdir[512];

static const char *in_tmp(const char *name)
{
    static char path[4][900];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, sizeof path[0], "%s/%s", tmpdir, name);
    return p;
}

static int loads_as(const char *path, const ts_image *want)
{
    ts_image img;
    ts_err err;
    if (ts_image_load(path, NULL, &img, &err) != TS_OK)
        return 0;
    int same = ct_same_pixels(&img, want);
    ts_image_free(&img);
    return same;
}

static void test_plain_save_and_replace(void)
{
    ts_image a = ct_random_image(20, 10, 3, TS_U8), b = ct_random_image(30, 12, 3, TS_U8);
    ts_err err = {0};
    CHECK_MSG(ts_image_save(in_tmp("out.png"), &a, NULL, &err) == TS_OK, "%s", err.msg);
    CHECK_EQ_INT(ct_count_entries(tmpdir), 1);
    CHECK(loads_as(in_tmp("out.png"), &a));
    CHECK(ts_image_save(in_tmp("out.png"), &b, NULL, &err) == TS_OK);
    CHECK_EQ_INT(ct_count_entries(tmpdir), 1);
    CHECK(loads_as(in_tmp("out.png"), &b));

    /* The file gets ordinary permissions (umask applies), not 0600. */
    struct stat st;
    mode_t mask = umask(022);
    umask(mask);
    CHECK(stat(in_tmp("out.png"), &st) == 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0666 & ~mask);

    /* Long names still leave room for the temporary name. */
    char name[256];
    memset(name, 'n', 250);
    strcpy(name + 250, ".png");
    CHECK_MSG(ts_image_save(in_tmp(name), &a, NULL, &err) == TS_OK, "%s", err.msg);
    CHECK(loads_as(in_tmp(name), &a));
    unlink(in_tmp(name));

    /* An unknown extension is refused before any file is made. */
    CHECK_EQ_INT(ts_image_save(in_tmp("out.xyz"), &a, NULL, &err), TS_E_FORMAT);
    CHECK(strstr(err.msg, "out.xyz") != NULL);
    CHECK_EQ_INT(ct_count_entries(tmpdir), 1);
    ts_image_free(&a);
    ts_image_free(&b);
}

static void test_unwritable(void)
{
    ts_image a = ct_random_image(8, 8, 1, TS_U8);
    ts_err err = {0};
    const char *missing = in_tmp("no/such/dir/out.png");
    CHECK_EQ_INT(ts_image_save(missing, &a, NULL, &err), TS_E_IO);
    CHECK_MSG(ct_starts_with(err.msg, missing), "%s", err.msg);
    fprintf(stderr, "  %s\n", err.msg);
    CHECK_EQ_INT(ct_count_entries(tmpdir), 1);

    /* procfs refuses new files even to root. */
    if (access("/proc/self", F_OK) == 0) {
        CHECK_EQ_INT(ts_image_save("/proc/tilestream-test.png", &a, NULL, &err), TS_E_IO);
        CHECK(ct_starts_with(err.msg, "/proc/tilestream-test.png"));
    }

    /* A read-only folder (root may write anyway, so only without it). */
    char ro[900];
    snprintf(ro, sizeof ro, "%s/readonly", tmpdir);
    CHECK(mkdir(ro, 0555) == 0);
    char target[1000];
    snprintf(target, sizeof target, "%s/out.jpg", ro);
    if (geteuid() != 0) {
        CHECK_EQ_INT(ts_image_save(target, &a, NULL, &err), TS_E_IO);
        CHECK_EQ_INT(ct_count_entries(ro), 0);
    } else {
        fprintf(stderr, "  running as root: the read-only folder case is not meaningful\n");
    }
    rmdir(ro);

    /* A folder where the file should go: encoding succeeds, rename fails,
     * and the temporary file must go. */
    CHECK(mkdir(in_tmp("taken.png"), 0755) == 0);
    CHECK_EQ_INT(ts_image_save(in_tmp("taken.png"), &a, NULL, &err), TS_E_IO);
    CHECK_MSG(strstr(err.msg, "taken.png") != NULL, "%s", err.msg);
    fprintf(stderr, "  %s\n", err.msg);
    CHECK_EQ_INT(ct_count_entries(tmpdir), 2);
    rmdir(in_tmp("taken.png"));
    ts_image_free(&a);
}

/* With RLIMIT_FSIZE below the encoded size, writes fail with EFBIG as on
 * a full disk, either inside the encoder or when fclose flushes. The old
 * file must survive byte for byte and no temporary may remain. */
static void test_write_failure(const char *name, int w, int h)
{
    ts_image old = ct_random_image(10, 10, 3, TS_U8), big = ct_random_image(w, h, 3, TS_U8);
    ts_err err = {0};
    const char *path = in_tmp(name);
    CHECK(ts_image_save(path, &old, NULL, &err) == TS_OK);
    size_t before_len;
    unsigned char *before = ct_read_file(path, &before_len);
    int entries = ct_count_entries(tmpdir);

    struct rlimit saved, small;
    CHECK(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    small = saved;
    small.rlim_cur = 2048;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    ts_status st = ts_image_save(path, &big, NULL, &err);
    CHECK(setrlimit(RLIMIT_FSIZE, &saved) == 0);
    signal(SIGXFSZ, SIG_DFL);

    CHECK_MSG(st == TS_E_IO, "%s: status %d (%s)", name, st, err.msg);
    CHECK_MSG(ct_starts_with(err.msg, path), "%s", err.msg);
    fprintf(stderr, "  %dx%d %s: %s\n", w, h, name, err.msg);
    size_t after_len;
    unsigned char *after = ct_read_file(path, &after_len);
    CHECK_MSG(before && after && before_len == after_len && memcmp(before, after, after_len) == 0,
              "%s was changed by a failed save", name);
    CHECK_EQ_INT(ct_count_entries(tmpdir), entries);
    unlink(path);
    free(before);
    free(after);
    ts_image_free(&old);
    ts_image_free(&big);
}

/* ---- parallel writers ----------------------------------------------- */

typedef struct writer {
    ts_image img;
    const char *path;
    int failures;
} writer;

static void *writer_main(void *arg)
{
    writer *w = arg;
    for (int i = 0; i < 8; i++) {
        ts_err err;
        if (ts_image_save(w->path, &w->img, NULL, &err) != TS_OK)
            w->failures++;
    }
    return NULL;
}

static void test_parallel_writers(void)
{
    enum { N = 4 };
    writer ws[N];
    pthread_t th[N];
    const char *path = in_tmp("shared.png");
    for (int i = 0; i < N; i++) {
        ws[i].img = ct_random_image(64, 48, 3, TS_U8);
        ws[i].path = path;
        ws[i].failures = 0;
    }
    for (int i = 0; i < N; i++)
        CHECK(pthread_create(&th[i], NULL, writer_main, &ws[i]) == 0);
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    int matches = 0;
    for (int i = 0; i < N; i++) {
        CHECK_EQ_INT(ws[i].failures, 0);
        matches += loads_as(path, &ws[i].img);
    }
    CHECK_EQ_INT(matches, 1);                   /* one writer's complete image */
    CHECK_EQ_INT(ct_count_entries(tmpdir), 1);  /* and no temporaries */
    unlink(path);
    for (int i = 0; i < N; i++)
        ts_image_free(&ws[i].img);
}

/* Is there a ".*.tmp" in dir? */
static int has_temp(const char *dir)
{
    DIR *d = opendir(dir);
    int found = 0;
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (de->d_name[0] == '.' && n > 4 && !strcmp(de->d_name + n - 4, ".tmp")) found = 1;
    }
    if (d) closedir(d);
    return found;
}

static void on_term(int sig)
{
    (void)sig;
    ts_save_remove_temps();
    _exit(130);
}

/* A child encodes a large noisy PNG at zlib level 9 (seconds); once its
 * temporary exists it gets SIGTERM, whose handler is the CLI's. */
static void test_killed_mid_encode(void)
{
    const char *path = in_tmp("killed.png");
    ts_image big = ct_random_image(3000, 2000, 3, TS_U8);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        signal(SIGTERM, on_term);
        ts_save_opts so = { .format = TS_FMT_PNG, .quality = 0, .png_level = 9 };
        ts_err err;
        ts_image_save(path, &big, &so, &err);
        _exit(0);
    }
    int seen = 0;
    for (int i = 0; i < 2000 && !seen; i++) {  /* up to 10 s */
        seen = has_temp(tmpdir);
        if (!seen) usleep(5000);
    }
    CHECK_MSG(seen, "no temporary appeared while the child encoded");
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 130, "child status %d", status);
    CHECK_MSG(!has_temp(tmpdir), "a temporary was left behind");
    CHECK(access(path, F_OK) != 0);  /* and no half-written output */
    ts_image_free(&big);
}

/* A leftover ".out.png.AbC123.tmp" that no writer holds goes with the
 * sweep of its folder; one a writer holds (locked), one younger than a
 * second, and names that are not of our outputs stay. */
static void test_stale_sweep(void)
{
    const char *old = in_tmp(".swept.png.AbC123.tmp");
    const char *held = in_tmp(".held.jpg.XyZ789.tmp");
    const char *young = in_tmp(".young.png.Qrs456.tmp");
    const char *other = in_tmp(".notes.txt.AbC123.tmp");
    const char *names[4] = { old, held, young, other };
    for (int i = 0; i < 4; i++) {
        FILE *f = fopen(names[i], "wb");
        CHECK(f != NULL);
        if (f) fclose(f);
    }
    struct utimbuf past = { time(NULL) - 600, time(NULL) - 600 };
    CHECK(utime(old, &past) == 0);
    CHECK(utime(held, &past) == 0);
    CHECK(utime(other, &past) == 0);
    int fd = open(held, O_RDONLY);
    CHECK(fd >= 0 && flock(fd, LOCK_EX) == 0);
    ts_save_sweep_temps(tmpdir);
    CHECK(access(old, F_OK) != 0);
    CHECK(access(held, F_OK) == 0);
    CHECK(access(young, F_OK) == 0);
    CHECK(access(other, F_OK) == 0);
    close(fd);
    CHECK(utime(young, &past) == 0);
    ts_save_sweep_temps(tmpdir);   /* the writer is gone: both stale now */
    CHECK(access(held, F_OK) != 0);
    CHECK(access(young, F_OK) != 0);
    unlink(other);
}

int main(void)
{
    check_seed();
    ct_tempdir(tmpdir, sizeof tmpdir, "ts_save");
    test_plain_save_and_replace();
    test_unwritable();
    unlink(in_tmp("out.png"));
    test_write_failure("fail.png", 200, 200);   /* fails inside libpng */
    test_write_failure("fail.jpg", 400, 300);   /* inside libjpeg */
    test_write_failure("small.png", 30, 30);    /* fits stdio's buffer: fails in fclose */
#ifdef TS_HAVE_STB
    test_write_failure("fail.bmp", 100, 100);
    test_write_failure("fail.tga", 100, 100);
    test_write_failure("fail.hdr", 100, 100);
#endif
    test_parallel_writers();
    test_killed_mid_encode();
    test_stale_sweep();
    ct_remove_tree(tmpdir);
    return check_exit();
}

/* codec.c - ts_image_probe, ts_image_load and ts_image_save: open the file,
 * pick the codec (by content when reading, by option or extension when
 * writing), and make saving atomic.
 *
 * Saving writes to a temporary file in the destination's own directory
 * (".name.XXXXXX.tmp", created with O_EXCL so that parallel writers never
 * share one) and renames it over the destination only after the encoder
 * and fclose have succeeded. rename() within one directory is atomic, so a
 * reader sees the old file or the complete new one, never half of either;
 * on any failure the temporary file is removed.
 *
 * A process killed in the middle of an encode cannot run that cleanup, so
 * the temporaries being written sit in a fixed table that a signal handler
 * may walk (ts_save_remove_temps: only atomic loads and unlink), and each
 * is locked while it is written, so that a later run can tell and remove
 * the ones a killed process left (ts_save_sweep_temps). */
#include <dirent.h>
#include "codec_formats.h"
#include "codec_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------- reading */

/* Open path for reading and tell its format from the first bytes. On
 * success *out is open and positioned at the start, and *size is the
 * file's size. Only regular files: the open never blocks (O_NONBLOCK, so a
 * FIFO without a writer cannot hang the run), and a FIFO, socket or device
 * is refused, since neither its size nor its end can be known. */
static ts_status open_image(const char *path, FILE **out, ts_format *format, uint64_t *size,
                            ts_err *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return ts_err_set(err, TS_E_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    const char *refused = fstat(fd, &st) != 0 ? "cannot be examined"
                        : S_ISDIR(st.st_mode) ? "is a directory, not an image"
                        : !S_ISREG(st.st_mode) ? "is not a regular file (a FIFO, socket or device)"
                        : NULL;
    int flags = refused ? -1 : fcntl(fd, F_GETFL);
    FILE *f = flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        int e = errno;
        close(fd);
        if (refused) return ts_err_set(err, TS_E_IO, "%s: %s", path, refused);
        return ts_err_set(err, TS_E_IO, "%s: cannot open: %s", path, strerror(e));
    }
    *size = (uint64_t)st.st_size;
    unsigned char head[TS_SNIFF_BYTES];
    size_t n = fread(head, 1, sizeof head, f);
    if (ferror(f)) {
        int e = errno;
        fclose(f);
        return ts_err_set(err, TS_E_IO, "%s: read error: %s", path, strerror(e));
    }
    if (n == 0) {
        fclose(f);
        return ts_err_set(err, TS_E_FORMAT, "%s: empty file (0 bytes), not an image", path);
    }
    ts_format fmt = ts_format_sniff(head, n);
    if (!ts_format_can_read(fmt)) {
        fclose(f);
        if (fmt != TS_FMT_UNKNOWN)
            return ts_err_set(err, TS_E_FORMAT, "%s: %s images cannot be read (only PNG and JPEG)",
                              path, ts_format_name(fmt));
        return ts_err_set(err, TS_E_FORMAT, "%s: not a PNG or JPEG image", path);
    }
    rewind(f);
    *out = f;
    *format = fmt;
    return TS_OK;
}

ts_status ts_image_probe(const char *path, ts_image_info *info, ts_err *err)
{
    FILE *f = NULL;
    ts_format fmt;
    uint64_t size;
    memset(info, 0, sizeof *info);
    ts_status st = open_image(path, &f, &fmt, &size, err);
    if (st != TS_OK)
        return st;
    if (fmt == TS_FMT_PNG)
        st = ts_png_probe(f, path, info, err);
    else
        st = ts_jpeg_probe(f, path, info, err);
    fclose(f);
    return st;
}

ts_status ts_image_load(const char *path, const ts_load_opts *opts,
                        ts_image *img, ts_err *err)
{
    return ts_image_load_scaled(path, opts, 1, img, err);
}

ts_status ts_open_for_load(const char *path, const ts_load_opts *opts, FILE **f, ts_format *fmt,
                           ts_load_limits *lim, ts_err *err)
{
    memset(lim, 0, sizeof *lim);
    ts_status st = open_image(path, f, fmt, &lim->file_bytes, err);
    if (st != TS_OK)
        return st;
    /* An explicit pixel limit is the caller's word on how large an image
     * may be; only the default one comes with the bomb guard. */
    lim->max_pixels = opts && opts->max_pixels ? opts->max_pixels : TS_DEFAULT_MAX_PIXELS;
    /* The bomb budget goes by the bytes the decoder will read, not by the
     * file's size: metadata it skips and bytes after the image's end could
     * otherwise buy a larger image. */
    if (!(opts && opts->max_pixels) && lim->file_bytes) {
        uint64_t data = *fmt == TS_FMT_PNG ? ts_png_data_bytes(*f, lim->file_bytes) : ts_jpeg_data_bytes(*f, lim->file_bytes);
        rewind(*f);
        lim->data_bytes = data;
        lim->max_bytes = ts_bomb_budget(data);
    }
    lim->accept_damaged = opts ? opts->accept_damaged : 0;
    lim->max_work = opts ? opts->max_work : 0;
    return TS_OK;
}

ts_status ts_image_load_scaled(const char *path, const ts_load_opts *opts, int scale,
                               ts_image *img, ts_err *err)
{
    FILE *f = NULL;
    ts_format fmt;
    ts_load_limits lim;
    memset(img, 0, sizeof *img);
    const ts_allocator *a = opts ? opts->allocator : NULL;
    if (scale != 1 && scale != 2 && scale != 4 && scale != 8)
        return ts_err_set(err, TS_E_ARG, "%s: decode scale 1/%d (1, 2, 4 or 8)", path, scale);
    ts_status st = ts_open_for_load(path, opts, &f, &fmt, &lim, err);
    if (st != TS_OK)
        return st;
    lim.scale_denom = scale;
    if (fmt == TS_FMT_PNG)
        st = ts_png_load(f, path, &lim, a, img, err);
    else
        st = ts_jpeg_load(f, path, &lim, a, img, err);
    fclose(f);
    return st;
}

/* ------------------------------------------------------------- writing */

static ts_status check_image(const char *path, const ts_image *img, ts_err *err)
{
    if (!img || !img->data || img->w <= 0 || img->h <= 0)
        return ts_err_set(err, TS_E_ARG, "%s: no image to save", path);
    if (img->c < 1 || img->c > 4)
        return ts_err_set(err, TS_E_ARG, "%s: cannot save %d channels", path, img->c);
    if (img->type != TS_U8 && img->type != TS_U16 && img->type != TS_F32)
        return ts_err_set(err, TS_E_ARG, "%s: unknown sample type %d", path, (int)img->type);
    if (img->stride < (size_t)img->w * ts_pixel_bytes(img))
        return ts_err_set(err, TS_E_ARG, "%s: row stride %zu is less than a row", path, img->stride);
    return TS_OK;
}

typedef ts_save_opts save_params;

/* opt's value v for the save of path: TS_OK, or the range's error naming path */
static ts_status check_save_option(const char *path, ts_option opt, int v, ts_err *err)
{
    ts_err e = { 0 };
    if (ts_option_check(opt, v, &e) == TS_OK) return TS_OK;
    return ts_err_set(err, TS_E_ARG, "%s: %s", path, e.msg);
}

ts_status ts_save_opts_resolve(const char *path, const ts_save_opts *opts, ts_save_opts *p, ts_err *err)
{
    p->format = opts && opts->format != TS_FMT_UNKNOWN ? opts->format : ts_format_from_path(path);
    p->quality = opts && opts->quality ? opts->quality : TS_JPEG_QUALITY_DEFAULT;
    p->png_level = opts && opts->png_level != -1 ? opts->png_level : TS_PNG_LEVEL_DEFAULT;
    p->progressive = opts ? opts->progressive : 0;
    if (p->format == TS_FMT_UNKNOWN)
        return ts_err_set(err, TS_E_FORMAT,
                          "%s: unknown output format (use .png, .jpg, .bmp, .tga or .hdr)", path);
    ts_status st = check_save_option(path, TS_OPT_QUALITY, p->quality, err);
    return st == TS_OK ? check_save_option(path, TS_OPT_PNG_LEVEL, p->png_level, err) : st;
}

/* Fill the six X's of name with letters and digits that differ between
 * calls, processes and attempts. O_EXCL, not this, is what guarantees a
 * fresh file; this only makes a clash unlikely. */
static void fill_random_suffix(char *x6, unsigned attempt)
{
    static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static atomic_ulong counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t v = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_nsec * 0xD1B54A32D192ED03ull
               ^ (uint64_t)atomic_fetch_add(&counter, 1) * 0x94D049BB133111EBull ^ attempt;
    for (int i = 0; i < 6; i++) {
        x6[i] = chars[v % (sizeof chars - 1)];
        v /= sizeof chars - 1;
    }
}

/* ---------------------------------------------- temporaries in flight */

/* One slot per encode in flight. A slot's path is written while it is
 * free and published by `live`; the handler reads only live slots. More
 * encodes than slots still work: those temporaries are just not removed
 * by ts_save_remove_temps (a later run's stale sweep does it). */
enum { TEMP_SLOTS = 256, TEMP_PATH_MAX = 4096 };
static struct temp_slot {
    atomic_int claimed; /* owned by one save */
    atomic_int live;    /* path is complete and the file may exist */
    char path[TEMP_PATH_MAX];
} temp_slots[TEMP_SLOTS];

static int temp_claim(void)
{
    for (int i = 0; i < TEMP_SLOTS; i++) {
        int expected = 0;
        if (atomic_compare_exchange_strong(&temp_slots[i].claimed, &expected, 1))
            return i;
    }
    return -1;
}

static void temp_publish(int slot, const char *tmp)
{
    if (slot < 0 || strlen(tmp) >= TEMP_PATH_MAX) return;
    memcpy(temp_slots[slot].path, tmp, strlen(tmp) + 1);
    atomic_store(&temp_slots[slot].live, 1);
}

static void temp_withdraw(int slot)
{
    if (slot >= 0) atomic_store(&temp_slots[slot].live, 0);
}

static void temp_release(int slot)
{
    if (slot < 0) return;
    atomic_store(&temp_slots[slot].live, 0);
    atomic_store(&temp_slots[slot].claimed, 0);
}

/* Async-signal-safe: for a handler of SIGINT or SIGTERM that is about to
 * end the process. The renamed-into-place file is never touched: a slot
 * is live only until its rename, and unlink of a name already renamed
 * fails harmlessly. */
void ts_save_remove_temps(void)
{
    for (int i = 0; i < TEMP_SLOTS; i++)
        if (atomic_load(&temp_slots[i].live)) unlink(temp_slots[i].path);
}

/* ".<base>.XXXXXX.tmp" with six characters from fill_random_suffix. */
static int is_our_temp_of(const char *name, const char *base, size_t base_len)
{
    size_t n = strlen(name);
    if (n != base_len + 12 || name[0] != '.' || memcmp(name + 1, base, base_len)) return 0;
    const char *x = name + 1 + base_len;
    if (x[0] != '.' || strcmp(x + 7, ".tmp")) return 0;
    for (int i = 1; i <= 6; i++)
        if (!((x[i] >= 'a' && x[i] <= 'z') || (x[i] >= 'A' && x[i] <= 'Z') || (x[i] >= '0' && x[i] <= '9')))
            return 0;
    return 1;
}

/* Whether a temporary's base ("photo.jpg") names a format we write:
 * the sweep removes nothing else. */
static int is_output_name(const char *base, size_t len)
{
    static const char *const exts[] = { ".png", ".jpg", ".jpeg", ".bmp", ".tga", ".hdr" };
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        size_t n = strlen(exts[i]);
        if (len > n && !strncasecmp(base + len - n, exts[i], n)) return 1;
    }
    return 0;
}

/* A writer holds an exclusive flock on its temporary until the rename,
 * and the kernel drops it when the writer dies, however it dies: a
 * temporary that can be locked is stale. One younger than a second is
 * left alone (its writer may be between creating it and locking it). */
void ts_save_sweep_temps(const char *dir)
{
    DIR *d = opendir(dir && *dir ? dir : ".");
    if (!d) return;
    char full[TEMP_PATH_MAX];
    time_t now = time(NULL);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t n = strlen(de->d_name);
        if (n < 14 || !is_our_temp_of(de->d_name, de->d_name + 1, n - 12) || !is_output_name(de->d_name + 1, n - 12))
            continue;
        if (snprintf(full, sizeof full, "%s/%s", dir && *dir ? dir : ".", de->d_name) >= (int)sizeof full) continue;
        int fd = open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && now - st.st_mtime >= 1 && flock(fd, LOCK_EX | LOCK_NB) == 0)
            unlink(full);
        close(fd);
    }
    closedir(d);
}

/* Create ".base.XXXXXX.tmp" beside path; *tmp_out is malloc'd. Each name
 * is published in slot before the file is created, so that a signal
 * arriving in between still finds it (unlinking a name not yet created is
 * harmless), and withdrawn when the name was taken by another file. */
static ts_status create_temp(const char *path, int slot, char **tmp_out, FILE **f_out, ts_err *err)
{
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    const char *base = path + dir_len;
    size_t base_len = strlen(base);
    if (base_len > 200)   /* keep the temporary name under NAME_MAX */
        base_len = 200;
    char *tmp = malloc(dir_len + base_len + 16);
    if (!tmp)
        return ts_err_set(err, TS_E_NOMEM, "%s: out of memory", path);
    memcpy(tmp, path, dir_len);
    char *p = tmp + dir_len;
    *p++ = '.';
    memcpy(p, base, base_len);
    p += base_len;
    memcpy(p, ".XXXXXX.tmp", 12);
    for (unsigned attempt = 0; attempt < 100; attempt++) {
        fill_random_suffix(p + 1, attempt);
        temp_publish(slot, tmp);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0)
            temp_withdraw(slot);
        else
            flock(fd, LOCK_EX | LOCK_NB);   /* live until the rename: ts_save_sweep_temps */
        if (fd < 0 && errno == EEXIST)
            continue;
        if (fd < 0) {
            ts_err_set(err, TS_E_IO, "%s: cannot create a file in that directory: %s", path,
                       strerror(errno));
            free(tmp);
            return TS_E_IO;
        }
        FILE *f = fdopen(fd, "wb");
        if (!f) {
            int e = errno;
            close(fd);
            unlink(tmp);
            free(tmp);
            return ts_err_set(err, TS_E_IO, "%s: cannot write: %s", path, strerror(e));
        }
        *tmp_out = tmp;
        *f_out = f;
        return TS_OK;
    }
    free(tmp);
    return ts_err_set(err, TS_E_IO, "%s: cannot find a free temporary name beside it", path);
}

static ts_status encode(FILE *f, const char *path, const ts_image *img, const save_params *p,
                        ts_err *err)
{
    switch (p->format) {
    case TS_FMT_PNG:
        return ts_png_save(f, path, img, p->png_level, err);
    case TS_FMT_JPEG:
        return ts_jpeg_save(f, path, img, p->quality, p->progressive, err);
    default:
        return ts_stb_save(f, path, img, p->format, err);
    }
}

ts_status ts_write_atomic(const char *path, ts_write_fn fn, void *ctx, ts_err *err)
{
    char *tmp = NULL;
    FILE *f = NULL;
    int slot = temp_claim();
    ts_status st = create_temp(path, slot, &tmp, &f, err);
    if (st != TS_OK) {
        temp_release(slot);
        return st;
    }
    st = fn(f, path, ctx, err);
    int close_failed = fclose(f) != 0;   /* flushes: a full disk shows here */
    if (st == TS_OK && close_failed)
        st = ts_err_set(err, TS_E_IO, "%s: cannot write: %s", path, strerror(errno));
    if (st == TS_OK && rename(tmp, path) != 0)
        st = ts_err_set(err, TS_E_IO, "%s: cannot rename the finished file into place: %s",
                        path, strerror(errno));
    if (st != TS_OK)
        unlink(tmp);
    temp_release(slot);
    free(tmp);
    return st;
}

typedef struct encode_ctx {
    const ts_image *img;
    const save_params *p;
} encode_ctx;

static ts_status encode_fn(FILE *f, const char *path, void *ctx, ts_err *err)
{
    encode_ctx *c = ctx;
    return encode(f, path, c->img, c->p, err);
}

ts_status ts_image_save(const char *path, const ts_image *img,
                        const ts_save_opts *opts, ts_err *err)
{
    save_params p;
    if (err) {
        err->status = TS_OK;
        err->msg[0] = '\0';
    }
    ts_status st = check_image(path, img, err);
    if (st == TS_OK)
        st = ts_save_opts_resolve(path, opts, &p, err);
    if (st != TS_OK)
        return st;
    encode_ctx c = {img, &p};
    return ts_write_atomic(path, encode_fn, &c, err);
}

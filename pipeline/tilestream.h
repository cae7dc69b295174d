/* tilestream.h - the one public header of libtilestream.
 *
 * tilestream loads PNG and JPEG images, runs chains of image operations on
 * the CPU or streams them through the GPU in tiles, and writes the results.
 *
 * Conventions (stb style: a struct and a few functions, no hidden state):
 *   - every function that can fail returns ts_status and, when given a
 *     non-NULL ts_err, fills it with one line naming the file and the cause;
 *   - library code never exits, aborts or prints (the app prints);
 *   - images own their pixels; ts_image_free releases them with the
 *     allocator that made them.
 */
#ifndef TILESTREAM_H
#define TILESTREAM_H

#include "ts_base.h"

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TS_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- images */

/* Memory for pixels. The GPU engine passes a pinned-memory pool here so
 * that decoders write straight into pinned memory. */
typedef struct ts_allocator {
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p);
    void *ctx;
} ts_allocator;

typedef struct ts_image {
    int w, h;
    int c;              /* 1 grey, 2 grey+alpha, 3 RGB, 4 RGBA */
    ts_type type;
    size_t stride;      /* bytes from one row to the next */
    unsigned char *data;
    int orientation;    /* EXIF orientation 1..8 of the source; 1 = as stored */
    unsigned char *icc; /* ICC profile bytes (malloc'd) or NULL */
    size_t icc_len;
    ts_allocator alloc; /* who owns data (zeroed = malloc/free) */
    unsigned char *exif;/* EXIF as a TIFF block ("MM\0*..."; malloc'd) or NULL. Writers set
                           its orientation tag to `orientation` */
    size_t exif_len;
    unsigned char *xmp; /* XMP packet (malloc'd) or NULL */
    size_t xmp_len;
    unsigned char *text;/* a PNG input's text chunks, packed (pipeline/codec/png_text.c; malloc'd) or NULL */
    size_t text_len;
    int exif_dropped;   /* the input's EXIF did not parse: not kept (a warning for the user) */
} ts_image;

/* Bytes of one pixel (ts_type_max, in ts_base.h, gives the largest value). */
size_t ts_pixel_bytes(const ts_image *img);

/* Allocate w x h x c pixels of type t, checking for overflow and against
 * max_pixels (0 = no limit). Pixels are uninitialised. */
ts_status ts_image_alloc(ts_image *img, int w, int h, int c, ts_type t,
                         uint64_t max_pixels, const ts_allocator *a, ts_err *err);
void ts_image_free(ts_image *img);
/* Copy pixels, orientation and metadata into a fresh malloc'd image. */
ts_status ts_image_clone(ts_image *dst, const ts_image *src, ts_err *err);
/* Give dst copies of src's ICC profile, EXIF, XMP and text where dst has none
 * (an output made from src); orientation is left alone. */
ts_status ts_image_copy_metadata(ts_image *dst, const ts_image *src, ts_err *err);

/* ---------------------------------------------------------------- codecs */

typedef enum ts_format {
    TS_FMT_UNKNOWN = 0,
    TS_FMT_PNG,
    TS_FMT_JPEG,
    TS_FMT_BMP,
    TS_FMT_TGA,
    TS_FMT_HDR
} ts_format;

const char *ts_format_name(ts_format f);            /* "png", "jpg", ... */
const char *ts_format_extension(ts_format f);       /* ".png", ".jpg", ... */
ts_format ts_format_from_name(const char *name);    /* "png", "jpeg", "jpg", ... */
ts_format ts_format_from_path(const char *path);    /* by extension */
int ts_format_can_read(ts_format f);                /* PNG and JPEG */

typedef struct ts_image_info {
    int w, h, c;
    ts_type type;
    int bit_depth;      /* bits per sample as stored in the file (1..16) */
    ts_format format;
    int orientation;    /* EXIF 1..8 */
    int interlaced;     /* PNG Adam7 */
    int progressive;    /* JPEG */
    int palette;        /* PNG colour type 3 */
    const char *color;  /* "grey", "grey+alpha", "rgb", "rgba", "cmyk", "ycck", ... */
    size_t icc_len;     /* 0 = no ICC profile */
} ts_image_info;

typedef struct ts_load_opts {
    uint64_t max_pixels;            /* 0 = default limit (TS_DEFAULT_MAX_PIXELS), which also
                                       refuses decompression bombs (see README) */
    const ts_allocator *allocator;  /* NULL = malloc */
    int accept_damaged;             /* JPEG: decode corrupt or truncated data as libjpeg
                                       can (grey fill) instead of refusing the file */
    uint64_t max_work;              /* JPEG: samples decoded, summed over the scans (a
                                       progressive file may hold hundreds of scans, each a
                                       pass over the image); 0 = TS_WORK_PASSES passes over
                                       the image, at least TS_WORK_FLOOR */
} ts_load_opts;

#define TS_WORK_PASSES 16
#define TS_WORK_FLOOR (2000ull * 1000 * 1000)

#define TS_DEFAULT_MAX_PIXELS (1ull << 30)   /* about 1 gigapixel */

/* Read only the header: size, channels, depth, orientation. */
ts_status ts_image_probe(const char *path, ts_image_info *info, ts_err *err);
/* Decode a PNG or JPEG (detected by content, not name). Pixels are stored
 * as in the file: orientation is recorded, not applied. PNG: palettes
 * expand to RGB(A), tRNS to alpha, grey below 8 bits scales to 8 bits,
 * 16-bit stays TS_U16. JPEG: grey or RGB 8-bit; CMYK/YCCK become RGB. */
ts_status ts_image_load(const char *path, const ts_load_opts *opts,
                        ts_image *img, ts_err *err);
/* As ts_image_load, but a JPEG is decoded at 1/scale of its size (scale 1,
 * 2, 4 or 8) with libjpeg's DCT scaling: ceil(w/scale) x ceil(h/scale),
 * much faster than decoding it whole when it is about to be shrunk. Other
 * formats, and scale 1, decode at full size. */
ts_status ts_image_load_scaled(const char *path, const ts_load_opts *opts, int scale,
                               ts_image *img, ts_err *err);

/* ------------------------------------------------------- option ranges
 * (pipeline/options.c) Each option's range and default, written once, and
 * one check: the command line, the save path (CPU and GPU writers) and the
 * benches use it, ts_batch_opts_check applies it to a whole ts_batch_opts.
 * An out-of-range value is the same error everywhere, never a silent
 * default or a clamp. */
#define TS_JPEG_QUALITY_MIN 1
#define TS_JPEG_QUALITY_MAX 100
#define TS_JPEG_QUALITY_DEFAULT 90
#define TS_PNG_LEVEL_MIN 0
#define TS_PNG_LEVEL_MAX 9
#define TS_PNG_LEVEL_DEFAULT 3
#define TS_STREAMS_MIN 1
#define TS_STREAMS_MAX 16          /* one constant-memory coefficient bank each (TSK_SLOTS) */
#define TS_STREAMS_DEFAULT 3
#define TS_JOBS_MAX 256            /* codec threads; the default (0) is every core */
#define TS_TILE_SIDE_MAX (1 << 20) /* --tile WxH and bench --size WxH, each side */
#define TS_REPS_MAX 10000          /* timed runs of compare and bench; each has its own default */

typedef enum ts_option {
    TS_OPT_QUALITY = 0,   /* --quality: JPEG quality */
    TS_OPT_PNG_LEVEL,     /* --png-level: zlib level */
    TS_OPT_STREAMS,       /* --streams: GPU streams */
    TS_OPT_JOBS,          /* --jobs: codec threads */
    TS_OPT_TILE,          /* --tile: a side of the output tile */
    TS_OPT_REPS,          /* --reps: timed runs */
    TS_OPT_COUNT
} ts_option;

typedef struct ts_option_range {
    const char *flag;     /* the command line's name: "--quality" */
    const char *what;     /* what it sets: "JPEG quality" */
    int min, max;
    int def;              /* the default (TS_OPT_JOBS: 0, every core; TS_OPT_TILE and
                             TS_OPT_REPS: 0, chosen by the engine or the benchmark) */
} ts_option_range;

/* The range and default of opt; NULL for a number that is no option. */
const ts_option_range *ts_option_range_of(ts_option opt);
/* TS_OK when value is in opt's range, else TS_E_ARG with "JPEG quality 101
 * is not in 1..100 (--quality)". */
ts_status ts_option_check(ts_option opt, long value, ts_err *err);
/* text as opt's value: a whole number in its range into *value, else
 * TS_E_ARG naming the option and its range, as ts_option_check. */
ts_status ts_option_parse(ts_option opt, const char *text, int *value, ts_err *err);

typedef struct ts_save_opts {
    ts_format format;   /* TS_FMT_UNKNOWN = from the path's extension */
    int quality;        /* JPEG 1..100, 0 = TS_JPEG_QUALITY_DEFAULT */
    int png_level;      /* zlib level 0..9, -1 = TS_PNG_LEVEL_DEFAULT */
    int progressive;    /* JPEG */
} ts_save_opts;

/* The options a save of path uses: the format from the extension when not
 * given, the defaults filled in, the ranges checked. The one place these
 * rules live: every writer (CPU or GPU) goes through it. opts may be NULL. */
ts_status ts_save_opts_resolve(const char *path, const ts_save_opts *opts, ts_save_opts *out, ts_err *err);

/* (pipeline/codec/flatten.c) Alpha for formats without it: 1 when format
 * f keeps the alpha of a c-channel image (PNG and TGA do; BMP with colour;
 * JPEG and HDR never). */
int ts_format_keeps_alpha(ts_format f, int c);
/* "white", "black", "grey", "red", "green", "blue", "#rrggbb" or "rrggbb". */
ts_status ts_colour_parse(const char *text, unsigned char rgb[3], ts_err *err);
/* in (grey+alpha or RGBA) composited onto bg: out has the colour channels
 * only, exactly rounded, and in's metadata. */
ts_status ts_image_flatten(const ts_image *in, const unsigned char bg[3], ts_image *out, ts_err *err);

/* Encode to a temporary file beside path, then rename it into place, so a
 * failure never leaves a half-written file. Formats that cannot hold the
 * image's depth or channels get a converted copy (16 -> 8 bits for JPEG,
 * alpha dropped for JPEG, float for HDR). ICC is written to PNG and JPEG.
 * On success err->status is TS_OK and err->msg is either empty or a note on
 * what could not be carried (a profile libpng rejects as malformed). */
ts_status ts_image_save(const char *path, const ts_image *img,
                        const ts_save_opts *opts, ts_err *err);
/* Remove the temporary files of the saves in flight. Async-signal-safe:
 * for a SIGINT/SIGTERM handler that ends the process at once (a second
 * Ctrl-C), so that no ".name.XXXXXX.tmp" is left behind. */
void ts_save_remove_temps(void);
/* Remove from dir the temporaries that saves killed before their rename
 * left (a SIGKILL, a power cut): each save locks its own while it writes,
 * so one that nobody holds is stale. `run` sweeps every output folder. */
void ts_save_sweep_temps(const char *dir);

/* ------------------------------------------------------------ op chains */

typedef struct ts_chain ts_chain;   /* parsed, validated op chain */

/* Parse "matrix=sepia,gauss=sigma=1.5,transpose". On error, err says which
 * token is wrong, shows where, and suggests the nearest op or key. */
ts_status ts_chain_parse(const char *text, ts_chain **out, ts_err *err);
void ts_chain_free(ts_chain *chain);
int ts_chain_length(const ts_chain *chain);
/* Canonical text of the chain with every parameter spelt out. */
const char *ts_chain_describe(const ts_chain *chain);
/* Prepend the transform that applies an EXIF orientation (1 = none). */
ts_status ts_chain_prepend_orientation(ts_chain *chain, int orientation, ts_err *err);
/* Shrink on load (pipeline/plan/shrink.c): when chain starts by shrinking
 * an image of w x h stored pixels (EXIF orientation applied first) by 2x
 * or more on both axes, the JPEG DCT scale to decode it at (2, 4 or 8) and
 * in *out the chain to run on the reduced image (orientation, a resize to
 * the size the first op would have made, the rest); else 1 and NULL. */
int ts_chain_shrink_on_load(const ts_chain *chain, int w, int h, int orientation, ts_chain **out);
/* The chain an image runs (pipeline/plan/shrink.c): chain with the EXIF
 * orientation applied first (a value outside 1..8 counts as 1) and, when
 * shrink is 1 and the chain starts by shrinking an image of w x h stored
 * pixels, the shrink on load above (*scale 2, 4 or 8). *out is NULL where
 * that is chain itself (orientation 1, no shrink), else a new chain. */
ts_status ts_chain_for_image(const ts_chain *chain, int w, int h, int orientation, int shrink, int *scale,
                             ts_chain **out, ts_err *err);
/* The chain `compare` runs when given none: an upscale, a rotation and a
 * downscale, each with a texture path. */
const char *ts_chain_compare_default(void);
/* A chain that shrinks an image to w pixels wide, the aspect kept, with
 * area sampling (what a thumbnail wants). */
ts_status ts_chain_fit_width(int w, ts_chain **out, ts_err *err);
/* The chain's op k (from 0) alone, as a new chain. */
ts_status ts_chain_op(const ts_chain *chain, int k, ts_chain **out, ts_err *err);
/* 1 when op k runs through a sampling kernel whose GPU version --path
 * texture changes (the ops `compare` compares). */
int ts_chain_op_has_texture_path(const ts_chain *chain, int k);

/* One line per op: name, parameters with defaults, description. */
typedef void (*ts_line_fn)(void *ctx, const char *line);
void ts_ops_list(ts_line_fn fn, void *ctx);

/* "Did you mean": the candidate nearest to word by edit distance (case
 * blind), or NULL when none is within 1 edit (words of up to 3 letters),
 * 2 (up to 6) or 3. What the chain parser suggests with. */
const char *ts_nearest_word(const char *word, const char *const *cands, int ncands);

/* What this build is made of, a line each: the version, the libpng, zlib
 * and libjpeg versions it runs with, the optional parts built in (CUDA and
 * its architectures, NPP, nvJPEG, stb) and the device `--device auto` takes
 * here and why. (pipeline/version.c) */
void ts_build_info(ts_line_fn fn, void *ctx);

/* --------------------------------------------------------------- running */

typedef enum ts_device { TS_DEVICE_AUTO = 0, TS_DEVICE_CPU, TS_DEVICE_GPU } ts_device;

/* Apply a chain to a whole image on the CPU with tiles of tile_w x tile_h
 * output pixels (0 = one tile). The result equals the untiled result
 * exactly. out is allocated here (malloc). */
ts_status ts_cpu_run(const ts_chain *chain, const ts_image *in, int tile_w, int tile_h,
                     ts_image *out, ts_err *err);

/* A pool of CPU threads for the ops (pipeline/engine/pool.c): the tiles of one
 * image run on all of them, and images run at the same time share them, so
 * a batch never has more than `threads` threads computing (0 = one per
 * online core). ts_cpu_run_pool with pool NULL is ts_cpu_run: the calling
 * thread alone. With tile_w = tile_h = 0 the image is cut into the tiles
 * ts_cpu_auto_tile picks for the pool's threads. With a pool, out's pixels (and the
 * tiles' buffers) come from the pool's cache of buffers, which keeps freed
 * ones for the next image instead of faulting fresh pages in each time;
 * ts_image_free gives them back, before or after ts_pool_free. */
typedef struct ts_pool ts_pool;
ts_pool *ts_pool_create(int threads);
void ts_pool_free(ts_pool *pool);
ts_status ts_cpu_run_pool(const ts_chain *chain, const ts_image *in, int tile_w, int tile_h,
                          ts_pool *pool, ts_image *out, ts_err *err);

/* The automatic CPU tile of a w x h output on `threads` threads: squares of
 * 256 pixels, smaller (down to 64) while that gives fewer than two per
 * thread. rows = 1 for a chain that maps rows to rows (per-pixel ops,
 * flips, rot180): strips of whole rows of as many pixels (65536), fewer
 * rows while that gives fewer than two per thread. */
void ts_cpu_auto_tile(int w, int h, int threads, int rows, int *tile_w, int *tile_h);

/* Output size of a chain applied to a w x h image. */
ts_status ts_chain_out_size(const ts_chain *chain, int w, int h, int c,
                            int *out_w, int *out_h, ts_err *err);
/* TS_E_LIMIT when an intermediate image or the output of the chain applied
 * to a w x h image would have more than max_pixels pixels (0 = the default
 * limit, TS_DEFAULT_MAX_PIXELS): the same limit as for inputs. */
ts_status ts_chain_check_pixels(const ts_chain *chain, int w, int h, int c, uint64_t max_pixels, ts_err *err);

/* GPU presence: ts_gpu_probe, ts_gpu_count, ts_gpu_name (ts_base.h). */

/* ------------------------------------------------------------ stats/trace
 * Every stage of a run (decode, H2D, each kernel, D2H, encode) is one event
 * on a lane (a CPU worker or a CUDA stream). Thread-safe. The same events
 * give the per-stage table, the --report JSON, the Chrome trace and the SVG
 * timeline. The library's engines and batch runner record the events
 * (pipeline/report/trace.c; recording: trace_internal.h). */
double ts_now(void);   /* monotonic seconds (the clock of trace events and progress) */
typedef struct ts_trace ts_trace;

ts_trace *ts_trace_create(void);
void ts_trace_free(ts_trace *t);
void ts_trace_clear(ts_trace *t);                     /* drop the events, keep the lanes */

typedef struct ts_stage_stat {
    char stage[48];     /* "decode", "h2d", "gauss v3", "d2h", "encode", ... */
    int count;
    double busy_s;      /* sum of event durations */
    double first_s, last_s;  /* earliest start, latest end (a monotonic clock, seconds) */
    uint64_t bytes;
} ts_stage_stat;
/* Aggregate by stage name, in order of first appearance; returns how many. */
int ts_trace_summary(const ts_trace *t, ts_stage_stat *out, int max);
/* Wall span of all events: latest end minus earliest start. */
double ts_trace_span(const ts_trace *t);
ts_status ts_trace_write_chrome(const ts_trace *t, const char *path, ts_err *err);
ts_status ts_trace_write_svg(const ts_trace *t, const char *path, ts_err *err);
/* Time during which at least one event of the listed stages was running:
 * the union of their intervals, so work that runs at the same time on
 * several lanes counts once. stages: names separated by commas ("h2d");
 * a leading '!' means every stage not listed ("!h2d,d2h": the kernels);
 * NULL means all stages. */
double ts_trace_busy(const ts_trace *t, const char *stages);

/* ------------------------------------------------------------ shards
 * (pipeline/batch/shard.c) N processes split one sorted input list: shard K of N
 * takes positions i with i % N == K, so together they cover every input
 * exactly once. */
typedef struct ts_shard {
    int index, count;      /* 0 <= index < count; count 1 = everything */
    char source[96];       /* where they came from, for messages */
} ts_shard;
typedef char *(*ts_env_fn)(const char *name);   /* getenv, or a stand-in for tests */

/* "K/N", "auto" (from the launcher's environment: Slurm arrays or tasks,
 * Open MPI, PMI) or "auto/N" (the index from the environment, e.g. a
 * Kubernetes indexed Job's JOB_COMPLETION_INDEX; the count given).
 * getenv_fn NULL = getenv. */
ts_status ts_shard_parse(const char *text, ts_shard *s, ts_env_fn getenv_fn, ts_err *err);
/* The environment alone; count > 0 = the count is given. */
ts_status ts_shard_from_env(ts_shard *s, int count, ts_env_fn getenv_fn, ts_err *err);
/* 1 when the input at this position of the sorted list is the shard's. */
int ts_shard_takes(const ts_shard *s, size_t position);

/* ------------------------------------------------------------ GPU engine
 * (pipeline/engine/engine_cuda.c) Streams images through the GPU in tiles: pinned
 * host memory from a pool, a ring of streams, per tile H2D -> kernels ->
 * D2H. Submit queues work and returns; collect waits for the oldest image. */
typedef struct ts_engine ts_engine;
typedef struct ts_engine_opts {
    int streams;          /* 1..TSK_SLOTS (16); 0 = 3 */
    int tile_w, tile_h;   /* output tile size; 0 = automatic */
    ts_path path;         /* sampling ops: global memory or texture */
    ts_trace *trace;      /* where stage events go (may be NULL) */
    int device;           /* CUDA device ordinal (0 = the first) */
    size_t pinned_limit;  /* pin at most this many bytes for the pool (0 = no limit); past it
                             the pool hands out pageable memory, which the engine stages
                             through small pinned bounce buffers of its own */
    const char *name;     /* "gpu0": names its trace lanes and stages (several engines); NULL = none */
} ts_engine_opts;

ts_status ts_engine_create(const ts_engine_opts *opts, ts_engine **out, ts_err *err);
void ts_engine_destroy(ts_engine *e);
/* Pinned host memory from the engine's pool: decode into it, encode from it.
 * At the pool's pinned_limit it returns pageable memory instead. Any
 * engine's allocator frees memory from any engine's pool. */
ts_allocator ts_engine_allocator(ts_engine *e);
/* The same pool, but alloc returns NULL instead of pageable memory. */
ts_allocator ts_engine_pinned_allocator(ts_engine *e);
/* Bytes pinned by the pool so far. */
size_t ts_engine_pinned_bytes(ts_engine *e);
/* Queue chain over in; out is allocated from the pinned pool. in must stay
 * valid until collected. image is the index used in trace events. On
 * failure out is left empty; once submitted, out belongs to the caller
 * whatever collect says (free it with ts_image_free). Destroy the engine
 * only after freeing every image from its pool. */
ts_status ts_engine_submit(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out,
                           void *tag, int image, ts_err *err);
/* Wait for the oldest submitted image: returns 1 with its tag and status
 * (err filled on failure), 0 when nothing is pending. */
int ts_engine_collect(ts_engine *e, void **tag, ts_status *status, ts_err *err);
/* The rates this machine reaches: pinned H2D, pinned D2H (64 MB copies)
 * and a device-to-device copy (GB/s counting bytes read + written),
 * measured by a GPU batch run at its start (ts_batch_result.peak). The run
 * table shows stages as shares of these. */
typedef struct ts_peak_rates { double h2d_gbps, d2h_gbps, d2d_gbps; } ts_peak_rates;
/* Convenience: submit + collect one image. */
ts_status ts_gpu_run(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out, ts_err *err);

/* ------------------------------------------------------------ batch runs
 * (pipeline/batch/batch.c) Process files and folders (walked recursively) into
 * outdir, mirroring the input tree. Decoding and encoding use `jobs` CPU
 * threads; ops run on the CPU backend or stream through the GPU engine. A
 * bad input is named and skipped; the rest carry on. */
typedef struct ts_image_result {
    int index;
    char *input, *output;
    ts_status status;         /* TS_OK, or why this image failed */
    char error[1024];
    int skipped;              /* --skip-existing found the output */
    int w, h, c, out_w, out_h;
    ts_type type;
    double decode_s, ops_s, encode_s;
    uint64_t in_bytes, out_bytes;  /* file sizes */
    char warning[160];        /* done, but something was left out ("" = nothing) */
    int on_gpu;               /* the backend that ran its ops: 1 the GPU, 0 the CPU */
    int not_started;          /* not processed: a stop or a device error ended the run before its ops
                                 (status says which); counted in n_not_started, not in n_failed */
} ts_image_result;

struct ts_batch_result;
typedef enum ts_codec {
    TS_CODEC_AUTO = 0,    /* JPEG on the GPU (nvJPEG) where built and the file allows, else the CPU */
    TS_CODEC_CPU,         /* libjpeg-turbo and libpng only */
    TS_CODEC_GPU          /* nvJPEG for every JPEG it takes; an error when the build has none */
} ts_codec;

/* The default --memory: a quarter of the machine's RAM (or of the cgroup's
 * limit, when lower), at most 8 GiB. */
uint64_t ts_default_memory_budget(void);

typedef struct ts_batch_opts {
    const char *const *inputs;
    int n_inputs;
    const char *outdir;
    const char *chain_text;   /* op chain ("" = convert only) */
    ts_device device;
    ts_path path;
    int streams;              /* GPU streams (0 = 3) */
    int tile_w, tile_h;       /* 0 = automatic */
    int jobs;                 /* codec threads (0 = all cores) */
    ts_format format;         /* TS_FMT_UNKNOWN = same as the input */
    int quality;              /* JPEG quality (0 = TS_JPEG_QUALITY_DEFAULT) */
    int png_level;            /* -1 = default */
    int skip_existing, overwrite, dry_run;
    int keep_orientation;     /* 1 = do not apply EXIF orientation */
    uint64_t max_pixels;      /* 0 = TS_DEFAULT_MAX_PIXELS */
    int accept_damaged;       /* as ts_load_opts.accept_damaged */
    uint64_t max_work;        /* as ts_load_opts.max_work */
    const char *background;   /* alpha onto this colour where the output format has none
                                 (ts_colour_parse; NULL = white) */
    uint64_t memory;          /* bytes of images in flight, decoded to encoded
                                 (0 = ts_default_memory_budget()); an image larger than
                                 this runs alone */
    const char *gpus;         /* "all" or NULL (every device), "N" (the first N), or a list
                                 "0,1", "1," (device 1 alone), "0,0" (two engines on device 0) */
    ts_codec codec;
    int no_shrink_on_load;    /* 1 = decode JPEGs whole even when the chain starts by shrinking */
    ts_trace *trace;          /* stage events (may be NULL) */
    volatile int *stop;       /* becomes non-zero: stop cleanly (Ctrl-C) */
    /* called once per image as it finishes (from a worker thread, one at a time);
       images refused or skipped while planning come first, before any work */
    void (*on_image)(void *ctx, const ts_image_result *r, int done, int total);
    void *ctx;
    const char *name_template; /* output names below outdir (ts_outname_make); NULL = the input tree */
    ts_shard shard;           /* count 0 or 1 = every input */
    /* called once, after the checks and before any image is read: r holds
       the device, its note and n_images (may be NULL) */
    void (*on_start)(void *ctx, const struct ts_batch_result *r);
    /* called as an image is taken up, before it is decoded (one at a time; may be NULL) */
    void (*on_image_begin)(void *ctx, const ts_image_result *r, int done, int total);
    double process_start;     /* ts_now() when the program began (0 = unknown): the report's phases count from it */
    int background_release;   /* 1: the GPU side is released on a thread of its own (see ts_gpu_threads_pending) */
    int skip_rates;           /* 1: the GPU's start does not measure the bus and copy rates (the result's
                                 peak stays 0): for runs that neither print nor report them */
} ts_batch_opts;

/* Where a run's time went, exec to exit: each phase as [start, end] in
 * seconds from the program's start (ts_batch_opts.process_start, else the
 * run's), {-1, -1} when it did not happen. The GPU's phases run on a thread
 * of their own beside the CPU's work under --device auto. */
typedef struct ts_run_phases {
    double program[2];        /* the program's start to the run's: loading, options */
    double inputs[2];         /* listing and checking the inputs and outputs */
    double gpu_probe[2];      /* finding the CUDA devices: the driver's start */
    double gpu_engines[2];    /* contexts, streams and pinned pools of the engines */
    double gpu_warmup[2];     /* loading the kernels the chain uses */
    double gpu_rates[2];      /* timing the bus and the device copy (the stage table's shares) */
    double nvjpeg[2];         /* nvJPEG's handle and decoder state, beside the engines */
    double work[2];           /* the first image taken up to the last one finished */
    double teardown[2];       /* releasing threads, codecs, engines and memory */
    double gpu_ready;         /* the GPU took images from then (-1: never) */
    double first_image, last_image;   /* the first and the last image finished */
} ts_run_phases;

typedef struct ts_batch_result {
    int n_images, n_ok, n_failed, n_skipped;
    int n_not_started;        /* left when a stop (Ctrl-C, SIGTERM) or a device error came: not failed, not done */
    double wall_s;            /* the whole call: setup_s + work_s + finish_s */
    double setup_s;           /* listing, probing the device, starting the engines, up to the first file */
    double work_s;            /* the workers, from the first file to the last */
    double finish_s;          /* releasing threads, codecs, engines and their memory */
    uint64_t pixels_in, pixels_out;
    char device[160];         /* "cpu" or the GPU's name */
    char device_note[256];    /* why auto chose what it chose */
    ts_peak_rates peak;       /* GPU runs: measured at the start (zeros on the CPU) */
    ts_image_result *images;  /* n_images, in input order */
    uint64_t memory_budget;   /* bytes allowed in flight */
    uint64_t memory_peak;     /* the most bytes reserved at once (decoded, processed, output) */
    int max_in_flight;        /* the most images in flight at once */
    int n_engines;            /* GPU engines (--gpus), 0 on the CPU */
    int engine_device[16];    /* each engine's CUDA device */
    int engine_images[16];    /* images each engine processed */
    int decoded_pinned, decoded_pageable;   /* GPU runs: where decodes landed */
    uint64_t pinned_bytes;    /* GPU runs: host memory the engines' pools had pinned when the work ended */
    int shrunk_on_load;       /* JPEGs decoded at reduced size */
    int flattened;            /* images whose alpha went onto the background */
    int gpu_decoded, gpu_encoded;   /* JPEGs decoded / encoded by nvJPEG (--codec) */
    char codec_note[160];     /* which JPEG codec and why */
    int n_on_gpu, n_on_cpu;   /* images whose ops ran on each backend */
    char gpu_note[200];       /* --device auto: how the GPU's start went ("" on pure runs) */
    ts_run_phases phases;
} ts_batch_result;

/* TS_OK when every image succeeded; TS_E_CORRUPT etc. (the first failure's
 * status) when some failed; fatal problems (no inputs, bad chain, device
 * lost) also return an error, with r filled as far as it got. */
ts_status ts_batch_run(const ts_batch_opts *opts, ts_batch_result *r, ts_err *err);
/* (pipeline/options.c) The numbers of opts against their ranges (quality,
 * png_level, streams, jobs, tile_w x tile_h; each may also be its "default"
 * value: 0, or -1 for png_level): TS_OK, or TS_E_ARG as ts_option_check. */
ts_status ts_batch_opts_check(const ts_batch_opts *opts, ts_err *err);
void ts_batch_result_free(ts_batch_result *r);
/* Threads that finished runs left behind: a GPU still starting when a job
 * ended first (--device auto), a GPU side being released in the background
 * (background_release). They free what they hold and end by themselves. A
 * program that exits while any is running should flush its output and leave
 * with _exit(), so that the CUDA runtime's exit handlers do not race them,
 * or wait for them with ts_gpu_threads_join(). */
int ts_gpu_threads_pending(void);
void ts_gpu_threads_join(void);
/* 1 once a run of this process has started the GPU side (the CUDA runtime
 * is in use): a program done with its work may then leave with _exit(),
 * after flushing, and so skip the runtime's teardown of its contexts. */
int ts_gpu_used(void);

/* (pipeline/report/report.c) --report: JSON with the options, the device and the
 * per-stage and per-image figures (docs/REPORT.md); argv (argc words, may
 * be NULL) is recorded as the command line. */
ts_status ts_report_write(const char *path, const ts_batch_result *r, const ts_trace *t,
                          const ts_batch_opts *o, int argc, char *const *argv, ts_err *err);
/* One image as a one-line JSON object (no newline; malloc'd, NULL when out
 * of memory): the lines of --report-lines, the entries of "files". */
char *ts_report_image_json(const ts_image_result *im);
/* text as a JSON string, quotes included. Bytes that are not UTF-8 are
 * written as \udcXX (Python's surrogateescape), so file names round-trip. */
void ts_json_string(FILE *f, const char *text);

/* (pipeline/batch/inputs.c) The files a run reads: files named, and folders
 * walked recursively in name order (hidden entries and the output folder,
 * when outdir is not NULL, left out). rel is the entry's path in the output tree ("photos/a.jpg");
 * error, when not NULL, is why the entry cannot be read (a folder that will
 * not open, a link loop, a FIFO named as an input): a failed entry, the
 * others carry on. */
typedef struct ts_input {
    char *path, *rel, *error;
} ts_input;
typedef struct ts_input_list {
    ts_input *v;
    int n, cap;
} ts_input_list;
ts_status ts_inputs_collect(const char *const *inputs, int n, const char *outdir, ts_input_list *l, ts_err *err);
void ts_inputs_free(ts_input_list *l);
/* Number the inputs by their place in the list sorted by path (what {n}
 * and --shard go by: numbers[i] from 1, malloc'd), then keep the shard's
 * share, in the order the inputs were given. */
ts_status ts_inputs_number_and_shard(ts_input_list *l, const ts_shard *shard, int **numbers, ts_err *err);
/* 1 when a name found in a folder is one tilestream reads (.png, .jpg, .jpeg). */
int ts_input_extension_ok(const char *name);

/* (pipeline/batch/outname.c) Output names. The template's fields: {dir} the
 * input's folder in the default layout (below outdir, "" for a file given
 * by name), {stem} its name without the extension, {ext} the output
 * format's extension without the dot, {n} the input's number (from 1) in
 * the sorted input list, {n:W} the same padded with zeros to W digits.
 * The default layout is "{dir}/{stem}.{ext}". */
ts_status ts_outname_check(const char *tmpl, ts_err *err);
/* rel: the input's path in the default layout ("photos/a.jpg"). Writes the
 * path below outdir, without a leading '/', empty components removed. */
ts_status ts_outname_make(const char *tmpl, const char *rel, ts_format f, int n, char *out, size_t n_out,
                          ts_err *err);
/* 1 when this build can write format f (BMP, TGA and HDR need stb_image_write). */
int ts_format_can_write(ts_format f);

#ifdef __cplusplus
}
#endif
#endif /* TILESTREAM_H */

/* engine_internal.h - (internal, not installed) the GPU engine's calls that
 * only the library's own modules and the benchmarks use. */
#ifndef TS_ENGINE_INTERNAL_H
#define TS_ENGINE_INTERNAL_H

#include "tilestream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocate outputs with a (copied) instead of the pinned pool; NULL = the
 * pool again. Pageable memory is slower and stops copies overlapping:
 * `bench overlap` uses this to show how much. */
void ts_engine_set_out_allocator(ts_engine *e, const ts_allocator *a);
/* Device memory on the engine's GPU (a stream-ordered pool that keeps what
 * it has): images that stay on the device, such as nvJPEG's decodes and the
 * outputs it encodes. The engine's copies take them device to device. */
ts_allocator ts_engine_device_allocator(ts_engine *e);
/* As ts_engine_submit, with out allocated from out_alloc (NULL: the engine's
 * default, the pinned pool). */
ts_status ts_engine_submit_to(ts_engine *e, const ts_chain *chain, const ts_image *in, ts_image *out,
                              const ts_allocator *out_alloc, void *tag, int image, ts_err *err);
/* If img is in device memory from ts_engine_device_allocator, move its
 * pixels to malloc'd host memory (for the CPU writers); else nothing. */
ts_status ts_engine_image_to_host(ts_engine *e, ts_image *img, ts_err *err);
/* The rates this machine reaches (ts_peak_rates), timed now over three
 * 64 MB copies: ts_batch_run does it at the start of a GPU run. */
ts_status ts_engine_peak_rates(ts_engine *e, ts_peak_rates *r, ts_err *err);
/* Stage events from now on go to t (made without a trace, or warmed up
 * before the run's clock started counting). */
void ts_engine_attach_trace(ts_engine *e, ts_trace *t);
/* The CUDA device the engine runs on. */
int ts_engine_device_index(const ts_engine *e);

#ifdef __cplusplus
}
#endif
/* (devices.c) --device: whether the run uses the GPU; device gets "cpu" or the
 * GPU's name, note why auto chose it. An error only for --device gpu without one. */
ts_status ts_engine_pick_device(ts_device want, char *device, size_t n_device, char *note, size_t n_note,
                                int *use_gpu, ts_err *err);
/* --gpus: "all"/NULL, "N" (the first N) or a list "0,2", "1,", "0,0". Fills
 * devices (at most max entries); returns how many, or -1 with err. */
int ts_engine_parse_gpus(const char *text, int n_dev, int *devices, int max, ts_err *err);

/* (engine_set.c) A run's engines, one per entry of --gpus. */
enum { TS_MAX_ENGINES = 16 };
typedef struct ts_engine_set {
    ts_engine *e[TS_MAX_ENGINES];
    int device[TS_MAX_ENGINES];
    int n;
    int streams;                          /* each engine's, after sharing the coefficient slots */
    int pinned_decodes, pageable_decodes; /* where the decode allocator's images landed */
    double context_s, warmup_s;           /* starting: contexts, streams, pools; loading the kernels */
} ts_engine_set;
typedef struct ts_engine_set_opts {
    int streams, tile_w, tile_h;          /* as ts_engine_opts (streams 0 = 3) */
    ts_path path;
    ts_trace *trace;                      /* NULL: none yet (ts_engine_set_attach_trace) */
    uint64_t pinned_limit;                /* shared by the engines */
    const ts_chain *warm_chain;           /* run once on small images before any stage is timed */
} ts_engine_set_opts;
/* An engine on each of devices[0..n); on failure the ones made stay in s
 * for ts_engine_set_free. */
ts_status ts_engine_set_start(ts_engine_set *s, const ts_engine_set_opts *o, const int *devices, int n, ts_err *err);
/* 1 when every engine is on one device. */
int ts_engine_set_one_device(const ts_engine_set *s);
/* For decoded images: pinned from any engine's pool with room, else pageable. */
ts_allocator ts_engine_set_decode_allocator(ts_engine_set *s);
/* Pinned memory only: NULL when no engine's pool has room. */
ts_allocator ts_engine_set_pinned_allocator(ts_engine_set *s);
/* For images decoded before any engine is up (--device gpu's first
 * decodes): memory that ts_engine_pin_in_place pins where it is once the
 * engines are there, which takes a fraction of the time of copying the
 * pixels into a pool (pinned.h). CPU-only builds: malloc, never pinned. */
ts_allocator ts_engine_pinnable_allocator(void);
/* 1 when img's pixels are pinned now, in place (memory of the allocator above). */
int ts_engine_pin_in_place(ts_image *img);
/* Every engine's stage events go to t from now on. */
void ts_engine_set_attach_trace(ts_engine_set *s, ts_trace *t);
void ts_engine_set_free(ts_engine_set *s);

#endif

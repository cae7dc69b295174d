/* codec_session.h - a run's codecs: JPEGs to nvJPEG where the build, the
 * device and the file allow, everything else (and whatever nvJPEG refuses)
 * to libjpeg-turbo and libpng, decided inside load and save
 * (pipeline/codec/codec_session.c; internal to the pipeline). */
#ifndef TS_CODEC_SESSION_H
#define TS_CODEC_SESSION_H

#include "tilestream.h"

enum { TS_SESSION_WORKERS = 256 };   /* workers with an nvJPEG coder each; more use the CPU codecs */

typedef struct ts_codec_session ts_codec_session;

/* A session for a run. With want != TS_CODEC_CPU, on_gpu (the run has a
 * GPU) and wants_jpeg (some input or output is a JPEG), nvJPEG is set up on
 * device by a thread of its own, while the caller starts its engines;
 * otherwise every file goes to the CPU codecs. NULL when out of memory. */
ts_codec_session *ts_codec_session_create(ts_codec want, int on_gpu, int wants_jpeg, int device);
/* Every engine of the run is on the session's device: decoded pixels and
 * JPEG outputs may stay in its memory, allocated from alloc. Call before
 * any load or save. */
void ts_codec_session_keep_on_device(ts_codec_session *s, int every_engine_there, ts_allocator alloc);
/* Wait for nvJPEG's set-up (once): kept, or dropped when auto finds no
 * hardware decoder. The error is --codec gpu's, when it cannot have one. */
ts_status ts_codec_session_wait(ts_codec_session *s, ts_err *err);
/* 1 once settled with pixels kept on the device (never waits). */
int ts_codec_session_on_device(ts_codec_session *s);
/* The allocator of device images (when ts_codec_session_on_device). */
const ts_allocator *ts_codec_session_device_allocator(ts_codec_session *s);

/* Decode path on worker w (0 <= w): at 1/scale, on nvJPEG when gpu_ok (a
 * whole 8-bit RGB JPEG that need not be decoded as damaged) and it takes
 * it, else on the CPU. *on_gpu says which; a GPU decode may leave the
 * pixels on the device (ts_codec_session_on_device). */
ts_status ts_codec_session_load(ts_codec_session *s, int w, const char *path, const ts_load_opts *lo, int scale,
                                int gpu_ok, ts_image *img, int *on_gpu, ts_err *err);
/* Pixels on the device back to host memory (the caller's engine does it). */
typedef ts_status (*ts_to_host_fn)(void *ctx, ts_image *img, ts_err *err);
/* Encode img to path on worker w: a JPEG on nvJPEG when it takes it, else
 * on the CPU writers (pixels on the device, *on_device, come to the host
 * first through to_host). *on_gpu says which. */
ts_status ts_codec_session_save(ts_codec_session *s, int w, const char *path, ts_image *img, int *on_device,
                                const ts_save_opts *so, ts_to_host_fn to_host, void *ctx, int *on_gpu, ts_err *err);

/* No more decodes: the hardware decoder's state goes now, beside the
 * last encodes, not at the end. */
void ts_codec_session_end_decoding(ts_codec_session *s);
/* Worker w is done: its nvJPEG state goes now, beside the others'. */
void ts_codec_session_worker_done(ts_codec_session *s, int w);
/* Which JPEG codec the run used and why ("" when it used none). */
const char *ts_codec_session_note(const ts_codec_session *s);
/* When nvJPEG's set-up began and ended (ts_now(); both 0 when it had none). Call after ts_codec_session_wait. */
void ts_codec_session_setup_times(const ts_codec_session *s, double *t0, double *t1);
void ts_codec_session_counts(const ts_codec_session *s, int *gpu_decoded, int *gpu_encoded);
void ts_codec_session_free(ts_codec_session *s);

#endif

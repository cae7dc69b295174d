/* ts_base.h - the bottom layer: status codes, the error struct, pixel
 * types and the GPU-presence calls. kernels/ needs these and nothing
 * above it; pipeline/tilestream.h includes this header, so a library user
 * sees them as part of the public API (app/ -> pipeline/ -> kernels/, and
 * never the other way). Defined in kernels/ts_base.c and kernels/gpu.cu
 * (kernels/gpu_nocuda.c in a build without CUDA). */
#ifndef TS_BASE_H
#define TS_BASE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- errors */

typedef enum ts_status {
    TS_OK = 0,
    TS_E_IO,          /* cannot open/read/write/rename a file */
    TS_E_FORMAT,      /* not an image format we read (or cannot write that) */
    TS_E_CORRUPT,     /* truncated or corrupt data */
    TS_E_LIMIT,       /* image larger than the limits (--max-pixels, overflow) */
    TS_E_NOMEM,       /* allocation failed */
    TS_E_ARG,         /* bad argument, op chain or option */
    TS_E_DEVICE,      /* CUDA error or no usable device */
    TS_E_EXISTS,      /* output exists / output would overwrite input */
    TS_E_INTERRUPTED  /* stopped by the user (Ctrl-C) */
} ts_status;

typedef struct ts_err {
    ts_status status;
    char msg[1024];   /* "path: cause", no trailing newline */
} ts_err;

/* Fill err (if not NULL) with printf-style text; returns status. */
ts_status ts_err_set(ts_err *err, ts_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
const char *ts_status_name(ts_status s);

/* ---------------------------------------------------------- pixel types */

typedef enum ts_type {      /* the value is the size of one channel in bytes */
    TS_U8 = 1,
    TS_U16 = 2,
    TS_F32 = 4
} ts_type;

/* The largest channel value (255, 65535, 1.0). */
double ts_type_max(ts_type t);

/* Where sampling ops read from on the GPU: global memory or a texture. */
typedef enum ts_path { TS_PATH_GLOBAL = 0, TS_PATH_TEXTURE } ts_path;

/* ---------------------------------------------------------- GPU presence */

/* Returns 1 and the device's name when a CUDA device can be used, 0
 * otherwise (CPU-only build, no driver or no device; why in err). */
int ts_gpu_probe(char *name, size_t name_len, ts_err *err);
/* 1 when this build has the CUDA code (whether a device is there or not). */
int ts_gpu_built(void);
/* How many CUDA devices can be used (0, with why in err, when none). */
int ts_gpu_count(ts_err *err);
/* Device `device`'s name, "NVIDIA H200 (sm_90, 132 SMs)"; 0 on failure. */
int ts_gpu_name(int device, char *name, size_t name_len, ts_err *err);

#ifdef __cplusplus
}
#endif
#endif /* TS_BASE_H */

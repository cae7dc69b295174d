/* ts_base.c - status codes, the one-line error messages and the pixel
 * types' ranges (ts_base.h). */
#include "ts_base.h"

#include <stdarg.h>
#include <stdio.h>

ts_status ts_err_set(ts_err *err, ts_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

const char *ts_status_name(ts_status s)
{
    switch (s) {
    case TS_OK: return "ok";
    case TS_E_IO: return "i/o error";
    case TS_E_FORMAT: return "unsupported format";
    case TS_E_CORRUPT: return "corrupt data";
    case TS_E_LIMIT: return "too large";
    case TS_E_NOMEM: return "out of memory";
    case TS_E_ARG: return "bad argument";
    case TS_E_DEVICE: return "device error";
    case TS_E_EXISTS: return "exists";
    case TS_E_INTERRUPTED: return "interrupted";
    }
    return "unknown status";
}

double ts_type_max(ts_type t)
{
    switch (t) {
    case TS_U8: return 255.0;
    case TS_U16: return 65535.0;
    case TS_F32: return 1.0;
    }
    return 0.0;
}

/* test_kernel_versions.c - tsk_launch.version: 0 (the default) and
 * 1..tsk_version_count pick a GPU kernel version; any other number is
 * refused by tsk_gpu_apply with TS_E_ARG naming it, for every kind and
 * even when there is nothing to do, and never taken for the default. The
 * refusal comes before any CUDA call, so no device is needed (label cpu).
 * A build without CUDA refuses every launch with TS_E_DEVICE. */
#include "check.h"
#include "tsk.h"

#include <stdio.h>
#include <string.h>

static ts_view view_of(unsigned char *px, int w, int h)
{
    ts_view v;
    memset(&v, 0, sizeof v);
    v.data = px;
    v.pitch = 8 * 4;
    v.w = w;
    v.h = h;
    v.full_w = v.full_h = 8;
    v.c = 4;
    v.type = TS_U8;
    return v;
}

int main(void)
{
    static unsigned char px[8 * 8 * 4];  /* never read: every launch below stops first */
    ts_view src = view_of(px, 8, 8), dst = view_of(px, 8, 8), empty = view_of(px, 0, 0);
    for (int kind = 0; kind < TSK_KIND_COUNT; kind++) {
        tsk_op op;
        memset(&op, 0, sizeof op);
        op.kind = (tsk_kind)kind;
        const int n = tsk_version_count(op.kind);
#ifdef TS_HAVE_CUDA
        CHECK_MSG(n >= 1, "kind %d: %d versions", kind, n);
#else
        CHECK_EQ_INT(n, 0);
#endif
        const int bad[] = { -1, n + 1, 1000 };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
            for (int e = 0; e < 2; e++) {
                ts_err err = { TS_OK, "" };
                tsk_launch l = { NULL, bad[i], TS_PATH_GLOBAL, 0 };
                char number[16];
                ts_status st = tsk_gpu_apply(&op, &src, e ? &empty : &dst, &l, &err);
                snprintf(number, sizeof number, "%d", bad[i]);
#ifdef TS_HAVE_CUDA
                CHECK_MSG(st == TS_E_ARG, "kind %d version %d%s: %s (%s)", kind, bad[i], e ? " (empty)" : "",
                          ts_status_name(st), err.msg);
                CHECK_MSG(strstr(err.msg, "version") && strstr(err.msg, number), "kind %d version %d: '%s'", kind,
                          bad[i], err.msg);
#else
                CHECK_MSG(st == TS_E_DEVICE, "kind %d version %d: %s (%s)", kind, bad[i], ts_status_name(st),
                          err.msg);
#endif
            }
#ifdef TS_HAVE_CUDA
        /* the versions it has are accepted (an empty output: nothing to launch) */
        for (int v = 0; v <= n; v++) {
            ts_err err = { TS_OK, "" };
            tsk_launch l = { NULL, v, TS_PATH_GLOBAL, 0 };
            CHECK_MSG(tsk_gpu_apply(&op, &src, &empty, &l, &err) == TS_OK, "kind %d version %d: %s", kind, v,
                      err.msg);
        }
#endif
    }
    return check_exit();
}

/* devices.c - which CUDA devices a run uses: --device (auto takes the GPU
 * when one is usable, else the CPU, and says why) and --gpus (a count or a
 * list of devices, one engine per entry). */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ts_engine_parse_gpus(const char *text, int n_dev, int *devices, int max, ts_err *err)
{
    if (!text || !*text || !strcmp(text, "all")) {
        int n = n_dev < max ? n_dev : max;
        for (int k = 0; k < n; k++) devices[k] = k;
        return n;
    }
    int n = 0, list = strchr(text, ',') != NULL;
    const char *p = text;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || (*end && *end != ','))
            return ts_err_set(err, TS_E_ARG, "--gpus %s: want all, a count, or a list of devices such as 0,1", text), -1;
        if (!list) {
            if (v < 1 || v > n_dev)
                return ts_err_set(err, TS_E_ARG, "--gpus %s: this machine has %d CUDA device%s", text, n_dev,
                                  n_dev == 1 ? "" : "s"), -1;
            for (int k = 0; k < v && k < max; k++) devices[k] = k;
            return v < max ? (int)v : max;
        }
        if (v >= n_dev)
            return ts_err_set(err, TS_E_ARG, "--gpus %s: no device %ld (this machine has 0 to %d)", text, v, n_dev - 1), -1;
        if (n == max) return ts_err_set(err, TS_E_ARG, "--gpus %s: at most %d engines", text, max), -1;
        devices[n++] = (int)v;
        p = *end ? end + 1 : end;
    }
    return n;
}

ts_status ts_engine_pick_device(ts_device want, char *device, size_t n_device, char *note, size_t n_note,
                                int *use_gpu, ts_err *err)
{
    char name[160];
    ts_err why = { 0 };
    *use_gpu = 0;
    if (want == TS_DEVICE_CPU) {
        snprintf(device, n_device, "cpu");
        snprintf(note, n_note, "asked for with --device cpu");
        return TS_OK;
    }
    int have = ts_gpu_probe(name, sizeof name, &why);
    if (have) {
        *use_gpu = 1;
        snprintf(device, n_device, "%s", name);
        snprintf(note, n_note, "%s", want == TS_DEVICE_AUTO ? "found a CUDA device" : "asked for with --device gpu");
        return TS_OK;
    }
    if (want == TS_DEVICE_GPU) return ts_err_set(err, TS_E_DEVICE, "--device gpu: %s", why.msg);
    snprintf(device, n_device, "cpu");
    snprintf(note, n_note, "%.200s", why.msg);
    return TS_OK;
}

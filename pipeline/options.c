/* options.c - each option's range and default, once (tilestream.h's
 * TS_*_MIN/MAX/DEFAULT), and the one check every side applies, so that the
 * command line, the save path, the batch and the benches refuse an
 * out-of-range value with the same words: what it sets, the value, the
 * range and the flag. */
#include "tilestream.h"
#include "tsk.h"

#include <errno.h>
#include <stdlib.h>

/* a stream owns one of the kernels' constant-memory coefficient banks */
_Static_assert(TS_STREAMS_MAX == TSK_SLOTS, "TS_STREAMS_MAX is the kernels' TSK_SLOTS");

static const ts_option_range RANGES[TS_OPT_COUNT] = {
    [TS_OPT_QUALITY] = { "--quality", "JPEG quality", TS_JPEG_QUALITY_MIN, TS_JPEG_QUALITY_MAX,
                         TS_JPEG_QUALITY_DEFAULT },
    [TS_OPT_PNG_LEVEL] = { "--png-level", "PNG compression level", TS_PNG_LEVEL_MIN, TS_PNG_LEVEL_MAX,
                           TS_PNG_LEVEL_DEFAULT },
    [TS_OPT_STREAMS] = { "--streams", "GPU streams", TS_STREAMS_MIN, TS_STREAMS_MAX, TS_STREAMS_DEFAULT },
    [TS_OPT_JOBS] = { "--jobs", "codec threads", 1, TS_JOBS_MAX, 0 },
    [TS_OPT_TILE] = { "--tile", "tile side", 1, TS_TILE_SIDE_MAX, 0 },
    [TS_OPT_REPS] = { "--reps", "timed runs", 1, TS_REPS_MAX, 0 },
};

const ts_option_range *ts_option_range_of(ts_option opt)
{
    return (unsigned)opt < TS_OPT_COUNT ? &RANGES[opt] : NULL;
}

ts_status ts_option_check(ts_option opt, long value, ts_err *err)
{
    const ts_option_range *r = ts_option_range_of(opt);
    if (!r) return ts_err_set(err, TS_E_ARG, "option %d: no such option", (int)opt);
    if (value < r->min || value > r->max)
        return ts_err_set(err, TS_E_ARG, "%s %ld is not in %d..%d (%s)", r->what, value, r->min, r->max, r->flag);
    return TS_OK;
}

ts_status ts_option_parse(ts_option opt, const char *text, int *value, ts_err *err)
{
    const ts_option_range *r = ts_option_range_of(opt);
    if (!r) return ts_err_set(err, TS_E_ARG, "option %d: no such option", (int)opt);
    char *end;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || end == text || *end || errno)
        return ts_err_set(err, TS_E_ARG, "%s '%s' is not a whole number in %d..%d (%s)", r->what,
                          text ? text : "", r->min, r->max, r->flag);
    ts_status st = ts_option_check(opt, v, err);
    if (st == TS_OK) *value = (int)v;
    return st;
}

/* value may be the option's "not given" (unset) or else must be in range */
static ts_status check_or_unset(ts_option opt, int value, int unset, ts_err *err)
{
    return value == unset ? TS_OK : ts_option_check(opt, value, err);
}

ts_status ts_batch_opts_check(const ts_batch_opts *o, ts_err *err)
{
    ts_status st;
    if ((st = check_or_unset(TS_OPT_QUALITY, o->quality, 0, err)) != TS_OK) return st;
    if ((st = check_or_unset(TS_OPT_PNG_LEVEL, o->png_level, -1, err)) != TS_OK) return st;
    if ((st = check_or_unset(TS_OPT_STREAMS, o->streams, 0, err)) != TS_OK) return st;
    if ((st = check_or_unset(TS_OPT_JOBS, o->jobs, 0, err)) != TS_OK) return st;
    if ((st = check_or_unset(TS_OPT_TILE, o->tile_w, 0, err)) != TS_OK) return st;
    return check_or_unset(TS_OPT_TILE, o->tile_h, 0, err);
}

/* trace.c - stage events on lanes, and what is made of them: the per-stage
 * summary, the Chrome Trace Event JSON (Perfetto, chrome://tracing) and a
 * self-contained SVG timeline.
 *
 * Lane and stage names are interned once, so an event is a few numbers and
 * adding one is cheap under the mutex (decode workers and the GPU engine
 * add events from different threads). */
#include "tilestream.h"
#include "trace_internal.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct trace_event {
    double t0, t1;
    uint64_t bytes;
    int lane, stage, image;
} trace_event;

typedef struct name_table {
    char **names;
    int n, cap;
} name_table;

struct ts_trace {
    pthread_mutex_t lock;
    trace_event *ev;
    size_t n, cap;
    name_table lanes, stages;
};

double ts_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

ts_trace *ts_trace_create(void)
{
    ts_trace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        return NULL;
    }
    return t;
}

static void names_free(name_table *nt)
{
    for (int i = 0; i < nt->n; i++) free(nt->names[i]);
    free(nt->names);
    memset(nt, 0, sizeof *nt);
}

void ts_trace_free(ts_trace *t)
{
    if (!t) return;
    names_free(&t->lanes);
    names_free(&t->stages);
    free(t->ev);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

void ts_trace_clear(ts_trace *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->n = 0;
    names_free(&t->stages);
    pthread_mutex_unlock(&t->lock);
}

/* Index of name in the table, adding it when absent; -1 when out of memory.
 * Caller holds the lock. */
static int names_intern(name_table *nt, const char *name)
{
    for (int i = 0; i < nt->n; i++)
        if (strcmp(nt->names[i], name) == 0) return i;
    if (nt->n == nt->cap) {
        int cap = nt->cap ? nt->cap * 2 : 16;
        char **p = realloc(nt->names, (size_t)cap * sizeof *p);
        if (!p) return -1;
        nt->names = p;
        nt->cap = cap;
    }
    char *copy = strdup(name ? name : "");
    if (!copy) return -1;
    nt->names[nt->n] = copy;
    return nt->n++;
}

int ts_trace_lane(ts_trace *t, const char *name)
{
    if (!t) return -1;
    pthread_mutex_lock(&t->lock);
    int lane = names_intern(&t->lanes, name);
    pthread_mutex_unlock(&t->lock);
    return lane;
}

void ts_trace_add(ts_trace *t, int lane, const char *stage, double t0, double t1,
                  uint64_t bytes, int image)
{
    if (!t || lane < 0) return;
    pthread_mutex_lock(&t->lock);
    int s = names_intern(&t->stages, stage ? stage : "?");
    if (s >= 0 && lane < t->lanes.n && t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        trace_event *p = realloc(t->ev, cap * sizeof *p);
        if (p) {
            t->ev = p;
            t->cap = cap;
        }
    }
    /* Out of memory drops the event: a trace must never fail the run. */
    if (s >= 0 && lane < t->lanes.n && t->n < t->cap) {
        trace_event *e = &t->ev[t->n++];
        e->t0 = t0;
        e->t1 = t1 > t0 ? t1 : t0;
        e->bytes = bytes;
        e->lane = lane;
        e->stage = s;
        e->image = image;
    }
    pthread_mutex_unlock(&t->lock);
}

/* ------------------------------------------------------------ summaries */

/* The readers below take the lock through a cast: reading is logically
 * const, but another thread may be adding events at the same time. */
static void trace_lock(const ts_trace *t) { pthread_mutex_lock((pthread_mutex_t *)&t->lock); }
static void trace_unlock(const ts_trace *t) { pthread_mutex_unlock((pthread_mutex_t *)&t->lock); }

int ts_trace_summary(const ts_trace *t, ts_stage_stat *out, int max)
{
    if (!t || !out || max <= 0) return 0;
    trace_lock(t);
    /* Stages are interned in order of first appearance, so stage index
     * order is the order the header promises. */
    int n = t->stages.n < max ? t->stages.n : max;
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        snprintf(out[i].stage, sizeof out[i].stage, "%s", t->stages.names[i]);
        out[i].first_s = INFINITY;
        out[i].last_s = -INFINITY;
    }
    for (size_t i = 0; i < t->n; i++) {
        const trace_event *e = &t->ev[i];
        if (e->stage >= n || e->image == TS_TRACE_PHASE) continue;
        ts_stage_stat *s = &out[e->stage];
        s->count++;
        s->busy_s += e->t1 - e->t0;
        s->bytes += e->bytes;
        if (e->t0 < s->first_s) s->first_s = e->t0;
        if (e->t1 > s->last_s) s->last_s = e->t1;
    }
    /* stages with no event left (cleared, or phases only) are not listed */
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (out[i].count > 0) out[kept++] = out[i];
    trace_unlock(t);
    return kept;
}

/* Earliest start and latest end over all events (the phases' too, when
 * with_phases); 0 when there are none. */
static int trace_bounds(const ts_trace *t, double *lo, double *hi, int with_phases)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (size_t i = 0; i < t->n; i++) {
        if (!with_phases && t->ev[i].image == TS_TRACE_PHASE) continue;
        if (t->ev[i].t0 < *lo) *lo = t->ev[i].t0;
        if (t->ev[i].t1 > *hi) *hi = t->ev[i].t1;
    }
    if (*lo > *hi) {
        *lo = *hi = 0;
        return 0;
    }
    return 1;
}

double ts_trace_span(const ts_trace *t)
{
    if (!t) return 0;
    double lo, hi;
    trace_lock(t);
    trace_bounds(t, &lo, &hi, 0);
    trace_unlock(t);
    return hi - lo;
}

/* 1 when stage name is in the comma-separated list. */
static int stage_listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == len && strncmp(p, name, n) == 0) return 1;
        if (!comma) break;
        p = comma + 1;
    }
    return 0;
}

static int cmp_interval(const void *a, const void *b)
{
    const double *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

double ts_trace_busy(const ts_trace *t, const char *stages)
{
    if (!t) return 0;
    int invert = stages && stages[0] == '!';
    const char *list = stages ? stages + invert : NULL;
    double busy = 0;
    trace_lock(t);
    double *iv = malloc((t->n ? t->n : 1) * 2 * sizeof *iv);
    size_t m = 0;
    for (size_t i = 0; iv && i < t->n; i++) {
        const trace_event *e = &t->ev[i];
        if (e->image == TS_TRACE_PHASE) continue;
        int listed = !list || stage_listed(list, t->stages.names[e->stage]);
        if (listed == invert && list) continue;
        iv[2 * m] = e->t0;
        iv[2 * m + 1] = e->t1;
        m++;
    }
    trace_unlock(t);
    if (!iv) return 0;
    /* The union of the intervals: sort by start, sweep. */
    qsort(iv, m, 2 * sizeof *iv, cmp_interval);
    double cur0 = 0, cur1 = -INFINITY;
    for (size_t i = 0; i < m; i++) {
        if (iv[2 * i] > cur1) {
            if (cur1 > cur0) busy += cur1 - cur0;
            cur0 = iv[2 * i];
            cur1 = iv[2 * i + 1];
        } else if (iv[2 * i + 1] > cur1) {
            cur1 = iv[2 * i + 1];
        }
    }
    if (m && cur1 > cur0) busy += cur1 - cur0;
    free(iv);
    return busy;
}

/* ------------------------------------------------------------ writers */

/* Writers go to "path.tmp.PID" and rename into place at the end, so a
 * failed or interrupted write never leaves a half-written file. */
typedef struct out_file {
    FILE *f;
    char tmp[4096];
    const char *path;
} out_file;

static ts_status out_open(out_file *o, const char *path, ts_err *err)
{
    o->path = path;
    if (snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof o->tmp)
        return ts_err_set(err, TS_E_ARG, "%s: path too long", path);
    o->f = fopen(o->tmp, "w");
    if (!o->f) return ts_err_set(err, TS_E_IO, "%s: %s", o->tmp, strerror(errno));
    return TS_OK;
}

static ts_status out_close(out_file *o, ts_err *err)
{
    int bad = ferror(o->f);
    int saved = errno;
    if (fclose(o->f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (bad) {
        remove(o->tmp);
        return ts_err_set(err, TS_E_IO, "%s: write failed: %s", o->path, strerror(saved));
    }
    if (rename(o->tmp, o->path) != 0) {
        saved = errno;
        remove(o->tmp);
        return ts_err_set(err, TS_E_IO, "%s: cannot rename from %s: %s", o->path, o->tmp, strerror(saved));
    }
    return TS_OK;
}

/* A JSON (or XML, xml=1) string body with the specials escaped. */
static void put_escaped(FILE *f, const char *s, int xml)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (xml) {
            if (ch == '<') fputs("&lt;", f);
            else if (ch == '>') fputs("&gt;", f);
            else if (ch == '&') fputs("&amp;", f);
            else if (ch == '"') fputs("&quot;", f);
            else if (ch < 0x20) fputc(' ', f);
            else fputc(ch, f);
        } else {
            if (ch == '"' || ch == '\\') fprintf(f, "\\%c", ch);
            else if (ch < 0x20) fprintf(f, "\\u%04x", ch);
            else fputc(ch, f);
        }
    }
}

static double gbps(uint64_t bytes, double seconds)
{
    return seconds > 0 ? (double)bytes / seconds * 1e-9 : 0;
}

/* Chrome trace processes: the CPU lanes are process 1; the streams of each
 * named GPU engine ("gpu1 stream 0", "gpu0.1 stream 2") one process per
 * engine, so a viewer shows a group per device. pid[0..lane) are known. */
static size_t engine_prefix(const char *name)
{
    const char *s = strstr(name, " stream ");
    if (strncmp(name, "gpu", 3) || !s) return 0;
    return (size_t)(s - name);
}

static int lane_process(const ts_trace *t, int lane, const int *pid)
{
    const char *name = t->lanes.names[lane];
    size_t n = engine_prefix(name);
    if (!n) return 1;
    int next = 2;
    for (int i = 0; i < lane; i++) {
        const char *other = t->lanes.names[i];
        if (engine_prefix(other) == n && !strncmp(other, name, n)) return pid[i];
        if (pid[i] >= next) next = pid[i] + 1;
    }
    return next;
}

static int first_of_process(const int *pid, int lane)
{
    for (int i = 0; i < lane; i++)
        if (pid[i] == pid[lane]) return 0;
    return 1;
}

/* The engine part of a lane's name ("gpu1"), escaped. */
static void put_escaped_prefix(FILE *f, const char *name)
{
    char buf[64];
    size_t n = engine_prefix(name);
    snprintf(buf, sizeof buf, "%.*s", (int)(n < sizeof buf ? n : sizeof buf - 1), name);
    put_escaped(f, buf, 0);
}

ts_status ts_trace_write_chrome(const ts_trace *t, const char *path, ts_err *err)
{
    if (!t) return ts_err_set(err, TS_E_ARG, "%s: no trace", path);
    out_file o;
    ts_status st = out_open(&o, path, err);
    if (st != TS_OK) return st;
    FILE *f = o.f;
    trace_lock(t);
    double lo, hi;
    trace_bounds(t, &lo, &hi, 1);
    fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n", f);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"tilestream\"}}", f);
    int *pid = malloc(sizeof *pid * (size_t)(t->lanes.n ? t->lanes.n : 1));
    for (int i = 0; i < t->lanes.n; i++) {
        int p = pid ? lane_process(t, i, pid) : 1;
        if (pid) pid[i] = p;
        if (p != 1 && (!pid || first_of_process(pid, i))) {
            fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"", p);
            put_escaped_prefix(f, t->lanes.names[i]);
            fputs("\"}}", f);
        }
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"", p, i);
        put_escaped(f, t->lanes.names[i], 0);
        fputs("\"}}", f);
        /* Keep lanes in creation order rather than by thread id hash. */
        fprintf(f, ",\n{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%d}}",
                p, i, i);
    }
    /* Times are microseconds from the first event, so the numbers stay
     * small and the viewer starts at zero. */
    for (size_t i = 0; i < t->n; i++) {
        const trace_event *e = &t->ev[i];
        double dur = e->t1 - e->t0;
        fprintf(f, ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":", pid ? pid[e->lane] : 1);
        fprintf(f, "%d,\"name\":\"", e->lane);
        put_escaped(f, t->stages.names[e->stage], 0);
        fprintf(f, "\",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"bytes\":%llu,\"GBps\":%.3f,\"image\":%d}}",
                (e->t0 - lo) * 1e6, dur * 1e6, (unsigned long long)e->bytes, gbps(e->bytes, dur), e->image);
    }
    free(pid);
    fputs("\n]}\n", f);
    trace_unlock(t);
    return out_close(&o, err);
}

/* ------------------------------------------------------------ SVG */

enum { SVG_MAX_RECTS = 20000 };
#define SVG_LABEL_W 110.0
#define SVG_PLOT_W 1400.0
#define SVG_ROW_H 22.0
#define SVG_TOP 30.0

/* Colours for the other stages (kernels): none of the four fixed ones. */
static const char *const stage_colours[] = {
    "#f28e2b", "#76b7b2", "#edc948", "#ff9da7", "#9c755f",
    "#bab0ac", "#17becf", "#6a3d9a", "#bcbd22", "#e7298a", "#1b9e77", "#7f7f7f",
};
#define N_COLOURS ((int)(sizeof stage_colours / sizeof stage_colours[0]))

/* Well-known stages keep their colour whatever order they appear in. */
static const char *stage_colour(const char *stage, int index)
{
    if (strcmp(stage, "h2d") == 0) return "#4e79a7";
    if (strcmp(stage, "d2h") == 0) return "#e15759";
    if (strcmp(stage, "decode") == 0) return "#59a14f";
    if (strcmp(stage, "encode") == 0) return "#b07aa1";
    return stage_colours[index % N_COLOURS];
}

/* A drawn box: one event, or several neighbours merged when there are
 * too many to draw one by one. */
typedef struct svg_box {
    double t0, t1;
    uint64_t bytes;
    double busy;
    int lane, stage, count;
} svg_box;

static int cmp_box(const void *a, const void *b)
{
    const svg_box *x = a, *y = b;
    if (x->lane != y->lane) return x->lane - y->lane;
    if (x->stage != y->stage) return x->stage - y->stage;
    return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Merge boxes of the same lane and stage whose gap is below min_gap
 * seconds; returns the new count. Boxes are sorted by cmp_box. */
static size_t merge_boxes(svg_box *b, size_t n, double min_gap)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && b[m - 1].lane == b[i].lane && b[m - 1].stage == b[i].stage &&
            b[i].t0 - b[m - 1].t1 < min_gap) {
            svg_box *p = &b[m - 1];
            if (b[i].t1 > p->t1) p->t1 = b[i].t1;
            p->bytes += b[i].bytes;
            p->busy += b[i].busy;
            p->count += b[i].count;
        } else {
            b[m++] = b[i];
        }
    }
    return m;
}

/* A round step (1, 2 or 5 times a power of ten) giving about 10 ticks. */
static double tick_step(double span_ms)
{
    if (span_ms <= 0) return 1;
    double raw = span_ms / 10, p = pow(10, floor(log10(raw)));
    double m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void svg_header(FILE *f, double height, int nlanes, double span_ms)
{
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
               "font-family=\"sans-serif\" font-size=\"12\">\n",
            SVG_LABEL_W + SVG_PLOT_W + 20, height);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
    fprintf(f, "<text x=\"%.0f\" y=\"18\" font-weight=\"bold\">tilestream timeline: %d lanes, %.3f ms</text>\n",
            SVG_LABEL_W, nlanes, span_ms);
}

static void svg_lanes(FILE *f, const ts_trace *t)
{
    for (int i = 0; i < t->lanes.n; i++) {
        double y = SVG_TOP + i * SVG_ROW_H;
        fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" fill=\"%s\"/>\n", SVG_LABEL_W, y,
                SVG_PLOT_W, SVG_ROW_H, i % 2 ? "#f4f4f4" : "#fafafa");
        fprintf(f, "<text x=\"4\" y=\"%.1f\">", y + SVG_ROW_H * 0.7);
        put_escaped(f, t->lanes.names[i], 1);
        fputs("</text>\n", f);
    }
}

static void svg_axis(FILE *f, double y, double span_ms)
{
    double step = tick_step(span_ms);
    fprintf(f, "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#333\"/>\n", SVG_LABEL_W, y,
            SVG_LABEL_W + SVG_PLOT_W, y);
    for (int k = 0; k * step <= span_ms * (1 + 1e-9) && k <= 100; k++) {
        double x = SVG_LABEL_W + (span_ms > 0 ? k * step / span_ms * SVG_PLOT_W : 0);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#333\"/>", x, y, x, y + 5);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>", x, SVG_TOP, x, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", x, y + 18, k * step);
    }
    fprintf(f, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">time (ms)</text>\n", SVG_LABEL_W - 12, y + 9);
}

static void svg_legend(FILE *f, const ts_trace *t, double y)
{
    double x = SVG_LABEL_W;
    for (int i = 0; i < t->stages.n; i++) {
        const char *name = t->stages.names[i];
        fprintf(f, "<rect class=\"legend\" x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"12\" fill=\"%s\"/>",
                x, y, stage_colour(name, i));
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">", x + 16, y + 10);
        put_escaped(f, name, 1);
        fputs("</text>\n", f);
        x += 30 + 7.0 * (double)strlen(name);
        if (x > SVG_LABEL_W + SVG_PLOT_W - 100) {
            x = SVG_LABEL_W;
            y += 18;
        }
    }
}

static void svg_box_rect(FILE *f, const ts_trace *t, const svg_box *b, double lo, double scale)
{
    double x = SVG_LABEL_W + (b->t0 - lo) * scale;
    double w = (b->t1 - b->t0) * scale;
    if (w < 0.3) w = 0.3; /* keep instant events visible */
    double y = SVG_TOP + b->lane * SVG_ROW_H + 2;
    const char *name = t->stages.names[b->stage];
    fprintf(f, "<rect class=\"ev\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"><title>",
            x, y, w, SVG_ROW_H - 4, stage_colour(name, b->stage));
    put_escaped(f, name, 1);
    if (b->count > 1) fprintf(f, " (%d events)", b->count);
    fprintf(f, ": %.3f ms, %llu bytes, %.2f GB/s</title></rect>\n", b->busy * 1e3, (unsigned long long)b->bytes,
            gbps(b->bytes, b->busy));
}

ts_status ts_trace_write_svg(const ts_trace *t, const char *path, ts_err *err)
{
    if (!t) return ts_err_set(err, TS_E_ARG, "%s: no trace", path);
    trace_lock(t);
    size_t n = t->n;
    svg_box *b = malloc((n ? n : 1) * sizeof *b);
    if (!b) {
        trace_unlock(t);
        return ts_err_set(err, TS_E_NOMEM, "%s: out of memory for %zu events", path, n);
    }
    double lo, hi;
    trace_bounds(t, &lo, &hi, 1);
    for (size_t i = 0; i < n; i++) {
        const trace_event *e = &t->ev[i];
        b[i] = (svg_box){e->t0, e->t1, e->bytes, e->t1 - e->t0, e->lane, e->stage, 1};
    }
    double span = hi - lo, scale = span > 0 ? SVG_PLOT_W / span : 0;
    /* Too many to draw: merge neighbours closer than a pixel, then two,
     * four... until the count fits. */
    if (n > SVG_MAX_RECTS) {
        qsort(b, n, sizeof *b, cmp_box);
        for (double px = 1; n > SVG_MAX_RECTS && px < 2 * SVG_PLOT_W; px *= 2)
            n = merge_boxes(b, n, span > 0 ? px / scale : INFINITY);
    }
    out_file o;
    ts_status st = out_open(&o, path, err);
    if (st != TS_OK) {
        trace_unlock(t);
        free(b);
        return st;
    }
    FILE *f = o.f;
    double axis_y = SVG_TOP + t->lanes.n * SVG_ROW_H + 4;
    double legend_rows = 1 + (double)t->stages.n / 8;
    svg_header(f, axis_y + 40 + 18 * legend_rows + 10, t->lanes.n, span * 1e3);
    svg_lanes(f, t);
    for (size_t i = 0; i < n; i++) svg_box_rect(f, t, &b[i], lo, scale);
    svg_axis(f, axis_y, span * 1e3);
    svg_legend(f, t, axis_y + 32);
    fputs("</svg>\n", f);
    trace_unlock(t);
    free(b);
    return out_close(&o, err);
}

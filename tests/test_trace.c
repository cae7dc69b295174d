/* test_trace.c - trace events from several threads, the per-stage summary,
 * the busy-time union, and the Chrome JSON and SVG writers. */
#include "check.h"
#include "tilestream.h"
#include "trace_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

enum { THREADS = 4, EVENTS_PER_THREAD = 2000 };
static const char *const stages[] = {"decode", "h2d", "gauss \"v3\"", "d2h"};

typedef struct worker {
    ts_trace *t;
    int index;
    double durations[4];     /* what this worker added, per stage */
    uint64_t bytes[4];
    unsigned long long rng;
} worker;

static unsigned long long next_rand(unsigned long long *s)
{
    *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17;
    return *s;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    char name[32];
    snprintf(name, sizeof name, "worker <%d>", w->index);
    int lane = ts_trace_lane(w->t, name);
    double t = 1000.0 + w->index;
    for (int i = 0; i < EVENTS_PER_THREAD; i++) {
        int s = (int)(next_rand(&w->rng) % 4);
        double d = (double)(next_rand(&w->rng) % 1000) * 1e-6;
        uint64_t bytes = next_rand(&w->rng) % 100000;
        ts_trace_add(w->t, lane, stages[s], t, t + d, bytes, i);
        w->durations[s] += d;
        w->bytes[s] += bytes;
        t += d + 1e-6;
    }
    return NULL;
}

/* Read a whole file into a NUL-terminated buffer. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = '\0';
    fclose(f);
    return buf;
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
    return n;
}

/* A small JSON syntax checker: values, objects, arrays, strings with
 * escapes, numbers, literals. Returns the end of the value or NULL. */
static const char *json_value(const char *p);
static const char *json_ws(const char *p)
{
    while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t') p++;
    return p;
}
static const char *json_string(const char *p)
{
    if (*p != '"') return NULL;
    for (p++; *p && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return NULL;
        if (*p == '\\') {
            p++;
            if (*p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i]) return NULL;
                p += 4;
            } else if (!*p || !strchr("\"\\/bfnrt", *p)) {
                return NULL;
            }
        }
    }
    return *p == '"' ? p + 1 : NULL;
}
static const char *json_number(const char *p)
{
    char *end;
    strtod(p, &end);
    return end == p ? NULL : end;
}
static const char *json_list(const char *p, char close, int object)
{
    p = json_ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
        if (object) {
            p = json_string(json_ws(p));
            if (!p) return NULL;
            p = json_ws(p);
            if (*p++ != ':') return NULL;
        }
        p = json_value(p);
        if (!p) return NULL;
        p = json_ws(p);
        if (*p == close) return p + 1;
        if (*p++ != ',') return NULL;
    }
}
static const char *json_value(const char *p)
{
    p = json_ws(p);
    switch (*p) {
    case '{': return json_list(p, '}', 1);
    case '[': return json_list(p, ']', 0);
    case '"': return json_string(p);
    case 't': return strncmp(p, "true", 4) ? NULL : p + 4;
    case 'f': return strncmp(p, "false", 5) ? NULL : p + 5;
    case 'n': return strncmp(p, "null", 4) ? NULL : p + 4;
    default: return json_number(p);
    }
}

static void check_summary(ts_trace *t, worker *w)
{
    ts_stage_stat st[8];
    int n = ts_trace_summary(t, st, 8);
    CHECK_EQ_INT(n, 4);
    int total = 0;
    for (int i = 0; i < n; i++) {
        double want = 0;
        uint64_t bytes = 0;
        int s = -1;
        for (int k = 0; k < 4; k++)
            if (strcmp(st[i].stage, stages[k]) == 0) s = k;
        CHECK_MSG(s >= 0, "unexpected stage %s", st[i].stage);
        if (s < 0) continue;
        for (int k = 0; k < THREADS; k++) {
            want += w[k].durations[s];
            bytes += w[k].bytes[s];
        }
        CHECK_NEAR(st[i].busy_s, want, 1e-9 * EVENTS_PER_THREAD * THREADS);
        CHECK_EQ_INT(st[i].bytes, bytes);
        CHECK(st[i].first_s >= 1000.0 && st[i].last_s > st[i].first_s);
        total += st[i].count;
    }
    CHECK_EQ_INT(total, THREADS * EVENTS_PER_THREAD);
    /* Summary order is order of first appearance; asking for fewer is safe. */
    ts_stage_stat one;
    CHECK_EQ_INT(ts_trace_summary(t, &one, 1), 1);
    CHECK(strcmp(one.stage, st[0].stage) == 0);
}

/* Hand-built intervals: the union counts overlaps once. */
static void check_busy(void)
{
    ts_trace *t = ts_trace_create();
    int a = ts_trace_lane(t, "stream 0"), b = ts_trace_lane(t, "stream 1");
    CHECK_EQ_INT(ts_trace_lane(t, "stream 0"), a);
    ts_trace_add(t, a, "h2d", 10.0, 11.0, 100, 0);
    ts_trace_add(t, b, "h2d", 10.5, 12.0, 100, 1);   /* overlaps: union 10..12 */
    ts_trace_add(t, a, "h2d", 13.0, 13.5, 100, 2);
    ts_trace_add(t, a, "gauss", 11.0, 11.25, 0, 0);
    ts_trace_add(t, b, "d2h", 12.0, 14.0, 100, 1);
    CHECK_NEAR(ts_trace_busy(t, "h2d"), 2.5, 1e-12);
    CHECK_NEAR(ts_trace_busy(t, "h2d,d2h"), 4.0, 1e-12);
    CHECK_NEAR(ts_trace_busy(t, "!h2d,d2h"), 0.25, 1e-12);
    CHECK_NEAR(ts_trace_busy(t, NULL), 4.0, 1e-12);
    CHECK_NEAR(ts_trace_busy(t, "none"), 0.0, 0);
    CHECK_NEAR(ts_trace_span(t), 4.0, 1e-12);
    /* Clearing drops events and stages, keeps lanes. */
    ts_trace_clear(t);
    ts_stage_stat s;
    CHECK_EQ_INT(ts_trace_summary(t, &s, 1), 0);
    CHECK_NEAR(ts_trace_busy(t, NULL), 0.0, 0);
    CHECK_EQ_INT(ts_trace_lane(t, "stream 1"), b);
    ts_trace_add(t, b, "d2h", 1.0, 2.0, 5, 0);
    CHECK_EQ_INT(ts_trace_summary(t, &s, 1), 1);
    CHECK_EQ_INT(s.bytes, 5);
    ts_trace_free(t);
}

static void check_chrome(ts_trace *t, const char *path)
{
    ts_err err = {0};
    CHECK_MSG(ts_trace_write_chrome(t, path, &err) == TS_OK, "%s", err.msg);
    char *json = slurp(path);
    CHECK(json != NULL);
    if (!json) return;
    const char *end = json_value(json);
    CHECK_MSG(end && *json_ws(end) == '\0', "Chrome trace is not valid JSON");
    CHECK(strncmp(json_ws(json), "{\"displayTimeUnit\"", 18) == 0);
    CHECK(strstr(json, "\"traceEvents\":[") != NULL);
    CHECK_EQ_INT(count_of(json, "\"ph\":\"X\""), THREADS * EVENTS_PER_THREAD);
    CHECK_EQ_INT(count_of(json, "\"name\":\"thread_name\""), THREADS);
    CHECK_EQ_INT(count_of(json, "\"GBps\":"), THREADS * EVENTS_PER_THREAD);
    CHECK(strstr(json, "gauss \\\"v3\\\"") != NULL);  /* quotes escaped */
    for (int i = 0; i < THREADS; i++) {
        char lane[64];
        snprintf(lane, sizeof lane, "{\"name\":\"worker <%d>\"}", i);
        CHECK_MSG(strstr(json, lane) != NULL, "lane %d missing", i);
    }
    free(json);
}

static void check_svg(ts_trace *t, const char *path, size_t events, int exact)
{
    ts_err err = {0};
    CHECK_MSG(ts_trace_write_svg(t, path, &err) == TS_OK, "%s", err.msg);
    char *svg = slurp(path);
    CHECK(svg != NULL);
    if (!svg) return;
    CHECK(strncmp(svg, "<svg ", 5) == 0);
    CHECK(strstr(svg, "</svg>\n") != NULL && strstr(svg, "</svg>\n")[7] == '\0');
    size_t rects = count_of(svg, "<rect class=\"ev\"");
    if (exact) CHECK_EQ_INT(rects, events);
    else CHECK_MSG(rects > 0 && rects <= 20000, "%zu rects for %zu events", rects, events);
    CHECK_EQ_INT(count_of(svg, "<rect class=\"ev\""), count_of(svg, "</title></rect>"));
    CHECK_EQ_INT(count_of(svg, "<title>"), count_of(svg, "</title>"));
    CHECK(strstr(svg, "worker &lt;0&gt;") != NULL);   /* lane names escaped */
    CHECK(strstr(svg, "GB/s") != NULL && strstr(svg, ">time (ms)<") != NULL);
    /* Nothing unescaped: every '<' starts a tag we wrote. */
    size_t lt = count_of(svg, "<"), tags = count_of(svg, "<svg") + count_of(svg, "</svg") +
        count_of(svg, "<rect") + count_of(svg, "</rect") + count_of(svg, "<text") + count_of(svg, "</text") +
        count_of(svg, "<line") + count_of(svg, "<title") + count_of(svg, "</title");
    CHECK_EQ_INT(lt, tags);
    free(svg);
}

/* Many more events than the SVG draws one by one: they are merged. */
static void check_svg_merge(const char *path)
{
    ts_trace *t = ts_trace_create();
    int lane = ts_trace_lane(t, "worker <0>");
    double x = 0;
    for (int i = 0; i < 50000; i++, x += 2e-6) ts_trace_add(t, lane, i % 2 ? "h2d" : "d2h", x, x + 1e-6, 10, i);
    check_svg(t, path, 50000, 0);
    ts_trace_free(t);
}

int main(void)
{
    check_seed();
    ts_trace *t = ts_trace_create();
    CHECK(t != NULL);
    if (!t) return check_exit();
    worker w[THREADS];
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].t = t;
        w[i].index = i;
        w[i].rng = check_rand() | 1;
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
    CHECK(fabs(ts_now() - ts_now()) < 1.0 && ts_now() > 0);

    check_summary(t, w);
    check_busy();
    char json_path[64], svg_path[64];
    snprintf(json_path, sizeof json_path, "test_trace_%ld.json", (long)getpid());
    snprintf(svg_path, sizeof svg_path, "test_trace_%ld.svg", (long)getpid());
    check_chrome(t, json_path);
    check_svg(t, svg_path, (size_t)THREADS * EVENTS_PER_THREAD, 1);
    check_svg_merge(svg_path);

    ts_err err = {0};
    CHECK(ts_trace_write_chrome(t, "/nonexistent-dir/x.json", &err) == TS_E_IO);
    CHECK(strstr(err.msg, "/nonexistent-dir/x.json") != NULL);
    remove(json_path);
    remove(svg_path);
    ts_trace_free(t);
    return check_exit();
}

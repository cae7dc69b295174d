/* pool.c - the CPU thread pool (see pool.h): a queue of task groups, one
 * per caller, and threads - 1 workers that take tasks from the oldest
 * group while the number of threads computing is below the limit. */
#include "pool.h"
#include "buffers.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct task_group {
    ts_task_fn task;
    void *ctx;
    int n;
    int next;                 /* next task index to hand out */
    int finished;             /* tasks done */
    pthread_cond_t all_done;
    struct task_group *newer; /* queue link */
} task_group;

struct ts_pool {
    int threads;              /* the most threads computing at once */
    int computing;            /* callers in their own group + workers in a task */
    int n_workers;
    pthread_t *workers;
    pthread_mutex_t lock;
    pthread_cond_t work;      /* a group arrived, or a thread stopped computing */
    task_group *oldest, *newest;
    int stop;
    ts_buffers *buffers;      /* pixels of the images and tiles it runs */
};

static void unlink_group(ts_pool *p, task_group *g)
{
    task_group **link = &p->oldest, *prev = NULL;
    while (*link && *link != g) { prev = *link; link = &(*link)->newer; }
    if (!*link) return;
    *link = g->newer;
    if (p->newest == g) p->newest = prev;
}

/* The oldest group with a task not yet handed out, or NULL. Lock held. */
static task_group *group_with_work(ts_pool *p)
{
    for (task_group *g = p->oldest; g; g = g->newer)
        if (g->next < g->n) return g;
    return NULL;
}

/* Run task i of g without the lock, then count it. Lock held on entry and exit. */
static void run_one(ts_pool *p, task_group *g, int i)
{
    pthread_mutex_unlock(&p->lock);
    g->task(g->ctx, i);
    pthread_mutex_lock(&p->lock);
    if (++g->finished == g->n) pthread_cond_signal(&g->all_done);
}

static void *worker_main(void *arg)
{
    ts_pool *p = arg;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        task_group *g = NULL;
        while (!p->stop && (p->computing >= p->threads || !(g = group_with_work(p))))
            pthread_cond_wait(&p->work, &p->lock);
        if (p->stop) break;
        int i = g->next++;
        if (g->next == g->n) unlink_group(p, g); /* nothing left to hand out */
        p->computing++;
        run_one(p, g, i);
        p->computing--;
        pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

ts_pool *ts_pool_create(int threads)
{
    ts_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->threads = threads > 0 ? threads : online_cpus();
    if (p->threads > 1024) p->threads = 1024;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    p->buffers = ts_buffers_create(ts_buffers_default_keep());
    p->workers = calloc((size_t)p->threads, sizeof *p->workers);
    if (!p->workers) { ts_pool_free(p); return NULL; }
    /* the caller computes too, so threads - 1 workers reach the limit */
    for (int i = 0; i < p->threads - 1; i++) {
        if (pthread_create(&p->workers[i], NULL, worker_main, p) != 0) break;
        p->n_workers++;
    }
    return p;
}

void ts_pool_free(ts_pool *p)
{
    if (!p) return;
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->n_workers; i++) pthread_join(p->workers[i], NULL);
    free(p->workers);
    ts_buffers_release(p->buffers); /* images still out return their pixels later */
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

int ts_pool_threads(const ts_pool *p) { return p ? p->threads : 1; }

ts_allocator ts_pool_allocator(ts_pool *p) { return ts_buffers_allocator(p ? p->buffers : NULL); }

void ts_pool_keep(ts_pool *p, size_t keep_bytes)
{
    if (p) ts_buffers_keep(p->buffers, keep_bytes);
}

/* The pool this thread has said it is busy for (ts_pool_busy), if any. */
static _Thread_local ts_pool *busy_for;

void ts_pool_busy(ts_pool *p, int busy)
{
    if (!p || (busy != 0) == (busy_for == p)) return;
    pthread_mutex_lock(&p->lock);
    if (busy) {
        p->computing++;
    } else {
        p->computing--;
        pthread_cond_signal(&p->work);
    }
    pthread_mutex_unlock(&p->lock);
    busy_for = busy ? p : NULL;
}

static void run_here(int n, ts_task_fn task, void *ctx)
{
    for (int i = 0; i < n; i++) task(ctx, i);
}

void ts_pool_run(ts_pool *p, int n, ts_task_fn task, void *ctx)
{
    if (n <= 0) return;
    if (!p || p->n_workers == 0 || n == 1) { run_here(n, task, ctx); return; }
    task_group g = { .task = task, .ctx = ctx, .n = n };
    pthread_cond_init(&g.all_done, NULL);
    pthread_mutex_lock(&p->lock);
    if (p->newest) p->newest->newer = &g;
    else p->oldest = &g;
    p->newest = &g;
    int counted = busy_for == p; /* already counted as computing */
    if (!counted) p->computing++;
    pthread_cond_broadcast(&p->work);
    while (g.next < g.n) { /* the caller works on its own group */
        int i = g.next++;
        if (g.next == g.n) unlink_group(p, &g);
        run_one(p, &g, i);
    }
    if (!counted) {
        p->computing--;
        pthread_cond_signal(&p->work);
    }
    while (g.finished < g.n) pthread_cond_wait(&g.all_done, &p->lock);
    pthread_mutex_unlock(&p->lock);
    pthread_cond_destroy(&g.all_done);
}

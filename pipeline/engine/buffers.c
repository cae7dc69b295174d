/* buffers.c - a cache of large host buffers for pixels (see buffers.h). */
#include "buffers.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
    BUF_HDR = 64,                /* header before the data; a mapped buffer's data is 64-byte aligned */
    BUF_MAGIC_MAPPED = 0x7462756d,
    BUF_MAGIC_SMALL = 0x74627573
};
#define BUF_SMALL ((size_t)32 << 10)     /* under this, malloc */
#define BUF_MEDIUM ((size_t)1 << 20)     /* under this, mapped in steps of BUF_STEP, no huge page */
#define BUF_STEP ((size_t)64 << 10)
#define BUF_ALIGN ((size_t)2 << 20)      /* one transparent huge page */

typedef struct buf {
    unsigned magic;
    size_t size;                 /* bytes mapped (a multiple of BUF_STEP, of BUF_ALIGN from BUF_MEDIUM) */
    ts_buffers *owner;
    struct buf *newer, *older;   /* idle list; `newer` also links buffers to unmap */
} buf;

struct ts_buffers {
    pthread_mutex_t lock;
    size_t keep, idle_bytes;
    buf *newest, *oldest;        /* idle buffers, the most recently freed first */
    long refs;                   /* 1 for the owner until released, + mapped buffers handed out */
    int released;
    long mapped, reused;
};

static void idle_unlink(ts_buffers *c, buf *b)
{
    if (b->newer) b->newer->older = b->older; else c->newest = b->older;
    if (b->older) b->older->newer = b->newer; else c->oldest = b->newer;
    c->idle_bytes -= b->size;
}

static void idle_push(ts_buffers *c, buf *b)
{
    b->newer = NULL;
    b->older = c->newest;
    if (c->newest) c->newest->newer = b; else c->oldest = b;
    c->newest = b;
    c->idle_bytes += b->size;
}

/* The oldest idle buffers beyond keep bytes, taken off the list and
 * chained through `newer` for unmap_all (outside the lock). Lock held. */
static buf *evict_over(ts_buffers *c, size_t keep, buf *drop)
{
    while (c->oldest && c->idle_bytes > keep) {
        buf *o = c->oldest;
        idle_unlink(c, o);
        o->newer = drop;
        drop = o;
    }
    return drop;
}

static void unmap_all(buf *drop)
{
    while (drop) {
        buf *next = drop->newer;
        munmap(drop, drop->size);
        drop = next;
    }
}

static void destroy(ts_buffers *c)
{
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* len bytes of fresh memory: under BUF_MEDIUM where the kernel puts it,
 * else at a 2 MB boundary, so that it can back it with huge pages. */
static buf *map_fresh(size_t len)
{
    if (len < BUF_MEDIUM) {
        buf *b = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (b == MAP_FAILED) return NULL;
        b->magic = BUF_MAGIC_MAPPED;
        b->size = len;
        return b;
    }
    unsigned char *m = mmap(NULL, len + BUF_ALIGN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return NULL;
    uintptr_t at = ((uintptr_t)m + BUF_ALIGN - 1) & ~(uintptr_t)(BUF_ALIGN - 1);
    size_t head = at - (uintptr_t)m;
    if (head) munmap(m, head);
    munmap((unsigned char *)at + len, BUF_ALIGN - head);
#ifdef MADV_HUGEPAGE
    madvise((void *)at, len, MADV_HUGEPAGE);
#endif
    buf *b = (buf *)at;
    b->magic = BUF_MAGIC_MAPPED;
    b->size = len;
    return b;
}

static void *buffers_alloc(void *ctx, size_t bytes)
{
    ts_buffers *c = ctx;
    if (bytes > SIZE_MAX / 2 - BUF_ALIGN) return NULL;
    size_t need = bytes + BUF_HDR;
    if (need < BUF_SMALL) {
        buf *s = malloc(need);
        if (!s) return NULL;
        s->magic = BUF_MAGIC_SMALL;
        s->size = need;
        s->owner = NULL;
        return (unsigned char *)s + BUF_HDR;
    }
    const size_t step = need < BUF_MEDIUM ? BUF_STEP : BUF_ALIGN;
    size_t len = (need + step - 1) & ~(step - 1);
    pthread_mutex_lock(&c->lock);
    buf *best = NULL;   /* the smallest idle buffer that fits, wasting at most half of it */
    for (buf *b = c->newest; b; b = b->older)
        if (b->size >= len && b->size / 2 <= len && (!best || b->size < best->size)) best = b;
    if (best) {
        idle_unlink(c, best);
        c->reused++;
    } else {
        c->mapped++;
    }
    c->refs++;
    pthread_mutex_unlock(&c->lock);
    if (!best && (best = map_fresh(len)) == NULL) {
        pthread_mutex_lock(&c->lock);
        c->mapped--;
        int last = --c->refs == 0;
        pthread_mutex_unlock(&c->lock);
        if (last) destroy(c);
        return NULL;
    }
    best->owner = c;
    return (unsigned char *)best + BUF_HDR;
}

static void buffers_free(void *ctx, void *p)
{
    (void)ctx;   /* the buffer names its cache */
    if (!p) return;
    buf *b = (buf *)((unsigned char *)p - BUF_HDR);
    if (b->magic == BUF_MAGIC_SMALL) {
        free(b);
        return;
    }
    if (b->magic != BUF_MAGIC_MAPPED) return;   /* not ours: leaking beats corrupting */
    ts_buffers *c = b->owner;
    buf *drop = NULL;
    pthread_mutex_lock(&c->lock);
    if (!c->released && b->size <= c->keep) {
        idle_push(c, b);
        drop = evict_over(c, c->keep, NULL);
    } else {
        b->newer = NULL;
        drop = b;
    }
    int last = --c->refs == 0;
    pthread_mutex_unlock(&c->lock);
    unmap_all(drop);
    if (last) destroy(c);
}

ts_buffers *ts_buffers_create(size_t keep_bytes)
{
    ts_buffers *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    pthread_mutex_init(&c->lock, NULL);
    c->keep = keep_bytes;
    c->refs = 1;
    return c;
}

void ts_buffers_release(ts_buffers *c)
{
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    c->released = 1;
    buf *drop = evict_over(c, 0, NULL);
    int last = --c->refs == 0;
    pthread_mutex_unlock(&c->lock);
    unmap_all(drop);
    if (last) destroy(c);
}

void ts_buffers_keep(ts_buffers *c, size_t keep_bytes)
{
    if (!c) return;
    pthread_mutex_lock(&c->lock);
    c->keep = keep_bytes;
    buf *drop = evict_over(c, keep_bytes, NULL);
    pthread_mutex_unlock(&c->lock);
    unmap_all(drop);
}

ts_allocator ts_buffers_allocator(ts_buffers *c)
{
    ts_allocator a = { 0 };
    if (c) {
        a.alloc = buffers_alloc;
        a.free = buffers_free;
        a.ctx = c;
    }
    return a;
}

ts_buffers_stats ts_buffers_stats_of(ts_buffers *c)
{
    ts_buffers_stats s = { 0 };
    if (!c) return s;
    pthread_mutex_lock(&c->lock);
    s.mapped = c->mapped;
    s.reused = c->reused;
    s.idle_bytes = c->idle_bytes;
    pthread_mutex_unlock(&c->lock);
    return s;
}

size_t ts_buffers_default_keep(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    size_t ram = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : (size_t)4 << 30;
    size_t keep = ram / 16, cap = (size_t)1 << 30;
    return keep < cap ? keep : cap;
}

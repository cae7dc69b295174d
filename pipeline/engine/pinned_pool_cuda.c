/* pinned_pool_cuda.c - an engine's pool of pinned host memory. Pinning is
 * slow and cudaHostAlloc synchronises the device, so pinned memory is
 * allocated once in large blocks (pinned_cuda.c) and handed out in size
 * classes, not per image: a freed chunk goes on its class's free list and
 * is reused (docs/measurements/pipeline.md). */
#include "pinned.h"

#include <pthread.h>
#include <stdlib.h>


enum {
    POOL_HDR = 256,                   /* chunk header; keeps data 256-byte aligned */
    POOL_CLASSES = 128,
    POOL_MAGIC_PINNED = 0x7470696e,   /* "tpin" */
    POOL_MAGIC_MALLOC = 0x746d616c    /* "tmal": pinning failed, plain malloc */
};
#define POOL_MIN_CLASS ((size_t)64 << 10)
#define POOL_FIRST_BLOCK ((size_t)32 << 20)
#define POOL_MAX_BLOCK ((size_t)256 << 20)

typedef struct ts_pinned_pool pinned_pool;

/* The chunk names its pool, so that any engine's allocator frees any
 * engine's chunk (a batch decodes into whichever pool has room). */
typedef struct pool_chunk {
    unsigned magic;
    int cls;
    struct pool_chunk *next_free;
    pinned_pool *owner;
} pool_chunk;

typedef struct pool_block {
    unsigned char *base;
    size_t size, used;
    int registered;        /* cudaHostRegister'ed mmap (else cudaHostAlloc) */
} pool_block;

struct ts_pinned_pool {
    pthread_mutex_t lock;
    pool_block *blocks;
    int n_blocks, cap_blocks;
    pool_chunk *free_list[POOL_CLASSES];
    size_t pinned_bytes;
    size_t limit;          /* pin at most this much (0 = no limit) */
};

/* Class i holds (1 + (i % 4) / 4) * 64 KB * 2^(i / 4) bytes: at most 25%
 * wasted on rounding. */
static size_t class_size(int i)
{
    size_t base = POOL_MIN_CLASS << (i / 4);
    return base + base / 4 * (size_t)(i % 4);
}

static int class_of(size_t bytes)
{
    for (int i = 0; i < POOL_CLASSES; i++)
        if (class_size(i) >= bytes) return i;
    return -1;
}

/* Size of the next block for need bytes: blocks grow from 32 MB to 256 MB
 * so that small jobs do not pin much; 0 when the limit leaves no room.
 * Caller holds the lock. */
static size_t pool_next_size(const pinned_pool *p, size_t need)
{
    size_t size = POOL_FIRST_BLOCK << (p->n_blocks < 3 ? p->n_blocks : 3);
    if (size > POOL_MAX_BLOCK) size = POOL_MAX_BLOCK;
    if (size < need) size = (need + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
    if (p->limit) {
        /* bounded: a smaller last block, or none */
        size_t room = p->pinned_bytes < p->limit ? p->limit - p->pinned_bytes : 0;
        if (size > room) size = room;
        if (size < need) return 0;
    }
    return size;
}

static void unpin_block(pool_block *b) { ts_pinned_free(b->base, b->size, b->registered); }

/* A chunk of need bytes carved from the free end of some block, or NULL.
 * Caller holds the lock. */
static pool_chunk *pool_carve(pinned_pool *p, size_t need, int cls)
{
    for (int i = 0; i < p->n_blocks; i++) {
        pool_block *b = &p->blocks[i];
        if (b->size - b->used < need) continue;
        pool_chunk *c = (pool_chunk *)(b->base + b->used);
        b->used += need;
        c->magic = POOL_MAGIC_PINNED;
        c->cls = cls;
        c->owner = p;
        return c;
    }
    return NULL;
}

/* Add a block for need bytes and carve from it. Pinning takes milliseconds,
 * so it runs without the lock (other threads keep allocating and freeing);
 * its bytes count against the limit from the start. Called and returns
 * with the lock held. */
static pool_chunk *pool_grow(pinned_pool *p, size_t need, int cls)
{
    size_t size = pool_next_size(p, need);
    if (!size) return NULL;
    p->pinned_bytes += size;
    pthread_mutex_unlock(&p->lock);
    int registered = 0;
    void *base = ts_pinned_alloc(size, &registered);
    pthread_mutex_lock(&p->lock);
    if (!base) {
        p->pinned_bytes -= size;
        return NULL;
    }
    if (p->n_blocks == p->cap_blocks) {   /* the block list grows under the lock, once pinned */
        int cap = p->cap_blocks ? p->cap_blocks * 2 : 8;
        pool_block *nb = realloc(p->blocks, (size_t)cap * sizeof *nb);
        if (!nb) {
            pool_block lost = {base, size, 0, registered};
            unpin_block(&lost);
            p->pinned_bytes -= size;
            return NULL;
        }
        p->blocks = nb;
        p->cap_blocks = cap;
    }
    pool_block *b = &p->blocks[p->n_blocks++];
    b->base = base;
    b->size = size;
    b->used = 0;
    b->registered = registered;
    return pool_carve(p, need, cls);
}

/* A free chunk of class cls, or of one of the next classes up (at most 2x
 * the size): at the limit a larger free chunk beats pageable memory.
 * Caller holds the lock. */
static pool_chunk *pool_take_free(pinned_pool *p, int cls)
{
    for (int k = cls; k < POOL_CLASSES && k <= cls + 4; k++) {
        pool_chunk *c = p->free_list[k];
        if (c) {
            p->free_list[k] = c->next_free;
            return c;
        }
        if (!p->limit) break;   /* unbounded: grow rather than waste */
    }
    return NULL;
}

/* Pinned memory from the pool, or NULL when the pool is at its limit (or
 * pinning fails). */
void *ts_pinned_pool_alloc_pinned(void *ctx, size_t bytes)
{
    pinned_pool *p = ctx;
    int cls = class_of(bytes ? bytes : 1);
    if (cls < 0) return NULL;
    size_t need = POOL_HDR + class_size(cls);
    pthread_mutex_lock(&p->lock);
    pool_chunk *c = pool_take_free(p, cls);
    if (!c) c = pool_carve(p, need, cls);
    if (!c) c = pool_grow(p, need, cls);
    pthread_mutex_unlock(&p->lock);
    if (!c) return NULL;
    c->next_free = NULL;
    return (unsigned char *)c + POOL_HDR;
}

/* Pinned when the pool has room, else pageable: the engine stages pageable
 * images through pinned buffers of its own (slower, never wrong). */
void *ts_pinned_pool_alloc(void *ctx, size_t bytes)
{
    void *ptr = ts_pinned_pool_alloc_pinned(ctx, bytes);
    if (ptr) return ptr;
    pool_chunk *c = malloc(POOL_HDR + bytes);
    if (!c) return NULL;
    c->magic = POOL_MAGIC_MALLOC;
    c->cls = -1;
    c->owner = ctx;
    c->next_free = NULL;
    return (unsigned char *)c + POOL_HDR;
}

void ts_pinned_pool_free(void *ctx, void *ptr)
{
    (void)ctx;
    if (!ptr) return;
    pool_chunk *c = (pool_chunk *)((unsigned char *)ptr - POOL_HDR);
    if (c->magic == POOL_MAGIC_MALLOC) {
        free(c);
        return;
    }
    if (c->magic != POOL_MAGIC_PINNED) return; /* not ours: leaking beats corrupting */
    pinned_pool *p = c->owner;
    pthread_mutex_lock(&p->lock);
    c->next_free = p->free_list[c->cls];
    p->free_list[c->cls] = c;
    pthread_mutex_unlock(&p->lock);
}

pinned_pool *ts_pinned_pool_create(size_t limit)
{
    pinned_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return NULL;
    }
    p->limit = limit;
    return p;
}

size_t ts_pinned_pool_bytes(pinned_pool *p)
{
    pthread_mutex_lock(&p->lock);
    size_t n = p->pinned_bytes;
    pthread_mutex_unlock(&p->lock);
    return n;
}

void ts_pinned_pool_destroy(pinned_pool *p)
{
    if (!p) return;
    for (int i = 0; i < p->n_blocks; i++) unpin_block(&p->blocks[i]);
    free(p->blocks);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

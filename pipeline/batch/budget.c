/* budget.c - the default memory budget of a run (--memory): the bytes of
 * images in flight, decoded to encoded, that admission may reserve. */
#include "tilestream.h"

#include <stdio.h>
#include <unistd.h>

/* A quarter of the RAM leaves the rest to the page cache (inputs are read
 * and outputs written through it) and to other programs; beyond 8 GiB more
 * images in flight buy no speed: 16 workers with 24 MP RGB photos hold
 * about 16 x 2 x 72 MB = 2.3 GB, and the GPU side a few images more. */
static uint64_t cgroup_limit(void)
{
    FILE *f = fopen("/sys/fs/cgroup/memory.max", "r");
    if (!f) f = fopen("/sys/fs/cgroup/memory/memory.limit_in_bytes", "r");
    if (!f) return 0;
    unsigned long long v = 0;
    int got = fscanf(f, "%llu", &v) == 1; /* "max" reads as nothing: no limit */
    fclose(f);
    return got ? (uint64_t)v : 0;
}

uint64_t ts_default_memory_budget(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    uint64_t ram = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)4 << 30;
    uint64_t cg = cgroup_limit();
    if (cg && cg < ram) ram = cg;
    uint64_t b = ram / 4, cap = (uint64_t)8 << 30;
    return b < cap ? b : cap;
}

/* check.h - the few macros every test uses. A failed CHECK prints where and
 * why, counts the failure and carries on; main returns check_exit(). */
#ifndef TS_CHECK_H
#define TS_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures = 0;
static int check_count = 0;

#define CHECK(cond) do { check_count++; if (!(cond)) { check_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } } while (0)

#define CHECK_MSG(cond, ...) do { check_count++; if (!(cond)) { check_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
    fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

#define CHECK_EQ_INT(a, b) do { long long va_ = (long long)(a), vb_ = (long long)(b); check_count++; \
    if (va_ != vb_) { check_failures++; fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", \
    __FILE__, __LINE__, #a, #b, va_, vb_); } } while (0)

#define CHECK_NEAR(a, b, tol) do { double va_ = (double)(a), vb_ = (double)(b); check_count++; \
    if (!(va_ - vb_ <= (tol) && vb_ - va_ <= (tol))) { check_failures++; \
    fprintf(stderr, "%s:%d: CHECK failed: %s ~ %s (%g vs %g, tol %g)\n", \
    __FILE__, __LINE__, #a, #b, va_, vb_, (double)(tol)); } } while (0)

/* A test that ran no check at all is a failure: it asserted nothing. */
static inline int check_exit(void)
{
    if (check_count == 0) { fprintf(stderr, "no checks ran\n"); return 1; }
    fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
    return check_failures ? 1 : 0;
}

/* Small deterministic random numbers for test inputs (xorshift64*). The
 * seed comes from TS_TEST_SEED or the clock, and is printed, so a failing
 * run can be repeated. */
static unsigned long long check_rng_state = 0;
static inline unsigned long long check_rand(void)
{
    unsigned long long x = check_rng_state;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    check_rng_state = x;
    return x * 2685821657736338717ull;
}
#include <time.h>
static inline void check_seed(void)
{
    const char *s = getenv("TS_TEST_SEED");
    unsigned long long seed = s ? strtoull(s, NULL, 0) : (unsigned long long)time(NULL) * 2654435761ull;
    if (seed == 0) seed = 1;
    check_rng_state = seed;
    fprintf(stderr, "TS_TEST_SEED=%llu\n", seed);
}

#endif

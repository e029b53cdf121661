/*
 * read_cost.c: deterministic per-call costs of the C ABI's reads, for docs/performance.md.
 * Linked against libmcpool.a with malloc/free wrapped (-Wl,--wrap=...), so it counts every
 * allocation the library and the caller make; minor page faults from getrusage; under
 * `valgrind --tool=callgrind --toggle-collect=calls` the instructions of the calls alone.
 *
 *   cc -O2 -Iinclude examples/c/read_cost.c target/release/libmcpool.a \
 *      -Wl,--wrap=malloc,--wrap=free,--wrap=realloc,--wrap=calloc,--wrap=posix_memalign \
 *      -lpthread -ldl -lm -o read_cost
 *   [THREADS=t] ./read_cost HOST:PORT MODE KEYS CALLS [small|bulk|letters]
 *
 * `bulk`: seed 001's value (30,800 bytes of "0 1 2 3 ..."); `letters`: the bench's other bulk
 * value (30,800 letters, about 160:1 under zlib); both stored compressed (the client's
 * default threshold). THREADS=t: t threads share the client, each making CALLS calls after
 * a warm-up (with the Rust example's THREADS, the C ABI's CPU against the Rust API's under
 * `perf stat -e task-clock`).
 *
 * MODE: get (mcpool_client_get + mcpool_item_free), get_into (malloc'd by the callback),
 * multi (mcpool_client_get_multi + mcpool_multi_get each + mcpool_multi_free), multi_into
 * (a malloc per value from the callback, freed after the call).
 */
#define _GNU_SOURCE
#include "mcpool.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <pthread.h>

static _Atomic long allocs;
void *__real_malloc(size_t);
void __real_free(void *);
void *__real_realloc(void *, size_t);
void *__real_calloc(size_t, size_t);
int __real_posix_memalign(void **, size_t, size_t);
void *__wrap_malloc(size_t n) { allocs++; return __real_malloc(n); }
void __wrap_free(void *p) { __real_free(p); }
void *__wrap_realloc(void *p, size_t n) { allocs++; return __real_realloc(p, n); }
void *__wrap_calloc(size_t a, size_t b) { allocs++; return __real_calloc(a, b); }
int __wrap_posix_memalign(void **p, size_t a, size_t n) { allocs++; return __real_posix_memalign(p, a, n); }

static long minflt(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

static void *one(void *ud, size_t len) { *(void **)ud = malloc(len ? len : 1); return *(void **)ud; }

struct many { void **bufs; };
static void *each(void *ud, size_t i, size_t len, uint32_t flags, uint64_t cas) {
    (void)flags; (void)cas;
    struct many *m = ud;
    m->bufs[i] = malloc(len ? len : 1);
    return m->bufs[i];
}

static const char *mode;
static size_t nk;
static const uint8_t **kp;
static size_t *kl;
static _Thread_local mcpool_status *st;
static _Thread_local void **bufs;

__attribute__((noinline)) static long calls(mcpool_client *c, long n) {
    long found = 0;
    for (long it = 0; it < n; it++) {
        if (!strcmp(mode, "get")) {
            mcpool_item *item;
            size_t k = it % nk;
            if (mcpool_client_get(c, kp[k], kl[k], &item) == MCPOOL_OK) {
                found += mcpool_item_len(item) > 0;
                mcpool_item_free(item);
            }
        } else if (!strcmp(mode, "get_into")) {
            void *buf = NULL;
            uint32_t flags;
            size_t k = it % nk;
            if (mcpool_client_get_into(c, kp[k], kl[k], one, &buf, &flags, NULL) == MCPOOL_OK)
                found++;
            free(buf);
        } else if (!strcmp(mode, "multi")) {
            mcpool_multi *m;
            if (mcpool_client_get_multi(c, kp, kl, nk, false, &m) == MCPOOL_OK) {
                for (size_t i = 0; i < nk; i++) {
                    const uint8_t *v; size_t len; uint32_t f; uint64_t cas;
                    if (mcpool_multi_get(m, i, &v, &len, &f, &cas) == MCPOOL_OK) found += len > 0;
                }
                mcpool_multi_free(m);
            }
        } else {
            struct many m = { bufs };
            memset(bufs, 0, nk * sizeof *bufs);
            mcpool_client_get_multi_into(c, kp, kl, nk, false, each, &m, st);
            for (size_t i = 0; i < nk; i++) {
                found += st[i] == MCPOOL_OK;
                free(bufs[i]);
            }
        }
    }
    return found;
}

static int nthreads;
static pthread_barrier_t warm, go;
struct job { mcpool_client *c; long n; long found; };

/* One thread: its own status and buffer arrays, a warm-up, then the measured calls. */
static void *run(void *arg) {
    struct job *j = arg;
    st = calloc(nk, sizeof *st);
    bufs = calloc(nk, sizeof *bufs);
    calls(j->c, 20);
    pthread_barrier_wait(&warm);
    pthread_barrier_wait(&go);
    j->found = calls(j->c, j->n);
    free(st);
    free(bufs);
    return NULL;
}

int main(int argc, char **argv) {
    const char *addr = argc > 1 ? argv[1] : "127.0.0.1:11211";
    mode = argc > 2 ? argv[2] : "multi";
    nk = argc > 3 ? strtoul(argv[3], 0, 10) : 100;
    long n = argc > 4 ? strtol(argv[4], 0, 10) : 1000;
    const char *shape = argc > 5 ? argv[5] : "small";
    int bulk = !strcmp(shape, "bulk"), letters = !strcmp(shape, "letters");
    mcpool_config *cfg;
    mcpool_client *c;
    if (mcpool_config_new(&cfg) || mcpool_config_add_server(cfg, addr, strlen(addr), 1) ||
        mcpool_client_new(cfg, &c)) {
        fprintf(stderr, "client: %s\n", mcpool_last_error_message());
        return 1;
    }
    mcpool_config_free(cfg);
    size_t vlen = bulk || letters ? 30800 : 40;
    char *value = malloc(vlen + 16);
    if (letters) {
        for (size_t i = 0; i < vlen; i++) value[i] = 'a' + (i * 7 + i / 13) % 26;
    } else if (bulk) {
        size_t at = 0;
        for (int i = 0; at < vlen; i++) at += snprintf(value + at, vlen + 16 - at, "%d ", i);
    } else {
        memset(value, 'v', vlen);
    }
    kp = calloc(nk, sizeof *kp);
    kl = calloc(nk, sizeof *kl);
    for (size_t i = 0; i < nk; i++) {
        char *k = malloc(32);
        kl[i] = snprintf(k, 32, "rc%c:%zu", shape[0], i);
        kp[i] = (const uint8_t *)k;
        if (mcpool_client_set(c, kp[i], kl[i], (const uint8_t *)value, vlen, 0, 0)) {
            fprintf(stderr, "set: %s\n", mcpool_last_error_message());
            return 1;
        }
    }
    const char *t = getenv("THREADS");
    nthreads = t ? atoi(t) : 1;
    if (nthreads < 1 || nthreads > 1000) nthreads = 1;
    pthread_barrier_init(&warm, NULL, nthreads + 1);
    pthread_barrier_init(&go, NULL, nthreads + 1);
    pthread_t *th = calloc(nthreads, sizeof *th);
    struct job *jobs = calloc(nthreads, sizeof *jobs);
    for (int i = 0; i < nthreads; i++) {
        jobs[i] = (struct job){c, n, 0};
        pthread_create(&th[i], NULL, run, &jobs[i]);
    }
    pthread_barrier_wait(&warm);
    long a0 = allocs, f0 = minflt();
    pthread_barrier_wait(&go);
    long found = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        found += jobs[i].found;
    }
    long a1 = allocs, f1 = minflt();
    n *= nthreads;
    printf("mode=%s keys=%zu calls=%ld value=%s found=%ld allocs/call=%.1f minflt/call=%.2f\n",
           mode, nk, n, shape, found, (double)(a1 - a0) / n, (double)(f1 - f0) / n);
    mcpool_client_free(c);
    return 0;
}

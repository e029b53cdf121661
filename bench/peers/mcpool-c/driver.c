/* mcpool bench peer: mcpool through its C ABI (include/mcpool.h, libmcpool.a linked in).
 * Protocol: ../PROTOCOL.md. usage: driver HOST:PORT
 * Configured as the Rust API contestant (src/bin/mcpool/bench/rust_api.rs), so the two
 * differ only by the C ABI: text protocol, TCP_NODELAY (default), pool max_size 20 (POOL for
 * mix), min_idle 1, one client shared by every thread; bulk: zlib format (flag 8), threshold
 * 30 KiB. Gets use mcpool_client_get (an item per hit, freed at once). */
#define _POSIX_C_SOURCE 200809L
#include "mcpool.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *addr;

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint8_t *make_value(size_t n) {
    uint8_t *v = malloc(n + 1);
    for (size_t i = 0; i < n; i++) v[i] = (uint8_t)('a' + (i * 7 + i / 13) % 26);
    return v;
}

/* The value of PROTOCOL.md by kind: "letters", or "digits" ("0 1 2 3 ...", cut at n);
   NULL for an unknown kind. */
static uint8_t *make_value_kind(size_t n, const char *kind) {
  if (!strcmp(kind, "letters")) return make_value(n);
  if (strcmp(kind, "digits")) return NULL;
  char *v = malloc(n + 24);
  size_t len = 0;
  for (unsigned long i = 0; len < n; i++) len += (size_t)sprintf(v + len, "%lu ", i);
  v[n] = 0;
  return (uint8_t *)v;
}

/* The client for a shape of work (pool size, compression), kept while the shape repeats. */
static mcpool_client *client;
static unsigned long client_pool;
static int client_compress = -1;

static mcpool_client *get_client(unsigned long pool, int compress) {
    if (client && client_pool == pool && client_compress == compress) return client;
    mcpool_client_free(client);
    client = NULL;
    mcpool_config *cfg = NULL;
    if (mcpool_config_new(&cfg) != MCPOOL_OK ||
        mcpool_config_add_server(cfg, addr, strlen(addr), 1) != MCPOOL_OK ||
        mcpool_config_set_max_size(cfg, (uint32_t)(pool ? pool : 1)) != MCPOOL_OK ||
        mcpool_config_set_min_idle(cfg, 1) != MCPOOL_OK ||
        mcpool_config_set_compression(cfg, compress != 0) != MCPOOL_OK ||
        mcpool_config_set_compression_format(cfg, "zlib", 4) != MCPOOL_OK ||
        mcpool_client_new(cfg, &client) != MCPOOL_OK) {
        fprintf(stderr, "mcpool-c: %s\n", mcpool_last_error_message());
        client = NULL;
    }
    mcpool_config_free(cfg);
    client_pool = pool, client_compress = compress;
    return client;
}

static int do_get(mcpool_client *c, const char *k, size_t kl) {
    mcpool_item *item = NULL;
    if (mcpool_client_get(c, (const uint8_t *)k, kl, &item) != MCPOOL_OK) return 0;
    mcpool_item_free(item);
    return 1;
}

static int do_mget(mcpool_client *c, const uint8_t **keys, const size_t *lens, size_t n) {
    mcpool_multi *m = NULL;
    if (mcpool_client_get_multi(c, keys, lens, n, false, &m) != MCPOOL_OK) return 0;
    int all = 1;
    for (size_t i = 0; i < n && all; i++) {
        const uint8_t *v;
        size_t vl;
        uint32_t fl;
        uint64_t cas;
        all = mcpool_multi_get(m, i, &v, &vl, &fl, &cas) == MCPOOL_OK;
    }
    mcpool_multi_free(m);
    return all;
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rnd(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (*s * 0x2545F4914F6CDD1Dull) >> 32;
}

struct mix {
    mcpool_client *c;
    unsigned long ops, size, keyspace, getpct, mget;
    const char *prefix;
    const uint8_t *value;
    pthread_barrier_t *bar;
    unsigned seed;
    uint32_t *lat;
    uint64_t get_ns, gets, set_ns, sets, errors;
    uint64_t started, ended; /* this thread's first and last instant, for the wall time */
};

static void *mix_thread(void *arg) {
    struct mix *x = arg;
    uint64_t s = (uint64_t)x->seed * 0x9E3779B97F4A7C15ull | 1;
    size_t nk = x->mget ? x->mget : 1;
    char *keybuf = malloc(nk * 256);
    const uint8_t **keys = malloc(nk * sizeof *keys);
    size_t *lens = malloc(nk * sizeof *lens);
    for (size_t i = 0; i < nk; i++) keys[i] = (const uint8_t *)(keybuf + i * 256);
    pthread_barrier_wait(x->bar);
    x->started = now_ns();
    for (unsigned long o = 0; o < x->ops; o++) {
        int get = rnd(&s) % 100 < x->getpct;
        uint64_t t0 = now_ns(), first = rnd(&s) % x->keyspace;
        int ok;
        if (get) {
            for (size_t i = 0; i < nk; i++)
                lens[i] = (size_t)snprintf(keybuf + i * 256, 256, "%s%lu", x->prefix,
                                           (unsigned long)((first + i) % x->keyspace));
            ok = nk == 1 ? do_get(x->c, keybuf, lens[0]) : do_mget(x->c, keys, lens, nk);
        } else {
            lens[0] = (size_t)snprintf(keybuf, 256, "%s%lu", x->prefix, (unsigned long)first);
            ok = mcpool_client_set(x->c, keys[0], lens[0], x->value, x->size, 0, 0) == MCPOOL_OK;
        }
        uint64_t d = now_ns() - t0;
        x->lat[o] = d > 0xffffffffu ? 0xffffffffu : (uint32_t)d;
        if (get) x->get_ns += d, x->gets++;
        else x->set_ns += d, x->sets++;
        if (!ok) x->errors++;
    }
    x->ended = now_ns();
    free(keybuf);
    free(keys);
    free(lens);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: driver HOST:PORT\n");
        return 2;
    }
    addr = argv[1];
    if (!get_client(20, 0)) return 1;
    printf("ready mcpool %s (C ABI)\n", mcpool_version());
    fflush(stdout);
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        char cmd[16], op[64], prefix[256], vkind[16];
        unsigned long n, size, slice, k, calls;
        if (sscanf(line, "%15s", cmd) != 1) continue;
        if (!strcmp(cmd, "quit")) break;
        if (!strcmp(cmd, "seq") &&
            sscanf(line, "seq %63s %lu %lu %255s %lu", op, &n, &size, prefix, &slice) == 5) {
            mcpool_client *c = get_client(20, 0);
            if (!c) { printf("err %s\n", mcpool_last_error_message()); fflush(stdout); continue; }
            uint8_t *v = make_value(size);
            char key[300];
            int o = !strcmp(op, "set") ? 0 : !strcmp(op, "add") ? 1 : !strcmp(op, "replace") ? 2
                  : !strcmp(op, "delete") ? 3 : 4;
            char *slices = malloc(32 * (n / (slice ? slice : 1) + 2));
            size_t sl = 0;
            slices[0] = 0;
            uint64_t errors = 0, t0 = now_ns(), mark = t0;
            for (unsigned long i = 0; i < n; i++) {
                size_t kl = (size_t)snprintf(key, sizeof key, "%s%lu", prefix, i);
                const uint8_t *kp = (const uint8_t *)key;
                int ok;
                switch (o) {
                case 0: ok = mcpool_client_set(c, kp, kl, v, size, 0, 0) == MCPOOL_OK; break;
                case 1: ok = mcpool_client_add(c, kp, kl, v, size, 0, 0) == MCPOOL_OK; break;
                case 2: ok = mcpool_client_replace(c, kp, kl, v, size, 0, 0) == MCPOOL_OK; break;
                case 3: ok = mcpool_client_delete(c, kp, kl) == MCPOOL_OK; break;
                default: ok = do_get(c, key, kl);
                }
                if (!ok) errors++;
                if (slice && (i + 1) % slice == 0) {
                    uint64_t t = now_ns();
                    sl += (size_t)sprintf(slices + sl, "%s%llu", sl ? "," : "",
                                          (unsigned long long)(t - mark));
                    mark = t;
                }
            }
            uint64_t ns = now_ns() - t0;
            printf("ok ns=%llu errors=%llu", (unsigned long long)ns, (unsigned long long)errors);
            if (sl) printf(" slices=%s", slices);
            printf("\n");
            free(slices);
            free(v);
        } else if (!strcmp(cmd, "mget") && sscanf(line, "mget %lu %lu %255s", &k, &calls, prefix) == 3) {
            mcpool_client *c = get_client(20, 0);
            if (!c) { printf("err %s\n", mcpool_last_error_message()); fflush(stdout); continue; }
            char *keybuf = malloc(k * 300 + 1);
            const uint8_t **keys = malloc((k + 1) * sizeof *keys);
            size_t *lens = malloc((k + 1) * sizeof *lens);
            for (unsigned long i = 0; i < k; i++) {
                keys[i] = (const uint8_t *)(keybuf + i * 300);
                lens[i] = (size_t)snprintf(keybuf + i * 300, 300, "%s%lu", prefix, i);
            }
            uint64_t errors = 0, t0 = now_ns();
            for (unsigned long i = 0; i < calls; i++)
                if (!do_mget(c, keys, lens, k)) errors++;
            printf("ok ns=%llu errors=%llu\n", (unsigned long long)(now_ns() - t0),
                   (unsigned long long)errors);
            free(keybuf);
            free(keys);
            free(lens);
        } else if (!strcmp(cmd, "fill")) {
            unsigned long ks, comp;
            if (sscanf(line, "fill %lu %lu %lu %255s %15s", &ks, &size, &comp, prefix, vkind) != 5) {
                printf("err bad fill\n");
                fflush(stdout);
                continue;
            }
            mcpool_client *c = get_client(20, (int)comp);
            if (!c) { printf("err %s\n", mcpool_last_error_message()); fflush(stdout); continue; }
            uint8_t *v = make_value_kind(size, vkind);
            if (!v) { printf("err unknown value kind %s\n", vkind); fflush(stdout); continue; }
            char key[300];
            uint64_t errors = 0, t0 = now_ns();
            for (unsigned long i = 0; i < ks; i++) {
                size_t kl = (size_t)snprintf(key, sizeof key, "%s%lu", prefix, i);
                if (mcpool_client_set(c, (const uint8_t *)key, kl, v, size, 0, 0) != MCPOOL_OK)
                    errors++;
            }
            printf("ok ns=%llu errors=%llu\n", (unsigned long long)(now_ns() - t0),
                   (unsigned long long)errors);
            free(v);
        } else if (!strcmp(cmd, "mix")) {
            unsigned long th, ops, ks, gp, mg, pool, comp;
            if (sscanf(line, "mix %lu %lu %lu %lu %lu %lu %lu %lu %255s %15s", &th, &ops, &size, &ks,
                       &gp, &mg, &pool, &comp, prefix, vkind) != 10 || th == 0 || ks == 0) {
                printf("err bad mix\n");
                fflush(stdout);
                continue;
            }
            mcpool_client *c = get_client(pool, (int)comp);
            if (!c) { printf("err %s\n", mcpool_last_error_message()); fflush(stdout); continue; }
            uint8_t *v = make_value_kind(size, vkind);
            if (!v) { printf("err unknown value kind %s\n", vkind); fflush(stdout); continue; }
            pthread_barrier_t bar;
            pthread_barrier_init(&bar, NULL, (unsigned)th + 1);
            struct mix *xs = calloc(th, sizeof *xs);
            pthread_t *tids = calloc(th, sizeof *tids);
            pthread_attr_t attr;
            pthread_attr_init(&attr);
            pthread_attr_setstacksize(&attr, 256 * 1024);
            for (unsigned long t = 0; t < th; t++) {
                xs[t] = (struct mix){c, ops, size, ks, gp, mg, prefix, v, &bar, (unsigned)t + 1,
                                     malloc(ops * sizeof(uint32_t) + 4), 0, 0, 0, 0, 0};
                pthread_create(&tids[t], &attr, mix_thread, &xs[t]);
            }
            pthread_barrier_wait(&bar);
            for (unsigned long t = 0; t < th; t++) pthread_join(tids[t], NULL);
            /* Wall time from the first worker's start to the last one's end: the main thread may
               be scheduled long after the barrier opens, behind hundreds of workers. */
            uint64_t first = UINT64_MAX, last = 0;
            for (unsigned long t = 0; t < th; t++) {
                if (xs[t].started < first) first = xs[t].started;
                if (xs[t].ended > last) last = xs[t].ended;
            }
            uint64_t ns = last > first ? last - first : 0;
            uint32_t *all = malloc(th * ops * sizeof(uint32_t) + 4);
            uint64_t gns = 0, gs = 0, sns = 0, ss = 0, errs = 0;
            for (unsigned long t = 0; t < th; t++) {
                memcpy(all + t * ops, xs[t].lat, ops * sizeof(uint32_t));
                gns += xs[t].get_ns, gs += xs[t].gets, sns += xs[t].set_ns, ss += xs[t].sets;
                errs += xs[t].errors;
                free(xs[t].lat);
            }
            size_t tot = th * ops;
            qsort(all, tot, sizeof(uint32_t), cmp_u32);
#define PCT(q) (tot ? all[(size_t)((q) / 100.0 * tot - 1e-9 < 0 ? 0 : ((q) / 100.0 * tot - 1e-9))] / 1000.0 : 0)
            printf("ok ns=%llu errors=%llu lat=%.1f,%.1f,%.1f", (unsigned long long)ns,
                   (unsigned long long)errs, PCT(50), PCT(99), PCT(99.9));
            if (gs) printf(" get_us=%.2f", gns / 1000.0 / gs);
            if (ss) printf(" set_us=%.2f", sns / 1000.0 / ss);
            printf("\n");
            free(all);
            free(xs);
            free(tids);
            free(v);
            pthread_attr_destroy(&attr);
            pthread_barrier_destroy(&bar);
        } else {
            printf("err unknown command\n");
        }
        fflush(stdout);
    }
    mcpool_client_free(client);
    return 0;
}

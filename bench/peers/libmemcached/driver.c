/* mcpool bench peer: libmemcached (text or binary protocol). Protocol: ../PROTOCOL.md.
 * usage: driver HOST:PORT text|binary
 * Configuration: TCP_NODELAY on; for threads, libmemcached's own pool (memcached_pool,
 * blocking pop), as its documentation recommends for threaded programs; zlib by hand
 * (libmemcached has no compression): compress2 at Z_DEFAULT_COMPRESSION (zlib's default,
 * level 6, what compress() uses), flag 8, as pylibmc does. */
#include <libmemcached/memcached.h>
#include <libmemcachedutil-1.0/pool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

static char server_cfg[512];
static int binary;

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static char *make_value(size_t n) {
  char *v = malloc(n + 1);
  for (size_t i = 0; i < n; i++) v[i] = (char)('a' + (i * 7 + i / 13) % 26);
  v[n] = 0;
  return v;
}

/* The value of PROTOCOL.md by kind: "letters", or "digits" ("0 1 2 3 ...", cut at n);
   NULL for an unknown kind. */
static char *make_value_kind(size_t n, const char *kind) {
  if (!strcmp(kind, "letters")) return make_value(n);
  if (strcmp(kind, "digits")) return NULL;
  char *v = malloc(n + 24);
  size_t len = 0;
  for (unsigned long i = 0; len < n; i++) len += (size_t)sprintf(v + len, "%lu ", i);
  v[n] = 0;
  return (char *)v;
}

static memcached_st *new_client(void) {
  memcached_st *m = memcached(server_cfg, strlen(server_cfg));
  if (!m) { fprintf(stderr, "libmemcached: bad config %s\n", server_cfg); exit(1); }
  return m;
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* A store, compressing when asked (value >= 30 KiB). */
static int do_set(memcached_st *m, const char *k, size_t kl, const char *v, size_t vl, int compress) {
  if (compress && vl >= 30 * 1024) {
    uLongf cl = compressBound(vl);
    char *c = malloc(cl);
    compress2((Bytef *)c, &cl, (const Bytef *)v, vl, Z_DEFAULT_COMPRESSION);
    memcached_return_t rc = memcached_set(m, k, kl, c, cl, 0, 8);
    free(c);
    return rc == MEMCACHED_SUCCESS;
  }
  return memcached_set(m, k, kl, v, vl, 0, 0) == MEMCACHED_SUCCESS;
}

/* mget of n keys; returns the number of hits, inflating compressed values. */
static int do_mget(memcached_st *m, const char **keys, size_t *lens, size_t n, size_t vsize) {
  if (memcached_mget(m, keys, lens, n) != MEMCACHED_SUCCESS) return -1;
  memcached_result_st res;
  memcached_result_create(m, &res);
  memcached_return_t rc;
  int hits = 0;
  while (memcached_fetch_result(m, &res, &rc)) {
    if (memcached_result_flags(&res) & 8) {
      uLongf dl = vsize;
      char *d = malloc(vsize ? vsize : 1);
      if (uncompress((Bytef *)d, &dl, (const Bytef *)memcached_result_value(&res),
                     memcached_result_length(&res)) == Z_OK)
        hits++;
      free(d);
    } else {
      hits++;
    }
  }
  memcached_result_free(&res);
  return hits;
}

struct mix {
  memcached_pool_st *pool;
  unsigned long ops, size, keyspace, getpct, mget;
  int compress;
  const char *prefix;
  const char *value;
  pthread_barrier_t *bar;
  /* per thread */
  unsigned seed;
  uint32_t *lat;
  uint64_t get_ns, gets, set_ns, sets, errors;
  uint64_t started, ended; /* this thread's first and last instant, for the wall time */
};

static uint64_t rnd(uint64_t *s) {
  *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
  return (*s * 0x2545F4914F6CDD1Dull) >> 32;
}

static void *mix_thread(void *arg) {
  struct mix *x = arg;
  uint64_t s = (uint64_t)x->seed * 0x9E3779B97F4A7C15ull | 1;
  size_t nk = x->mget ? x->mget : 1;
  char **keys = malloc(nk * sizeof(char *));
  size_t *lens = malloc(nk * sizeof(size_t));
  for (size_t i = 0; i < nk; i++) keys[i] = malloc(256);
  pthread_barrier_wait(x->bar);
  x->started = now_ns();
  for (unsigned long o = 0; o < x->ops; o++) {
    int get = rnd(&s) % 100 < x->getpct;
    uint64_t t0 = now_ns();
    memcached_return_t rc;
    /* Wait (up to 10 s) for a free client rather than fail: a NULL wait never blocks. */
    struct timespec wait = {10, 0};
    memcached_st *m = memcached_pool_fetch(x->pool, &wait, &rc);
    int ok = 0;
    if (m) {
      uint64_t first = rnd(&s) % x->keyspace;
      if (get) {
        for (size_t i = 0; i < nk; i++)
          lens[i] = (size_t)snprintf(keys[i], 256, "%s%lu", x->prefix,
                                     (unsigned long)((first + i) % x->keyspace));
        if (nk == 1) {
          size_t vl; uint32_t fl;
          char *v = memcached_get(m, keys[0], lens[0], &vl, &fl, &rc);
          ok = v != NULL;
          free(v);
        } else {
          ok = do_mget(m, (const char **)keys, lens, nk, x->size) == (int)nk;
        }
      } else {
        lens[0] = (size_t)snprintf(keys[0], 256, "%s%lu", x->prefix, (unsigned long)first);
        ok = do_set(m, keys[0], lens[0], x->value, x->size, x->compress);
      }
      memcached_pool_release(x->pool, m);
    }
    uint64_t d = now_ns() - t0;
    x->lat[o] = d > 0xffffffffu ? 0xffffffffu : (uint32_t)d;
    if (get) { x->get_ns += d; x->gets++; } else { x->set_ns += d; x->sets++; }
    if (!ok) x->errors++;
  }
  for (size_t i = 0; i < nk; i++) free(keys[i]);
  x->ended = now_ns();
  free(keys); free(lens);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: driver HOST:PORT text|binary\n"); return 2; }
  binary = strcmp(argv[2], "binary") == 0;
  snprintf(server_cfg, sizeof server_cfg, "--SERVER=%s --TCP-NODELAY%s", argv[1],
           binary ? " --BINARY-PROTOCOL" : "");
  memcached_st *m = new_client();
  printf("ready libmemcached %s %s\n", memcached_lib_version(), binary ? "binary" : "text");
  fflush(stdout);
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    char cmd[16], a[64], prefix[256], vkind[16];
    unsigned long n, size, slice, k, calls;
    if (sscanf(line, "%15s", cmd) != 1) continue;
    if (!strcmp(cmd, "quit")) break;
    if (!strcmp(cmd, "seq") && sscanf(line, "seq %63s %lu %lu %255s %lu", a, &n, &size, prefix, &slice) == 5) {
      char *v = make_value(size), key[300];
      uint64_t errors = 0, t0 = now_ns(), mark = t0;
      printf("ok");
      char *slices = malloc(32 * (n / (slice ? slice : 1) + 2));
      size_t sl = 0;
      slices[0] = 0;
      for (unsigned long i = 0; i < n; i++) {
        size_t kl = (size_t)snprintf(key, sizeof key, "%s%lu", prefix, i);
        memcached_return_t rc;
        if (!strcmp(a, "set")) rc = memcached_set(m, key, kl, v, size, 0, 0);
        else if (!strcmp(a, "add")) rc = memcached_add(m, key, kl, v, size, 0, 0);
        else if (!strcmp(a, "replace")) rc = memcached_replace(m, key, kl, v, size, 0, 0);
        else if (!strcmp(a, "delete")) rc = memcached_delete(m, key, kl, 0);
        else {
          size_t vl; uint32_t fl;
          char *r = memcached_get(m, key, kl, &vl, &fl, &rc);
          if (!r) rc = MEMCACHED_NOTFOUND;
          free(r);
        }
        if (rc != MEMCACHED_SUCCESS) errors++;
        if (slice && (i + 1) % slice == 0) {
          uint64_t t = now_ns();
          sl += (size_t)sprintf(slices + sl, "%s%llu", sl ? "," : "", (unsigned long long)(t - mark));
          mark = t;
        }
      }
      uint64_t ns = now_ns() - t0;
      printf(" ns=%llu errors=%llu", (unsigned long long)ns, (unsigned long long)errors);
      if (sl) printf(" slices=%s", slices);
      printf("\n");
      free(slices); free(v);
    } else if (!strcmp(cmd, "mget") && sscanf(line, "mget %lu %lu %255s", &k, &calls, prefix) == 3) {
      char **keys = malloc(k * sizeof(char *));
      size_t *lens = malloc(k * sizeof(size_t));
      for (unsigned long i = 0; i < k; i++) {
        keys[i] = malloc(300);
        lens[i] = (size_t)snprintf(keys[i], 300, "%s%lu", prefix, i);
      }
      uint64_t errors = 0, t0 = now_ns();
      for (unsigned long c = 0; c < calls; c++)
        if (do_mget(m, (const char **)keys, lens, k, 0) != (int)k) errors++;
      uint64_t ns = now_ns() - t0;
      printf("ok ns=%llu errors=%llu\n", (unsigned long long)ns, (unsigned long long)errors);
      for (unsigned long i = 0; i < k; i++) free(keys[i]);
      free(keys); free(lens);
    } else if (!strcmp(cmd, "fill")) {
      unsigned long ks, comp;
      if (sscanf(line, "fill %lu %lu %lu %255s %15s", &ks, &size, &comp, prefix, vkind) != 5) { printf("err bad fill\n"); fflush(stdout); continue; }
      char *v = make_value_kind(size, vkind), key[300];
      if (!v) { printf("err unknown value kind %s\n", vkind); fflush(stdout); continue; }
      uint64_t errors = 0, t0 = now_ns();
      for (unsigned long i = 0; i < ks; i++) {
        size_t kl = (size_t)snprintf(key, sizeof key, "%s%lu", prefix, i);
        if (!do_set(m, key, kl, v, size, (int)comp)) errors++;
      }
      printf("ok ns=%llu errors=%llu\n", (unsigned long long)(now_ns() - t0), (unsigned long long)errors);
      free(v);
    } else if (!strcmp(cmd, "mix")) {
      unsigned long th, ops, ks, gp, mg, pool, comp;
      if (sscanf(line, "mix %lu %lu %lu %lu %lu %lu %lu %lu %255s %15s", &th, &ops, &size, &ks, &gp, &mg,
                 &pool, &comp, prefix, vkind) != 10) { printf("err bad mix\n"); fflush(stdout); continue; }
      memcached_st *master = new_client();
      memcached_pool_st *p = memcached_pool_create(master, 1, (int)pool);
      memcached_pool_behavior_set(p, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
      char *v = make_value_kind(size, vkind);
      if (!v) { printf("err unknown value kind %s\n", vkind); fflush(stdout); continue; }
      pthread_barrier_t bar;
      pthread_barrier_init(&bar, NULL, (unsigned)th + 1);
      struct mix *xs = calloc(th, sizeof *xs);
      pthread_t *tids = calloc(th, sizeof *tids);
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setstacksize(&attr, 256 * 1024);
      for (unsigned long t = 0; t < th; t++) {
        xs[t] = (struct mix){p, ops, size, ks, gp, mg, (int)comp, prefix, v, &bar, (unsigned)t + 1,
                             malloc(ops * sizeof(uint32_t)), 0, 0, 0, 0, 0};
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
        gns += xs[t].get_ns; gs += xs[t].gets; sns += xs[t].set_ns; ss += xs[t].sets; errs += xs[t].errors;
        free(xs[t].lat);
      }
      size_t tot = th * ops;
      qsort(all, tot, sizeof(uint32_t), cmp_u32);
#define PCT(q) (tot ? all[(size_t)((q) / 100.0 * tot - 1e-9 < 0 ? 0 : ((q) / 100.0 * tot - 1e-9))] / 1000.0 : 0)
      printf("ok ns=%llu errors=%llu lat=%.1f,%.1f,%.1f", (unsigned long long)ns, (unsigned long long)errs,
             PCT(50), PCT(99), PCT(99.9));
      if (gs) printf(" get_us=%.2f", gns / 1000.0 / gs);
      if (ss) printf(" set_us=%.2f", sns / 1000.0 / ss);
      printf("\n");
      free(all); free(xs); free(tids); free(v);
      pthread_barrier_destroy(&bar);
      memcached_pool_destroy(p);
      memcached_free(master);
    } else {
      printf("err unknown command\n");
    }
    fflush(stdout);
  }
  memcached_free(m);
  return 0;
}

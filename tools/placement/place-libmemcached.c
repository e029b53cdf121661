/*
 * Places keys with the real libmemcached and prints KEY<TAB>HOST:PORT per key, in input
 * order. It asks the library directly (memcached_generate_hash: the index of the server a
 * key goes to); no server has to run.
 *
 *   place-libmemcached MODE H:P|/SOCKET/PATH,... [W,W,...|-] < keys
 *   (a socket path is added with memcached_server_add_unix_socket_with_weight)
 *   MODE: modula | modula-crc (modula + MEMCACHED_HASH_CRC) | ketama (MEMCACHED_BEHAVIOR_KETAMA) | ketama-weighted
 *         (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED) | consistent | ketama-spy
 *         (MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY) | weighted-distribution
 *         (MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED)
 *       | set:NAME=VALUE,... (memcached_behavior_set calls in this order, after the servers are
 *         added: hash=md5|crc|fnv1_64|fnv1a_64|fnv1_32|fnv1a_32|hsieh|murmur|jenkins|default,
 *         ketama=0|1, ketama_weighted=0|1, distribution=modula|consistent|consistent_ketama|
 *         consistent_ketama_spy|consistent_weighted)
 *       | config:WORDS (a configuration string given to memcached(): WORDS with the first
 *         "{S}" replaced by the servers as --SERVER=H:P/?W or --SOCKET="PATH"/?W words)
 *
 * Build: cc -O2 -o place-libmemcached place-libmemcached.c -lmemcached
 */
#include <libmemcached/memcached.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct word {
  const char *name;
  uint64_t value;
};

static const struct word hashes[] = {
    {"default", MEMCACHED_HASH_DEFAULT}, {"md5", MEMCACHED_HASH_MD5},
    {"crc", MEMCACHED_HASH_CRC}, {"fnv1_64", MEMCACHED_HASH_FNV1_64},
    {"fnv1a_64", MEMCACHED_HASH_FNV1A_64}, {"fnv1_32", MEMCACHED_HASH_FNV1_32},
    {"fnv1a_32", MEMCACHED_HASH_FNV1A_32}, {"hsieh", MEMCACHED_HASH_HSIEH},
    {"murmur", MEMCACHED_HASH_MURMUR}, {"jenkins", MEMCACHED_HASH_JENKINS}, {NULL, 0}};

static const struct word distributions[] = {
    {"modula", MEMCACHED_DISTRIBUTION_MODULA},
    {"consistent", MEMCACHED_DISTRIBUTION_CONSISTENT},
    {"consistent_ketama", MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA},
    {"consistent_ketama_spy", MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY},
    {"consistent_weighted", MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED},
    {NULL, 0}};

static uint64_t lookup(const struct word *w, const char *name)
{
  for (; w->name; w++)
    if (strcmp(w->name, name) == 0)
      return w->value;
  fprintf(stderr, "unknown value %s\n", name);
  exit(2);
}

static void check(memcached_return_t rc, const char *what)
{
  if (rc != MEMCACHED_SUCCESS) {
    fprintf(stderr, "%s: %s\n", what, memcached_strerror(NULL, rc));
    exit(1);
  }
}

static void print_places(memcached_st *memc)
{
  char line[4096];
  while (fgets(line, sizeof line, stdin)) {
    size_t n = strlen(line);
    if (n && line[n - 1] == '\n')
      line[--n] = 0;
    if (!n)
      continue;
    uint32_t idx = memcached_generate_hash(memc, line, n);
    const memcached_instance_st *inst = memcached_server_instance_by_position(memc, idx);
    if (memcached_server_name(inst)[0] == '/')
      printf("%s\t%s\n", line, memcached_server_name(inst));
    else
      printf("%s\t%s:%u\n", line, memcached_server_name(inst),
             (unsigned)memcached_server_port(inst));
  }
}

/* config: mode: the servers written into the configuration string at "{S}". */
static int by_config(const char *words, const char *servers_arg, const char *weights_arg)
{
  char conf[65536];
  size_t at = 0;
  const char *mark = strstr(words, "{S}");
  if (!mark) {
    fprintf(stderr, "config: no {S} in %s\n", words);
    return 2;
  }
  at += (size_t)snprintf(conf + at, sizeof conf - at, "%.*s", (int)(mark - words), words);
  char *servers = strdup(servers_arg), *save = NULL, *wsave = NULL;
  char *weights = strcmp(weights_arg, "-") != 0 ? strdup(weights_arg) : NULL;
  char *ws = weights ? strtok_r(weights, ",", &wsave) : NULL;
  int first = 1;
  for (char *s = strtok_r(servers, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
    unsigned w = ws ? (unsigned)atoi(ws) : 1;
    if (weights)
      ws = strtok_r(NULL, ",", &wsave);
    at += (size_t)snprintf(conf + at, sizeof conf - at, s[0] == '/' ? "%s--SOCKET=\"%s\"/?%u"
                                                                   : "%s--SERVER=%s/?%u",
                           first ? "" : " ", s, w);
    first = 0;
  }
  snprintf(conf + at, sizeof conf - at, "%s", mark + 3);
  char err[1024];
  if (libmemcached_check_configuration(conf, strlen(conf), err, sizeof err) != MEMCACHED_SUCCESS) {
    fprintf(stderr, "config %s: %s\n", conf, err);
    return 1;
  }
  memcached_st *memc = memcached(conf, strlen(conf));
  if (!memc) {
    fprintf(stderr, "config %s: memcached() failed\n", conf);
    return 1;
  }
  print_places(memc);
  memcached_free(memc);
  free(servers);
  free(weights);
  return 0;
}

int main(int argc, char **argv)
{
  if (argc < 3) {
    fprintf(stderr, "usage: %s MODE H:P,... [W,...|-] < keys\n", argv[0]);
    return 2;
  }
  const char *mode = argv[1];
  if (strncmp(mode, "config:", 7) == 0)
    return by_config(mode + 7, argv[2], argc > 3 ? argv[3] : "-");
  memcached_st *memc = memcached_create(NULL);
  char *servers = strdup(argv[2]);
  char *weights = argc > 3 && strcmp(argv[3], "-") != 0 ? strdup(argv[3]) : NULL;
  char *ws = NULL, *wsave = NULL, *save = NULL;
  if (weights)
    ws = strtok_r(weights, ",", &wsave);
  for (char *s = strtok_r(servers, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
    char *colon = strchr(s, ':');
    unsigned port = 11211;
    if (colon) {
      *colon = 0;
      port = (unsigned)atoi(colon + 1);
    }
    uint32_t w = ws ? (uint32_t)atoi(ws) : 1;
    if (weights)
      ws = strtok_r(NULL, ",", &wsave);
    if (s[0] == '/')
      check(memcached_server_add_unix_socket_with_weight(memc, s, w), "server_add_unix_socket");
    else
      check(memcached_server_add_with_weight(memc, s, (in_port_t)port, w), "server_add");
  }
  if (strncmp(mode, "set:", 4) == 0) {
    char *list = strdup(mode + 4), *lsave = NULL;
    for (char *t = strtok_r(list, ",", &lsave); t; t = strtok_r(NULL, ",", &lsave)) {
      char *eq = strchr(t, '=');
      if (!eq) {
        fprintf(stderr, "bad behavior %s\n", t);
        return 2;
      }
      *eq = 0;
      const char *v = eq + 1;
      memcached_return_t rc;
      if (strcmp(t, "hash") == 0)
        rc = memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_HASH, lookup(hashes, v));
      else if (strcmp(t, "ketama") == 0)
        rc = memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA, (uint64_t)atoi(v));
      else if (strcmp(t, "ketama_weighted") == 0)
        rc = memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, (uint64_t)atoi(v));
      else if (strcmp(t, "distribution") == 0)
        rc = memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                    lookup(distributions, v));
      else {
        fprintf(stderr, "unknown behavior %s\n", t);
        return 2;
      }
      check(rc, t);
    }
    free(list);
  } else if (strcmp(mode, "modula") == 0) {
    check(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                 MEMCACHED_DISTRIBUTION_MODULA), "modula");
  } else if (strcmp(mode, "modula-crc") == 0) {
    check(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                 MEMCACHED_DISTRIBUTION_MODULA), "modula");
    check(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_HASH, MEMCACHED_HASH_CRC), "crc");
  } else if (strcmp(mode, "ketama") == 0) {
    check(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA, 1), "ketama");
  } else if (strcmp(mode, "ketama-weighted") == 0) {
    check(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1), "ketama_weighted");
  } else if (strcmp(mode, "consistent") == 0) {
    check(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                 MEMCACHED_DISTRIBUTION_CONSISTENT), "consistent");
  } else if (strcmp(mode, "ketama-spy") == 0) {
    check(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                 MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA_SPY), "ketama_spy");
  } else if (strcmp(mode, "weighted-distribution") == 0) {
    check(memcached_behavior_set(memc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                                 MEMCACHED_DISTRIBUTION_CONSISTENT_WEIGHTED), "weighted");
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  print_places(memc);
  memcached_free(memc);
  free(servers);
  free(weights);
  return 0;
}

/*
 * test_mcpool.c: exercises every function of include/mcpool.h against a real memcached,
 * plus bad input (NULL handles, keys and outputs; empty, 251-byte and huge keys; huge
 * values; indexes out of range), 32 threads sharing one client, and fork().
 *
 * Usage: test_mcpool [host:port]   (default: $MCPOOL_TEST_SERVER)
 * Exit status 0 when every check passed. Prints "N passed, N failed" last.
 */
#define _POSIX_C_SOURCE 200809L
#include "mcpool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int passed, failed;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            passed++;                                                                 \
        } else {                                                                      \
            failed++;                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,   \
                    __LINE__, #cond, mcpool_last_error_message());                    \
        }                                                                             \
    } while (0)

/* A status check that names both statuses when they differ. */
#define EXPECT(call, want)                                                            \
    do {                                                                              \
        mcpool_status got_ = (call);                                                  \
        if (got_ == (want)) {                                                         \
            passed++;                                                                 \
        } else {                                                                      \
            failed++;                                                                 \
            fprintf(stderr, "%s:%d: %s gave %s, want %s (last error: %s)\n",          \
                    __FILE__, __LINE__, #call, mcpool_status_name(got_),              \
                    mcpool_status_name(want), mcpool_last_error_message());           \
        }                                                                             \
    } while (0)

#define K(s) (const uint8_t *)(s), strlen(s) /* a key or value */
#define S(s) (s), strlen(s)                  /* a name or address */

static const char *server;

/* A unique key prefix per run, so reruns against one server never see old values. */
static char prefix[64];

static mcpool_client *new_client(const char *addr) {
    mcpool_config *cfg = NULL;
    mcpool_client *client = NULL;
    EXPECT(mcpool_config_new(&cfg), MCPOOL_OK);
    EXPECT(mcpool_config_add_server(cfg, addr, strlen(addr), 1), MCPOOL_OK);
    EXPECT(mcpool_config_set_key_prefix(cfg, K(prefix)), MCPOOL_OK);
    EXPECT(mcpool_config_set_connect_timeout_ms(cfg, 1000), MCPOOL_OK);
    EXPECT(mcpool_config_set_io_timeout_ms(cfg, 2000), MCPOOL_OK);
    EXPECT(mcpool_config_set_max_size(cfg, 8), MCPOOL_OK);
    EXPECT(mcpool_client_new(cfg, &client), MCPOOL_OK);
    mcpool_config_free(cfg);
    return client;
}

static void test_statuses(void) {
    CHECK(strcmp(mcpool_status_name(MCPOOL_OK), "MCPOOL_OK") == 0);
    CHECK(strcmp(mcpool_status_name(MCPOOL_NOT_FOUND), "MCPOOL_NOT_FOUND") == 0);
    CHECK(strcmp(mcpool_status_name(MCPOOL_IO), "MCPOOL_IO") == 0);
    CHECK(strcmp(mcpool_status_name(4242), "MCPOOL_UNRECOGNIZED_STATUS") == 0);
    CHECK(MCPOOL_OK == 0 && MCPOOL_NOT_FOUND == 1 && MCPOOL_NOT_STORED == 2 && MCPOOL_EXISTS == 3);
    CHECK(MCPOOL_INVALID_ARGUMENT == 100 && MCPOOL_SERVER_DEAD == 200 && MCPOOL_PANIC == 900);
    CHECK(MCPOOL_UNSUPPORTED == 105 && MCPOOL_AUTH == 209);
    CHECK(strcmp(mcpool_status_name(MCPOOL_AUTH), "MCPOOL_AUTH") == 0);
    CHECK(strlen(mcpool_version()) > 0);
    CHECK(mcpool_last_error_message() != NULL);
    CHECK(mcpool_last_error_length() == strlen(mcpool_last_error_message()));
}

static void test_config(void) {
    mcpool_config *cfg = NULL;
    mcpool_client *client = (mcpool_client *)0x1;

    EXPECT(mcpool_config_new(NULL), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_new(&cfg), MCPOOL_OK);
    CHECK(cfg != NULL);

    /* No servers yet: building fails and writes nothing. */
    EXPECT(mcpool_client_new(cfg, &client), MCPOOL_CONFIG);
    CHECK(client == (mcpool_client *)0x1);
    CHECK(strstr(mcpool_last_error_message(), "no servers") != NULL);

    /* Every setter, good values. */
    EXPECT(mcpool_config_add_server(cfg, server, strlen(server), 2), MCPOOL_OK);
    EXPECT(mcpool_config_set_distribution(cfg, S("cache-memcached")), MCPOOL_OK);
    EXPECT(mcpool_config_set_failover(cfg, S("eject")), MCPOOL_OK);
    EXPECT(mcpool_config_set_compression_format(cfg, S("zlib")), MCPOOL_OK);
    EXPECT(mcpool_config_set_key_prefix(cfg, K("p:")), MCPOOL_OK);
    EXPECT(mcpool_config_set_key_prefix(cfg, NULL, 0), MCPOOL_OK);
    EXPECT(mcpool_config_set_min_idle(cfg, 0), MCPOOL_OK);
    EXPECT(mcpool_config_set_max_size(cfg, 4), MCPOOL_OK);
    EXPECT(mcpool_config_set_idle_timeout_ms(cfg, 0), MCPOOL_OK);
    EXPECT(mcpool_config_set_max_lifetime_ms(cfg, 60000), MCPOOL_OK);
    EXPECT(mcpool_config_set_connect_timeout_ms(cfg, 500), MCPOOL_OK);
    EXPECT(mcpool_config_set_io_timeout_ms(cfg, 500), MCPOOL_OK);
    EXPECT(mcpool_config_set_pool_timeout_ms(cfg, 500), MCPOOL_OK);
    EXPECT(mcpool_config_set_nodelay(cfg, true), MCPOOL_OK);
    EXPECT(mcpool_config_set_test_on_check_out(cfg, true), MCPOOL_OK);
    EXPECT(mcpool_config_set_failure_limit(cfg, 3), MCPOOL_OK);
    EXPECT(mcpool_config_set_retry_timeout_ms(cfg, 100), MCPOOL_OK);
    EXPECT(mcpool_config_set_retry_timeout_max_ms(cfg, 1000), MCPOOL_OK);
    EXPECT(mcpool_config_set_compression(cfg, true), MCPOOL_OK);
    EXPECT(mcpool_config_set_compression_threshold(cfg, 100), MCPOOL_OK);
    EXPECT(mcpool_config_set_compression_ratio(cfg, 0.9), MCPOOL_OK);
    EXPECT(mcpool_config_set_max_decompressed_size(cfg, 1 << 20), MCPOOL_OK);
    EXPECT(mcpool_config_set_sanitize_keys(cfg, false), MCPOOL_OK);
    EXPECT(mcpool_config_set_max_value_size(cfg, 1 << 20), MCPOOL_OK);
    EXPECT(mcpool_config_set_protocol(cfg, S("meta")), MCPOOL_OK);
    EXPECT(mcpool_config_set_protocol(cfg, S("text")), MCPOOL_OK);

    /* Bad values: refused at once, configuration unchanged. */
    EXPECT(mcpool_config_add_server(cfg, S("host:notaport"), 1), MCPOOL_CONFIG);
    EXPECT(mcpool_config_add_server(cfg, server, strlen(server), 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_add_server(cfg, NULL, 5, 1), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_add_server(cfg, "\xff\xfe", 2, 1), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_add_server(cfg, server, SIZE_MAX, 1), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_distribution(cfg, S("no-such-profile")), MCPOOL_CONFIG);
    CHECK(strstr(mcpool_last_error_message(), "no-such-profile") != NULL);
    EXPECT(mcpool_config_set_failover(cfg, S("sometimes")), MCPOOL_CONFIG);
    EXPECT(mcpool_config_set_compression_format(cfg, S("lz4")), MCPOOL_CONFIG);
    EXPECT(mcpool_config_set_protocol(cfg, S("carrier-pigeon")), MCPOOL_CONFIG);
    EXPECT(mcpool_config_set_sasl_plain(cfg, NULL, 1, S("pw")), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_sasl_plain(NULL, S("u"), S("pw")), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_key_prefix(cfg, NULL, 3), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_key_prefix(cfg, (const uint8_t *)"x", 251), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_max_size(cfg, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_connect_timeout_ms(cfg, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_io_timeout_ms(cfg, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_pool_timeout_ms(cfg, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_failure_limit(cfg, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_compression_ratio(cfg, 0.0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_compression_ratio(cfg, 1.5), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_max_value_size(cfg, 0), MCPOOL_INVALID_ARGUMENT);

    /* NULL configuration everywhere. */
    EXPECT(mcpool_config_add_server(NULL, server, strlen(server), 1), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_distribution(NULL, S("cache-memcached")), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_failover(NULL, S("eject")), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_compression_format(NULL, S("gzip")), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_key_prefix(NULL, K("p")), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_min_idle(NULL, 1), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_io_timeout_ms(NULL, 1), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_config_set_nodelay(NULL, true), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_new(NULL, &client), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_new(cfg, NULL), MCPOOL_INVALID_ARGUMENT);

    /* min idle above max size is caught when the client is built. */
    EXPECT(mcpool_config_set_min_idle(cfg, 5), MCPOOL_OK);
    EXPECT(mcpool_client_new(cfg, &client), MCPOOL_CONFIG);
    EXPECT(mcpool_config_set_min_idle(cfg, 1), MCPOOL_OK);

    client = NULL;
    EXPECT(mcpool_client_new(cfg, &client), MCPOOL_OK);
    CHECK(client != NULL);
    mcpool_config_free(cfg); /* the client keeps its own copy */
    mcpool_client_free(client);

    mcpool_config_free(NULL);
    mcpool_client_free(NULL);
}

static void test_null_and_bad_input(mcpool_client *c) {
    mcpool_item *item = NULL;
    uint64_t n = 7;
    size_t idx = 99;
    char key251[251];
    memset(key251, 'k', sizeof key251);

    /* NULL handle. */
    EXPECT(mcpool_client_get(NULL, K("a"), &item), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_set(NULL, K("a"), K("v"), 0, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_delete(NULL, K("a")), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_incr(NULL, K("a"), 1, &n), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_touch(NULL, K("a"), 1), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_flush_all(NULL, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_server_count(NULL, &idx), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_server_for(NULL, K("a"), &idx), MCPOOL_INVALID_ARGUMENT);
    CHECK(strstr(mcpool_last_error_message(), "client is NULL") != NULL);

    /* NULL key. */
    EXPECT(mcpool_client_get(c, NULL, 3, &item), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_set(c, NULL, 3, K("v"), 0, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_delete(c, NULL, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_server_for(c, NULL, 1, &idx), MCPOOL_INVALID_ARGUMENT);

    /* Zero-length, 251-byte, huge and malformed keys. */
    {
        /* Zero-length key: refused, with or without a key prefix. */
        mcpool_config *cfg = NULL;
        mcpool_client *bare = NULL;
        EXPECT(mcpool_config_new(&cfg), MCPOOL_OK);
        EXPECT(mcpool_config_add_server(cfg, server, strlen(server), 1), MCPOOL_OK);
        EXPECT(mcpool_client_new(cfg, &bare), MCPOOL_OK);
        mcpool_config_free(cfg);
        EXPECT(mcpool_client_get(bare, (const uint8_t *)"", 0, &item), MCPOOL_INVALID_KEY);
        CHECK(strstr(mcpool_last_error_message(), "empty") != NULL);
        EXPECT(mcpool_client_set(bare, (const uint8_t *)"", 0, K("v"), 0, 0), MCPOOL_INVALID_KEY);
        EXPECT(mcpool_client_server_for(bare, (const uint8_t *)"", 0, &idx), MCPOOL_INVALID_KEY);
        mcpool_client_free(bare);
        EXPECT(mcpool_client_get(c, (const uint8_t *)"", 0, &item), MCPOOL_INVALID_KEY);
    }
    EXPECT(mcpool_client_set(c, (const uint8_t *)key251, 251, K("v"), 0, 0), MCPOOL_INVALID_KEY);
    EXPECT(mcpool_client_get(c, (const uint8_t *)key251, 251, &item), MCPOOL_INVALID_KEY);
    EXPECT(mcpool_client_get(c, (const uint8_t *)"k", SIZE_MAX, &item), MCPOOL_INVALID_KEY);
    EXPECT(mcpool_client_set(c, K("has space"), K("v"), 0, 0), MCPOOL_INVALID_KEY);
    EXPECT(mcpool_client_set(c, (const uint8_t *)"nul\0key", 7, K("v"), 0, 0), MCPOOL_INVALID_KEY);
    EXPECT(mcpool_client_server_for(c, (const uint8_t *)key251, 251, &idx), MCPOOL_INVALID_KEY);
    CHECK(idx == 99);
    /* A 250-byte key minus the prefix is accepted. */
    EXPECT(mcpool_client_set(c, (const uint8_t *)key251, 250 - strlen(prefix), K("v"), 0, 0),
           MCPOOL_OK);
    EXPECT(mcpool_client_set(c, (const uint8_t *)key251, 251 - strlen(prefix), K("v"), 0, 0),
           MCPOOL_INVALID_KEY);

    /* Huge and NULL values. */
    EXPECT(mcpool_client_set(c, K("big"), (const uint8_t *)"v", SIZE_MAX, 0, 0),
           MCPOOL_VALUE_TOO_LARGE);
    EXPECT(mcpool_client_set(c, K("big"), NULL, 5, 0, 0), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_append(c, K("big"), (const uint8_t *)"v", (size_t)1 << 40),
           MCPOOL_VALUE_TOO_LARGE);
    {
        /* Just over the 1 MiB item limit and incompressible: refused before any I/O. */
        size_t len = (1 << 20) + 1;
        uint8_t *junk = malloc(len);
        uint32_t x = 2463534242u;
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            junk[i] = (uint8_t)x;
        }
        EXPECT(mcpool_client_set(c, K("big"), junk, len, 0, 0), MCPOOL_VALUE_TOO_LARGE);
        free(junk);
    }

    /* NULL outputs, and outputs untouched on failure. */
    EXPECT(mcpool_client_get(c, K("a"), NULL), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_incr(c, K("a"), 1, NULL), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_server_for(c, K("a"), NULL), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_server_count(c, NULL), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_version(c, NULL), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_stats(c, NULL, 0, NULL), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_stats(c, NULL, 5, &(mcpool_server_results *){NULL}),
           MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_get_multi(c, NULL, NULL, 0, false, NULL), MCPOOL_INVALID_ARGUMENT);
    EXPECT(mcpool_client_get_multi_cb(c, NULL, NULL, 0, false, NULL, NULL),
           MCPOOL_INVALID_ARGUMENT);
    item = (mcpool_item *)0x1;
    EXPECT(mcpool_client_get(c, K("never-set"), &item), MCPOOL_NOT_FOUND);
    CHECK(item == (mcpool_item *)0x1);
    item = NULL;

    /* Accessors on NULL. */
    CHECK(mcpool_item_data(NULL) == NULL && mcpool_item_len(NULL) == 0);
    CHECK(mcpool_item_flags(NULL) == 0 && mcpool_item_cas(NULL) == 0);
    CHECK(mcpool_multi_len(NULL) == 0 && mcpool_server_results_len(NULL) == 0);
    mcpool_item_free(NULL);
    mcpool_multi_free(NULL);
    mcpool_server_results_free(NULL);
}

static void test_storage_and_retrieval(mcpool_client *c) {
    mcpool_item *item = NULL;
    const uint8_t binary[] = {'a', 0, 'b', '\r', '\n', 0xff, 0};

    /* set/get, binary-safe, flags pass through. */
    EXPECT(mcpool_client_set(c, K("bin"), binary, sizeof binary, 0x1230, 0), MCPOOL_OK);
    EXPECT(mcpool_client_get(c, K("bin"), &item), MCPOOL_OK);
    CHECK(item != NULL && mcpool_item_len(item) == sizeof binary);
    CHECK(item && memcmp(mcpool_item_data(item), binary, sizeof binary) == 0);
    CHECK(mcpool_item_flags(item) == 0x1230);
    CHECK(mcpool_item_cas(item) == 0);
    mcpool_item_free(item);
    item = NULL;

    /* Empty value (NULL with length 0). */
    EXPECT(mcpool_client_set(c, K("empty"), NULL, 0, 0, 0), MCPOOL_OK);
    EXPECT(mcpool_client_get(c, K("empty"), &item), MCPOOL_OK);
    CHECK(mcpool_item_len(item) == 0);
    mcpool_item_free(item);

    /* A large compressible value round-trips (compressed on the wire). */
    {
        size_t len = 200000;
        uint8_t *big = malloc(len);
        for (size_t i = 0; i < len; i++) big[i] = (uint8_t)("abcdefgh"[i % 8]);
        EXPECT(mcpool_client_set(c, K("large"), big, len, 0x700, 0), MCPOOL_OK);
        EXPECT(mcpool_client_get(c, K("large"), &item), MCPOOL_OK);
        CHECK(mcpool_item_len(item) == len && memcmp(mcpool_item_data(item), big, len) == 0);
        CHECK(mcpool_item_flags(item) == 0x700);
        mcpool_item_free(item);
        free(big);
    }

    /* add / replace / append / prepend. */
    EXPECT(mcpool_client_add(c, K("bin"), K("x"), 0, 0), MCPOOL_NOT_STORED);
    EXPECT(mcpool_client_add(c, K("fresh"), K("mid"), 3, 0), MCPOOL_OK);
    EXPECT(mcpool_client_replace(c, K("absent"), K("x"), 0, 0), MCPOOL_NOT_STORED);
    EXPECT(mcpool_client_replace(c, K("fresh"), K("mid"), 4, 0), MCPOOL_OK);
    EXPECT(mcpool_client_append(c, K("fresh"), K(">>")), MCPOOL_OK);
    EXPECT(mcpool_client_prepend(c, K("fresh"), K("<<")), MCPOOL_OK);
    EXPECT(mcpool_client_append(c, K("absent"), K(">>")), MCPOOL_NOT_STORED);
    EXPECT(mcpool_client_prepend(c, K("absent"), K("<<")), MCPOOL_NOT_STORED);
    EXPECT(mcpool_client_get(c, K("fresh"), &item), MCPOOL_OK);
    CHECK(mcpool_item_len(item) == 7 && memcmp(mcpool_item_data(item), "<<mid>>", 7) == 0);
    CHECK(mcpool_item_flags(item) == 4);
    mcpool_item_free(item);

    /* gets / cas. */
    EXPECT(mcpool_client_gets(c, K("fresh"), &item), MCPOOL_OK);
    uint64_t cas = mcpool_item_cas(item);
    CHECK(cas != 0);
    mcpool_item_free(item);
    EXPECT(mcpool_client_cas(c, K("fresh"), K("v2"), 9, 0, cas), MCPOOL_OK);
    EXPECT(mcpool_client_cas(c, K("fresh"), K("v3"), 9, 0, cas), MCPOOL_EXISTS);
    EXPECT(mcpool_client_cas(c, K("absent"), K("v3"), 9, 0, cas), MCPOOL_NOT_FOUND);
    EXPECT(mcpool_client_gets(c, K("absent"), &item), MCPOOL_NOT_FOUND);

    /* gat / gats / touch. */
    EXPECT(mcpool_client_gat(c, K("fresh"), 100, &item), MCPOOL_OK);
    CHECK(mcpool_item_len(item) == 2 && memcmp(mcpool_item_data(item), "v2", 2) == 0);
    CHECK(mcpool_item_flags(item) == 9 && mcpool_item_cas(item) == 0);
    mcpool_item_free(item);
    EXPECT(mcpool_client_gats(c, K("fresh"), 100, &item), MCPOOL_OK);
    CHECK(mcpool_item_cas(item) != 0);
    mcpool_item_free(item);
    EXPECT(mcpool_client_gat(c, K("absent"), 100, &item), MCPOOL_NOT_FOUND);
    EXPECT(mcpool_client_gats(c, K("absent"), 100, &item), MCPOOL_NOT_FOUND);
    EXPECT(mcpool_client_touch(c, K("fresh"), 200), MCPOOL_OK);
    EXPECT(mcpool_client_touch(c, K("absent"), 200), MCPOOL_NOT_FOUND);

    /* delete. */
    EXPECT(mcpool_client_delete(c, K("fresh")), MCPOOL_OK);
    EXPECT(mcpool_client_delete(c, K("fresh")), MCPOOL_NOT_FOUND);
    EXPECT(mcpool_client_get(c, K("fresh"), &item), MCPOOL_NOT_FOUND);
}

static void test_arithmetic(mcpool_client *c) {
    uint64_t n = 12345;
    EXPECT(mcpool_client_incr(c, K("ctr"), 1, &n), MCPOOL_NOT_FOUND);
    CHECK(n == 12345);
    EXPECT(mcpool_client_decr(c, K("ctr"), 1, &n), MCPOOL_NOT_FOUND);
    EXPECT(mcpool_client_incr_or_init(c, K("ctr"), 5, 10, 0, &n), MCPOOL_OK);
    CHECK(n == 10);
    EXPECT(mcpool_client_incr_or_init(c, K("ctr"), 5, 10, 0, &n), MCPOOL_OK);
    CHECK(n == 15);
    EXPECT(mcpool_client_incr(c, K("ctr"), 2, &n), MCPOOL_OK);
    CHECK(n == 17);
    EXPECT(mcpool_client_decr(c, K("ctr"), 20, &n), MCPOOL_OK);
    CHECK(n == 0);
    EXPECT(mcpool_client_decr_or_init(c, K("ctr2"), 1, 100, 0, &n), MCPOOL_OK);
    CHECK(n == 100);
    EXPECT(mcpool_client_decr_or_init(c, K("ctr2"), 1, 100, 0, &n), MCPOOL_OK);
    CHECK(n == 99);
    EXPECT(mcpool_client_set(c, K("notnum"), K("abc"), 0, 0), MCPOOL_OK);
    EXPECT(mcpool_client_incr(c, K("notnum"), 1, &n), MCPOOL_CLIENT_ERROR);
    CHECK(strstr(mcpool_last_error_message(), "notnum") != NULL);
    CHECK(strstr(mcpool_last_error_message(), server) != NULL);
}

struct hits {
    int count;
    int bad;
};

static void on_hit(void *userdata, size_t index, const uint8_t *key, size_t key_len,
                   const uint8_t *value, size_t value_len, uint32_t flags, uint64_t cas) {
    struct hits *h = userdata;
    char want[32];
    h->count++;
    /* Keys m0..m4 hold "value-<i>" with flags i << 8; only even ones exist. (Flags must keep
     * clear of the compression bit, 2 for gzip.) */
    snprintf(want, sizeof want, "value-%zu", index);
    if (key_len != 2 || key[0] != 'm' || (size_t)(key[1] - '0') != index) h->bad++;
    if (value_len != strlen(want) || memcmp(value, want, value_len) != 0) h->bad++;
    if (flags != index << 8) h->bad++;
    (void)cas;
}

static void test_multi(mcpool_client *c) {
    const char *names[] = {"m0", "m1", "m2", "m3", "m4", "bad key"};
    const uint8_t *keys[6];
    size_t lens[6];
    for (size_t i = 0; i < 6; i++) {
        keys[i] = (const uint8_t *)names[i];
        lens[i] = strlen(names[i]);
        if (i % 2 == 0 && i < 5) {
            char v[32];
            snprintf(v, sizeof v, "value-%zu", i);
            EXPECT(mcpool_client_set(c, keys[i], lens[i], K(v), (uint32_t)i << 8, 0), MCPOOL_OK);
        }
    }

    /* Result set. */
    mcpool_multi *m = NULL;
    EXPECT(mcpool_client_get_multi(c, keys, lens, 6, true, &m), MCPOOL_OK);
    CHECK(mcpool_multi_len(m) == 6);
    for (size_t i = 0; i < 5; i++) {
        const uint8_t *v = NULL;
        size_t vlen = 0;
        uint32_t flags = 99;
        uint64_t cas = 0;
        mcpool_status s = mcpool_multi_get(m, i, &v, &vlen, &flags, &cas);
        if (i % 2 == 0) {
            char want[32];
            snprintf(want, sizeof want, "value-%zu", i);
            EXPECT(s, MCPOOL_OK);
            CHECK(vlen == strlen(want) && memcmp(v, want, vlen) == 0);
            CHECK(flags == i << 8 && cas != 0);
        } else {
            EXPECT(s, MCPOOL_NOT_FOUND);
            CHECK(v == NULL && flags == 99);
        }
    }
    {
        const uint8_t *v;
        size_t vlen;
        uint32_t flags;
        uint64_t cas;
        EXPECT(mcpool_multi_get(m, 5, &v, &vlen, &flags, &cas), MCPOOL_INVALID_KEY);
        CHECK(strstr(mcpool_last_error_message(), "bad key") != NULL);
        EXPECT(mcpool_multi_get(m, 6, &v, &vlen, &flags, &cas), MCPOOL_OUT_OF_RANGE);
        EXPECT(mcpool_multi_get(m, 0, NULL, &vlen, &flags, &cas), MCPOOL_INVALID_ARGUMENT);
        EXPECT(mcpool_multi_get(NULL, 0, &v, &vlen, &flags, &cas), MCPOOL_INVALID_ARGUMENT);
    }
    mcpool_multi_free(m);

    /* Zero keys: an empty set. */
    m = NULL;
    EXPECT(mcpool_client_get_multi(c, NULL, NULL, 0, false, &m), MCPOOL_OK);
    CHECK(m != NULL && mcpool_multi_len(m) == 0);
    mcpool_multi_free(m);

    /* Bad key arrays. */
    {
        const uint8_t *with_null[2] = {keys[0], NULL};
        size_t long_lens[2] = {2, 251};
        m = NULL;
        EXPECT(mcpool_client_get_multi(c, with_null, lens, 2, false, &m), MCPOOL_INVALID_ARGUMENT);
        CHECK(m == NULL);
        EXPECT(mcpool_client_get_multi(c, keys, NULL, 2, false, &m), MCPOOL_INVALID_ARGUMENT);
        EXPECT(mcpool_client_get_multi(c, keys, lens, SIZE_MAX, false, &m),
               MCPOOL_INVALID_ARGUMENT);
        /* An overlong key fails alone; the others are answered. */
        const uint8_t *two[2] = {keys[0], (const uint8_t *)"x"};
        EXPECT(mcpool_client_get_multi(c, two, long_lens, 2, false, &m), MCPOOL_OK);
        const uint8_t *v;
        size_t vlen;
        uint32_t flags;
        uint64_t cas;
        EXPECT(mcpool_multi_get(m, 0, &v, &vlen, &flags, &cas), MCPOOL_OK);
        EXPECT(mcpool_multi_get(m, 1, &v, &vlen, &flags, &cas), MCPOOL_INVALID_KEY);
        mcpool_multi_free(m);
    }

    /* Callback: three hits among the five good keys; the bad key's status comes back. */
    struct hits h = {0, 0};
    EXPECT(mcpool_client_get_multi_cb(c, keys, lens, 5, false, on_hit, &h), MCPOOL_OK);
    CHECK(h.count == 3 && h.bad == 0);
    h.count = 0;
    EXPECT(mcpool_client_get_multi_cb(c, keys, lens, 6, true, on_hit, &h), MCPOOL_INVALID_KEY);
    CHECK(h.count == 3 && h.bad == 0);
    EXPECT(mcpool_client_get_multi_cb(c, keys, lens, 5, false, NULL, &h), MCPOOL_INVALID_ARGUMENT);
}

static void test_servers(void) {
    /* The same memcached under two labels: two servers for placement. */
    char second[128];
    const char *colon = strrchr(server, ':');
    snprintf(second, sizeof second, "localhost%s", colon ? colon : ":11211");
    mcpool_config *cfg = NULL;
    mcpool_client *c = NULL;
    EXPECT(mcpool_config_new(&cfg), MCPOOL_OK);
    EXPECT(mcpool_config_add_server(cfg, server, strlen(server), 1), MCPOOL_OK);
    EXPECT(mcpool_config_add_server(cfg, second, strlen(second), 1), MCPOOL_OK);
    EXPECT(mcpool_client_new(cfg, &c), MCPOOL_OK);
    mcpool_config_free(cfg);

    size_t count = 0;
    EXPECT(mcpool_client_server_count(c, &count), MCPOOL_OK);
    CHECK(count == 2);
    const char *label = NULL;
    size_t label_len = 0;
    EXPECT(mcpool_client_server_label(c, 0, &label, &label_len), MCPOOL_OK);
    CHECK(label_len == strlen(server) && strcmp(label, server) == 0);
    EXPECT(mcpool_client_server_label(c, 1, &label, &label_len), MCPOOL_OK);
    CHECK(strcmp(label, second) == 0);
    EXPECT(mcpool_client_server_label(c, 2, &label, &label_len), MCPOOL_OUT_OF_RANGE);
    EXPECT(mcpool_client_server_label(c, 0, NULL, &label_len), MCPOOL_INVALID_ARGUMENT);

    /* Keys spread over both servers, deterministically, without I/O. */
    int seen[2] = {0, 0};
    for (int i = 0; i < 64; i++) {
        char k[16];
        size_t a = 9, b = 9;
        snprintf(k, sizeof k, "key%d", i);
        EXPECT(mcpool_client_server_for(c, K(k), &a), MCPOOL_OK);
        EXPECT(mcpool_client_server_for(c, K(k), &b), MCPOOL_OK);
        CHECK(a == b && a < 2);
        if (a < 2) seen[a]++;
    }
    CHECK(seen[0] > 0 && seen[1] > 0);

    bool alive = false;
    uint32_t failures = 99;
    uint64_t retry = 99;
    EXPECT(mcpool_client_server_state(c, 1, &alive, &failures, &retry), MCPOOL_OK);
    CHECK(alive && failures == 0 && retry == 0);
    EXPECT(mcpool_client_server_state(c, 2, &alive, &failures, &retry), MCPOOL_OUT_OF_RANGE);
    EXPECT(mcpool_client_server_state(c, 0, &alive, NULL, &retry), MCPOOL_INVALID_ARGUMENT);

    /* version and stats, per server. */
    mcpool_server_results *r = NULL;
    EXPECT(mcpool_client_version(c, &r), MCPOOL_OK);
    CHECK(mcpool_server_results_len(r) == 2);
    for (size_t i = 0; i < 2; i++) {
        size_t n = 0;
        const char *name, *value;
        size_t name_len, value_len;
        EXPECT(mcpool_server_results_status(r, i), MCPOOL_OK);
        EXPECT(mcpool_server_results_label(r, i, &label, &label_len), MCPOOL_OK);
        CHECK(strcmp(label, i == 0 ? server : second) == 0);
        EXPECT(mcpool_server_results_count(r, i, &n), MCPOOL_OK);
        CHECK(n == 1);
        EXPECT(mcpool_server_results_entry(r, i, 0, &name, &name_len, &value, &value_len),
               MCPOOL_OK);
        CHECK(strcmp(name, "version") == 0 && value_len > 0 && value[0] >= '1');
        EXPECT(mcpool_server_results_entry(r, i, 1, &name, &name_len, &value, &value_len),
               MCPOOL_OUT_OF_RANGE);
    }
    EXPECT(mcpool_server_results_status(r, 2), MCPOOL_OUT_OF_RANGE);
    EXPECT(mcpool_server_results_label(r, 2, &label, &label_len), MCPOOL_OUT_OF_RANGE);
    EXPECT(mcpool_server_results_status(NULL, 0), MCPOOL_INVALID_ARGUMENT);
    mcpool_server_results_free(r);

    r = NULL;
    EXPECT(mcpool_client_stats(c, NULL, 0, &r), MCPOOL_OK);
    {
        size_t n = 0;
        int found_pid = 0;
        EXPECT(mcpool_server_results_count(r, 0, &n), MCPOOL_OK);
        CHECK(n > 10);
        for (size_t j = 0; j < n && j < 1000; j++) {
            const char *name, *value;
            size_t name_len, value_len;
            EXPECT(mcpool_server_results_entry(r, 0, j, &name, &name_len, &value, &value_len),
                   MCPOOL_OK);
            if (strcmp(name, "pid") == 0 && value_len > 0) found_pid = 1;
        }
        CHECK(found_pid);
    }
    mcpool_server_results_free(r);
    r = NULL;
    EXPECT(mcpool_client_stats(c, S("settings"), &r), MCPOOL_OK);
    EXPECT(mcpool_server_results_status(r, 0), MCPOOL_OK);
    mcpool_server_results_free(r);
    r = NULL;
    EXPECT(mcpool_client_stats(c, S("bad group"), &r), MCPOOL_OK);
    EXPECT(mcpool_server_results_status(r, 0), MCPOOL_CONFIG);
    {
        size_t n = 9;
        EXPECT(mcpool_server_results_count(r, 0, &n), MCPOOL_OK);
        CHECK(n == 0);
    }
    mcpool_server_results_free(r);
    mcpool_client_free(c);
}

static void test_dead_server(void) {
    /* Nothing listens on port 1: connection refused, with the OS text and the key. */
    mcpool_config *cfg = NULL;
    mcpool_client *c = NULL;
    EXPECT(mcpool_config_new(&cfg), MCPOOL_OK);
    EXPECT(mcpool_config_add_server(cfg, S("127.0.0.1:1"), 1), MCPOOL_OK);
    EXPECT(mcpool_config_set_min_idle(cfg, 0), MCPOOL_OK);
    EXPECT(mcpool_config_set_failure_limit(cfg, 2), MCPOOL_OK);
    EXPECT(mcpool_config_set_retry_timeout_ms(cfg, 60000), MCPOOL_OK);
    EXPECT(mcpool_client_new(cfg, &c), MCPOOL_OK);
    mcpool_config_free(cfg);

    mcpool_item *item = NULL;
    mcpool_status s = mcpool_client_get(c, K("somekey"), &item);
    CHECK(s == MCPOOL_IO || s == MCPOOL_CONNECT_TIMEOUT);
    CHECK(item == NULL);
    const char *msg = mcpool_last_error_message();
    CHECK(strstr(msg, "127.0.0.1:1") != NULL);
    CHECK(strstr(msg, "somekey") != NULL);
    CHECK(s != MCPOOL_IO || strstr(msg, "refused") != NULL);
    CHECK(mcpool_last_error_length() == strlen(msg));

    mcpool_client_set(c, K("somekey"), K("v"), 0, 0); /* second failure: marked dead */
    bool alive = true;
    uint32_t failures = 0;
    uint64_t retry = 0;
    EXPECT(mcpool_client_server_state(c, 0, &alive, &failures, &retry), MCPOOL_OK);
    CHECK(!alive && failures >= 2 && retry > 0);
    EXPECT(mcpool_client_get(c, K("somekey"), &item), MCPOOL_SERVER_DEAD);

    /* Per-server results carry each server's failure. */
    mcpool_server_results *r = NULL;
    EXPECT(mcpool_client_version(c, &r), MCPOOL_OK);
    /* Whole-server commands still try a dead server. */
    s = mcpool_server_results_status(r, 0);
    CHECK(s == MCPOOL_IO || s == MCPOOL_CONNECT_TIMEOUT || s == MCPOOL_SERVER_DEAD);
    CHECK(strstr(mcpool_last_error_message(), "127.0.0.1:1") != NULL);
    mcpool_server_results_free(r);
    s = mcpool_client_flush_all(c, 0);
    CHECK(s == MCPOOL_IO || s == MCPOOL_CONNECT_TIMEOUT || s == MCPOOL_SERVER_DEAD);
    mcpool_client_free(c);
}

#define THREADS 32
#define ROUNDS 40

struct worker {
    mcpool_client *client;
    int id;
    int errors;
};

static void worker_error(struct worker *w, const char *what, mcpool_status s) {
    if (w->errors++ == 0)
        fprintf(stderr, "thread %d: %s: %s: %s\n", w->id, what, mcpool_status_name(s),
                mcpool_last_error_message());
}

static void *work(void *arg) {
    struct worker *w = arg;
    for (int i = 0; i < ROUNDS; i++) {
        char key[32], val[64];
        snprintf(key, sizeof key, "t%d-%d", w->id, i % 5);
        snprintf(val, sizeof val, "thread %d round %d", w->id, i);
        uint32_t flags = (uint32_t)w->id << 8; /* clear of the compression bit */
        mcpool_status s = mcpool_client_set(w->client, K(key), K(val), flags, 0);
        if (s != MCPOOL_OK) {
            worker_error(w, "set", s);
            continue;
        }
        mcpool_item *item = NULL;
        if ((s = mcpool_client_get(w->client, K(key), &item)) != MCPOOL_OK) {
            worker_error(w, "get", s);
            continue;
        }
        /* Every read checked: our own value, never another thread's. */
        if (mcpool_item_len(item) != strlen(val) ||
            memcmp(mcpool_item_data(item), val, strlen(val)) != 0 ||
            mcpool_item_flags(item) != flags)
            worker_error(w, "wrong value", MCPOOL_OK);
        mcpool_item_free(item);
        uint64_t n = 0;
        s = mcpool_client_incr_or_init(w->client, K("shared-counter"), 1, 1, 0, &n);
        if (s != MCPOOL_OK || n == 0) worker_error(w, "incr_or_init", s);
    }
    return NULL;
}

static void test_threads(mcpool_client *c) {
    pthread_t tids[THREADS];
    struct worker workers[THREADS];
    for (int i = 0; i < THREADS; i++) {
        workers[i] = (struct worker){c, i, 0};
        CHECK(pthread_create(&tids[i], NULL, work, &workers[i]) == 0);
    }
    int errors = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(tids[i], NULL);
        errors += workers[i].errors;
    }
    CHECK(errors == 0);
    mcpool_item *item = NULL;
    EXPECT(mcpool_client_get(c, K("shared-counter"), &item), MCPOOL_OK);
    char digits[32] = {0};
    if (item && mcpool_item_len(item) < sizeof digits)
        memcpy(digits, mcpool_item_data(item), mcpool_item_len(item)); /* not NUL-terminated */
    CHECK(strtoull(digits, NULL, 10) == THREADS * ROUNDS);
    mcpool_item_free(item);
}

static void test_fork(mcpool_client *c) {
    /* The parent's connections are in the pool; the child must open its own. */
    EXPECT(mcpool_client_set(c, K("forked"), K("parent"), 0, 0), MCPOOL_OK);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int ok = mcpool_client_set(c, K("forked"), K("child"), 0, 0) == MCPOOL_OK;
        mcpool_item *item = NULL;
        ok = ok && mcpool_client_get(c, K("forked"), &item) == MCPOOL_OK &&
             mcpool_item_len(item) == 5 && memcmp(mcpool_item_data(item), "child", 5) == 0;
        mcpool_item_free(item);
        if (!ok) fprintf(stderr, "child: %s\n", mcpool_last_error_message());
        /* Report through exec rather than _exit: under valgrind, a forked child that exits
         * is leak-checked, and everything the parent's threads own looks lost to it. */
        execlp(ok ? "true" : "false", ok ? "true" : "false", (char *)NULL);
        _exit(ok ? 0 : 1);
    }
    CHECK(pid > 0);
    int status = -1;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* The parent's pooled connections still work and see the child's write. */
    mcpool_item *item = NULL;
    EXPECT(mcpool_client_get(c, K("forked"), &item), MCPOOL_OK);
    CHECK(item && mcpool_item_len(item) == 5 && memcmp(mcpool_item_data(item), "child", 5) == 0);
    mcpool_item_free(item);
}

static void test_flush(mcpool_client *c) {
    mcpool_item *item = NULL;
    EXPECT(mcpool_client_set(c, K("to-flush"), K("v"), 0, 0), MCPOOL_OK);
    EXPECT(mcpool_client_flush_all(c, 0), MCPOOL_OK);
    EXPECT(mcpool_client_get(c, K("to-flush"), &item), MCPOOL_NOT_FOUND);
}

int main(int argc, char **argv) {
    server = argc > 1 ? argv[1] : getenv("MCPOOL_TEST_SERVER");
    if (!server || !*server) {
        fprintf(stderr, "usage: %s host:port (or set MCPOOL_TEST_SERVER)\n", argv[0]);
        return 2;
    }
    snprintf(prefix, sizeof prefix, "ct%ld:", (long)getpid());

    test_statuses();
    test_config();
    mcpool_client *c = new_client(server);
    if (!c) {
        fprintf(stderr, "cannot create a client for %s\n", server);
        return 1;
    }
    test_null_and_bad_input(c);
    test_storage_and_retrieval(c);
    test_arithmetic(c);
    test_multi(c);
    test_servers();
    test_dead_server();
    test_threads(c);
    test_fork(c);
    test_flush(c);
    mcpool_client_free(c);

    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}

/*
 * example.c: the shortest useful mcpool program.
 *
 *   cc example.c $(pkg-config --cflags --libs mcpool) -o example
 *   ./example 127.0.0.1:11211
 *
 * Every call returns an mcpool_status; on an error, mcpool_last_error_message() says what
 * went wrong (server, key, operating system error). Each object is freed by its _free.
 */
#include <mcpool.h>
#include <stdio.h>
#include <string.h>

static int fail(const char *what, mcpool_status s) {
    fprintf(stderr, "%s: %s: %s\n", what, mcpool_status_name(s), mcpool_last_error_message());
    return 1;
}

int main(int argc, char **argv) {
    const char *server = argc > 1 ? argv[1] : "127.0.0.1:11211";
    mcpool_config *cfg = NULL;
    mcpool_client *client = NULL;
    mcpool_status s;

    /* 1. Configure: servers (with weights), then any option; build one client to share.
     * Placement is mcpool's default (cache-memcached); in a fleet that libmemcached programs
     * share, set the option "preset" to "libmemcached" so that each key is on the server they
     * read it from (docs/c-abi.md, "Placement"). */
    if ((s = mcpool_config_new(&cfg)) != MCPOOL_OK) return fail("config", s);
    s = mcpool_config_add_server(cfg, server, strlen(server), 1);
    if (s == MCPOOL_OK) s = mcpool_config_set_key_prefix(cfg, (const uint8_t *)"example:", 8);
    if (s == MCPOOL_OK) s = mcpool_client_new(cfg, &client);
    mcpool_config_free(cfg); /* the client keeps its own copy */
    if (s != MCPOOL_OK) return fail("client", s);

    /* 2. Store: keys and values are (pointer, length) pairs, binary-safe. */
    const char *key = "greeting", *value = "hello, memcached";
    s = mcpool_client_set(client, (const uint8_t *)key, strlen(key), (const uint8_t *)value,
                          strlen(value), /* flags */ 0, /* ttl seconds */ 60);
    if (s != MCPOOL_OK) return fail("set", s);

    /* 3. Read: a hit gives an item you own; a miss is MCPOOL_NOT_FOUND, not an error. */
    mcpool_item *item = NULL;
    s = mcpool_client_get(client, (const uint8_t *)key, strlen(key), &item);
    if (s == MCPOOL_OK) {
        printf("%s = %.*s\n", key, (int)mcpool_item_len(item), (const char *)mcpool_item_data(item));
        mcpool_item_free(item);
    } else if (s == MCPOOL_NOT_FOUND) {
        printf("%s: miss\n", key);
    } else {
        return fail("get", s);
    }

    /* 4. Done: free the client (it closes its connections). */
    mcpool_client_free(client);
    return 0;
}

/* Value-matrix driver for C (libmcpool), run by ffi/matrix/run.py:
 *
 *   c_driver MODE FORMAT SERVER FIXDIR < plan
 *
 * Plan lines "KEY KIND"; output lines "KEY OK", "KEY ERR message", "KEY DIFF what" or
 * "KEY MISS". Kinds map to the ABI's: ascii, bin1m, empty and any "...b" -> BYTES; utf8,
 * text100k -> TEXT; int -> INT (its decimal text). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpool.h"

static unsigned char *slurp(const char *dir, const char *base, size_t *n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, base);
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)len + 1);
    if (!b || fread(b, 1, (size_t)len, f) != (size_t)len) { perror(path); exit(2); }
    fclose(f);
    *n = (size_t)len;
    return b;
}

static mcpool_kind kind_of(const char *kind, char *base) {
    size_t l = strlen(kind);
    strcpy(base, kind);
    if (strcmp(kind, "empty") != 0 && l > 1 && kind[l - 1] == 'b') {
        base[l - 1] = 0;
        return MCPOOL_KIND_BYTES;
    }
    if (!strcmp(kind, "utf8") || !strcmp(kind, "text100k")) return MCPOOL_KIND_TEXT;
    if (!strcmp(kind, "int")) return MCPOOL_KIND_INT;
    return MCPOOL_KIND_BYTES;
}

static void check(mcpool_status st, const char *what) {
    if (st != MCPOOL_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, mcpool_status_name(st), mcpool_last_error_message());
        exit(2);
    }
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: c_driver MODE FORMAT SERVER FIXDIR\n"); return 2; }
    const char *mode = argv[1], *fmt = argv[2], *server = argv[3], *dir = argv[4];
    mcpool_config *cfg = NULL;
    mcpool_client *c = NULL;
    check(mcpool_config_new(&cfg), "config");
    check(mcpool_config_add_server(cfg, server, strlen(server), 1), "server");
    check(mcpool_config_set_value_format(cfg, fmt, strlen(fmt)), "value_format");
    check(mcpool_config_set_compression(cfg, true), "compression");
    check(mcpool_config_set_compression_threshold(cfg, 1024), "threshold");
    check(mcpool_config_set_max_value_size(cfg, 2 * 1024 * 1024), "max_value_size");
    check(mcpool_config_set_min_idle(cfg, 0), "min_idle");
    check(mcpool_client_new(cfg, &c), "client");
    mcpool_config_free(cfg);
    char line[1024], key[512], kind[64], base[64];
    while (fgets(line, sizeof line, stdin)) {
        if (sscanf(line, "%511s %63s", key, kind) != 2) continue;
        mcpool_kind k = kind_of(kind, base);
        size_t n;
        unsigned char *want = slurp(dir, base, &n);
        if (k == MCPOOL_KIND_INT) /* the ABI form: decimal text without the newline, if any */
            while (n && (want[n - 1] == '\n' || want[n - 1] == ' ')) n--;
        if (!strcmp(mode, "write")) {
            mcpool_status st = mcpool_client_store_kind(c, MCPOOL_STORE_SET, (const uint8_t *)key,
                                                        strlen(key), k, want, n, 0, 0);
            if (st == MCPOOL_OK) printf("%s OK\n", key);
            else printf("%s ERR %s: %s\n", key, mcpool_status_name(st), mcpool_last_error_message());
        } else {
            mcpool_item *item = NULL;
            mcpool_kind got;
            mcpool_status st = mcpool_client_get(c, (const uint8_t *)key, strlen(key), &item);
            if (st == MCPOOL_NOT_FOUND) printf("%s MISS\n", key);
            else if (st != MCPOOL_OK)
                printf("%s ERR %s: %s\n", key, mcpool_status_name(st), mcpool_last_error_message());
            else if ((st = mcpool_client_flags_kind(c, mcpool_item_flags(item), &got)) != MCPOOL_OK)
                printf("%s ERR %s: %s\n", key, mcpool_status_name(st), mcpool_last_error_message());
            else if (got != k)
                printf("%s DIFF kind %u (want %u), %zu bytes\n", key, (unsigned)got, (unsigned)k,
                       mcpool_item_len(item));
            else if (mcpool_item_len(item) != n || (n && memcmp(mcpool_item_data(item), want, n)))
                printf("%s DIFF %zu bytes (want %zu)\n", key, mcpool_item_len(item), n);
            else
                printf("%s OK\n", key);
            mcpool_item_free(item);
        }
        free(want);
    }
    mcpool_client_free(c);
    return 0;
}

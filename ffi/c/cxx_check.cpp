// The header as a C++ program uses it (make cxx-check, part of make test): every name and
// text argument takes a string literal as it is, as docs/options.md writes the calls (tester
// finding cteam 2: mcpool_config_set took const uint8_t *, an error in C++).
#include <mcpool.h>

int main() {
    mcpool_config *cfg = nullptr;
    if (mcpool_config_new(&cfg) != MCPOOL_OK) return 1;
    mcpool_status s = mcpool_config_set(cfg, "io_timeout", 10, "250ms", 5);
    if (s == MCPOOL_OK) s = mcpool_config_set_as(cfg, "timeout", 7, "io_timeout", 10, "1s", 2);
    size_t i = 0;
    if (s == MCPOOL_OK) s = mcpool_option_find("fail_open", 9, &i);
    if (s == MCPOOL_OK) s = mcpool_config_add_server(cfg, "127.0.0.1:11211", 15, 1);
    if (s == MCPOOL_OK) s = mcpool_config_set_distribution(cfg, "ketama", 6);
    mcpool_config_free(cfg);
    return s == MCPOOL_OK ? 0 : 1;
}

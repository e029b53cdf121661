package io.mcpool;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A client configuration kept on the Java side (plain values, copyable) and turned into an
 * {@code mcpool_config} only for the moment a client is built, so no native configuration
 * outlives a call.
 */
final class Config implements Cloneable {
    final List<String> servers = new ArrayList<>();
    final List<Integer> weights = new ArrayList<>();
    final Map<Integer, String> names = new LinkedHashMap<>();
    final Map<Integer, Long> numbers = new LinkedHashMap<>();
    Double ratio;
    byte[] keyPrefix;

    Config copy() {
        Config c = new Config();
        c.servers.addAll(servers);
        c.weights.addAll(weights);
        c.names.putAll(names);
        c.numbers.putAll(numbers);
        c.ratio = ratio;
        c.keyPrefix = keyPrefix == null ? null : Arrays.copyOf(keyPrefix, keyPrefix.length);
        return c;
    }

    /** Builds the native client; the native configuration is freed before returning. */
    long buildClient() {
        long cfg = Native.configNew();
        try {
            for (int i = 0; i < servers.size(); i++) {
                Native.configAddServer(cfg, servers.get(i), weights.get(i));
            }
            for (Map.Entry<Integer, String> e : names.entrySet()) {
                Native.configSetName(cfg, e.getKey(), e.getValue());
            }
            for (Map.Entry<Integer, Long> e : numbers.entrySet()) {
                Native.configSetNumber(cfg, e.getKey(), e.getValue());
            }
            if (ratio != null) Native.configSetRatio(cfg, ratio);
            if (keyPrefix != null) Native.configSetKeyPrefix(cfg, keyPrefix);
            return Native.clientNew(cfg);
        } finally {
            Native.configFree(cfg);
        }
    }
}

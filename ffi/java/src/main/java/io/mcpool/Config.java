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

    /** What each OPT_* number is called in {@link Mcpool.Builder}, for messages. */
    static String optionName(int which) {
        String[] names = {"minIdle", "maxConnections", "idleTimeoutMillis", "maxLifetimeMillis",
            "connectTimeoutMillis", "ioTimeoutMillis", "poolTimeoutMillis", "noDelay", "testOnCheckOut",
            "failureLimit", "retryTimeoutMillis", "retryTimeoutMaxMillis", "compression",
            "compressionThreshold", "sanitizeKeys", "maxValueSize", "maxDecompressedSize",
            "javaSerialization"};
        return which >= 0 && which < names.length ? names[which] : "option " + which;
    }

    static String nameOption(int which) {
        String[] names = {"distribution", "failover", "compressionFormat", "protocol", "valueFormat"};
        return which >= 0 && which < names.length ? names[which] : "option " + which;
    }

    private static ClientException invalid(String message) {
        return ClientException.invalidArgument(message);
    }

    /**
     * Refuses what the native side would misread, before any native call: a negative weight
     * (it would become 2^32 - 1 as the C ABI's unsigned weight), a negative number (C's
     * unsigned sizes and milliseconds), a null or unencodable string. Text is passed to the C
     * side as strict UTF-8 bytes ({@link Utf8}), never as JNI's modified UTF-8.
     */
    long buildClient() {
        byte[][] addrs = new byte[servers.size()][];
        for (int i = 0; i < servers.size(); i++) {
            int w = weights.get(i);
            if (w < 0) {
                throw invalid("server " + servers.get(i) + ": weight " + w + " is negative (weights start at 1)");
            }
            addrs[i] = Utf8.text(servers.get(i), "server address");
        }
        Map<Integer, byte[]> texts = new LinkedHashMap<>();
        for (Map.Entry<Integer, String> e : names.entrySet()) {
            texts.put(e.getKey(), Utf8.text(e.getValue(), nameOption(e.getKey())));
        }
        for (Map.Entry<Integer, Long> e : numbers.entrySet()) {
            if (e.getValue() < 0) {
                throw invalid(optionName(e.getKey()) + " " + e.getValue() + " is negative");
            }
        }
        long cfg = Native.configNew();
        try {
            for (int i = 0; i < addrs.length; i++) {
                Native.configAddServer(cfg, addrs[i], weights.get(i));
            }
            for (Map.Entry<Integer, byte[]> e : texts.entrySet()) {
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

package io.mcpool;

/** A value as stored: its bytes and its flags (the compression bit, 2, belongs to mcpool). */
public final class CachedData {
    public final byte[] data;
    public final int flags;

    public CachedData(byte[] data, int flags) {
        this.data = data;
        this.flags = flags;
    }
}

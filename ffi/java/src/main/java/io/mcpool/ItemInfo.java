package io.mcpool;

/**
 * An item's metadata, read without its value ({@link Mcpool#metaInfo}, meta protocol): the
 * request is not an access, so it changes neither {@link #hitBefore} nor {@link #lastAccessSeconds}.
 * Of an invalidated key it does take the recompute token, as every read that returns a CAS
 * does (see {@link Mcpool#invalidate}).
 */
public final class ItemInfo {
    private final boolean hitBefore;
    private final long lastAccessSeconds;
    private final long ttlSeconds;
    private final long cas;
    private final long size;
    private final int flags;

    ItemInfo(boolean hitBefore, long lastAccessSeconds, long ttlSeconds, long cas, long size, int flags) {
        this.hitBefore = hitBefore;
        this.lastAccessSeconds = lastAccessSeconds;
        this.ttlSeconds = ttlSeconds;
        this.cas = cas;
        this.size = size;
        this.flags = flags;
    }

    /** Whether the item had been read before. */
    public boolean hitBefore() { return hitBefore; }
    /** Seconds since the item was last accessed. */
    public long lastAccessSeconds() { return lastAccessSeconds; }
    /** Seconds before the item expires; -1 when it never expires. */
    public long ttlSeconds() { return ttlSeconds; }
    /** The CAS version. */
    public long cas() { return cas; }
    /** The stored value's size in bytes (as stored: compressed if it was). */
    public long size() { return size; }
    /** The flags word as stored (value-format bits included). */
    public int flags() { return flags; }

    @Override
    public String toString() {
        return "ItemInfo{hitBefore=" + hitBefore + ", lastAccess=" + lastAccessSeconds + "s, ttl="
            + (ttlSeconds < 0 ? "none" : ttlSeconds + "s") + ", cas=" + cas + ", size=" + size
            + ", flags=" + flags + "}";
    }
}

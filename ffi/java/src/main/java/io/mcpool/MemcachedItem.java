package io.mcpool;

/** A value with its CAS unique, from {@code gets} (as Whalin's MemcachedItem). */
public final class MemcachedItem {
    public final Object value;
    public final long casUnique;

    public MemcachedItem(Object value, long casUnique) {
        this.value = value;
        this.casUnique = casUnique;
    }

    public Object getValue() {
        return value;
    }

    public long getCasUnique() {
        return casUnique;
    }
}

package io.mcpool;

/**
 * What memcached answered to a compare-and-swap ({@link Mcpool#casResult}): the C ABI's
 * status of {@code mcpool_client_cas}, which tells a key that changed from a key that is
 * gone, where {@link Mcpool#cas} answers {@code false} for both. The first three are
 * spymemcached's {@code CASResponse} {@code OK}, {@code EXISTS} and {@code NOT_FOUND}.
 */
public enum CasResult {
    /** Stored: the item's CAS unique was still the one given ({@code MCPOOL_OK}). */
    OK,
    /** Not stored: someone changed the item since the CAS unique was read
     * ({@code MCPOOL_EXISTS}); read it again ({@link Mcpool#gets}) and retry. */
    EXISTS,
    /** Not stored: the item is gone (deleted, expired or evicted; {@code MCPOOL_NOT_FOUND}). */
    NOT_FOUND,
    /** Not stored, for a reason the server did not name ({@code MCPOOL_NOT_STORED}): memcached
     * answers a cas with one of the three above, so this is a server or proxy that answers
     * {@code NOT_STORED} instead; kept apart so that no answer is reported as another. */
    NOT_STORED;

    /** The result of a store's answer status (Native.OK, EXISTS, NOT_FOUND, NOT_STORED). */
    static CasResult of(int status) {
        switch (status) {
            case Native.OK: return OK;
            case Native.EXISTS: return EXISTS;
            case Native.NOT_FOUND: return NOT_FOUND;
            case Native.NOT_STORED: return NOT_STORED;
            default: throw new McpoolException(status, Native.statusName(status), "cas answered status " + status);
        }
    }
}

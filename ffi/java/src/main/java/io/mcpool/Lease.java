package io.mcpool;

/**
 * What {@link Mcpool#getLease} found (meta protocol only): a fresh value, or the right to
 * recompute it (this caller alone), or a request to wait while another caller recomputes.
 * Stale values come along with RECOMPUTE and WAIT when the item still exists.
 */
public final class Lease {
    /** The lease answer. */
    public enum State {
        /** A fresh value: use it. */
        HIT,
        /** This caller won the right to recompute the value and store it (an ordinary set);
         * {@link #value()} is the stale value, if any. */
        RECOMPUTE,
        /** Another caller is recomputing: serve the stale {@link #value()} if there is one,
         * or retry shortly. */
        WAIT
    }

    private final State state;
    private final Object value;
    private final long cas;

    Lease(int state, Object value, long cas) {
        this.state = state == 0 ? State.HIT : state == 1 ? State.RECOMPUTE : State.WAIT;
        this.value = value;
        this.cas = cas;
    }

    /** What the lease says to do: use the value, recompute it, or wait. */
    public State state() { return state; }
    /** The value (fresh for HIT, stale otherwise), or null when there is none. */
    public Object value() { return value; }
    /** The item's CAS unique (0 without a value). */
    public long cas() { return cas; }

    @Override
    public String toString() {
        return "Lease(" + state + (value == null ? "" : ", " + value) + ")";
    }
}

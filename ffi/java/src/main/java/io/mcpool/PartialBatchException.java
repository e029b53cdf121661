package io.mcpool;

import java.util.Collections;
import java.util.Map;

/**
 * A batch of writes ({@link Mcpool#setMulti}, {@code addMulti}, {@code replaceMulti},
 * {@code appendMulti}, {@code prependMulti}, {@code casMulti}, {@link Mcpool#casMultiResults},
 * {@code deleteMulti}, {@code touchMulti}, {@code incrMulti}, {@code decrMulti}) in which some
 * keys failed (a server down or timing
 * out, an error reply, a key or value refused before sending), thrown once every item was
 * tried. The other items were applied, so the exception says what became of each:
 * {@link #answers()} has every answered key's answer as the call would have returned it
 * ({@code Boolean} true/false, a {@link CasResult} from casMultiResults, an
 * {@code OptionalLong} from incrMulti/decrMulti), {@link #errors()}
 * each failed key's own exception (its class the core's for its status: a
 * {@link ConnectionException} for a key of a down server, a {@link TimeoutException}, a
 * {@link ServerException}, a {@link ClientException} for a refused key or value). A key in
 * neither map was not in the batch. Its {@link #status()} and cause are the first failed
 * key's, in the map's order; {@link #outcomeUnknown()} is true when any failed key's is (a
 * write sent whose outcome is unknown: read those keys back before repeating them). As
 * {@link PartialResultException} for multi-gets.
 *
 * <p>A batch that failed as a whole because its client was closed (by {@link Mcpool#close()}
 * before the call, or while it waited for a pooled connection: nothing answered, every item
 * MCPOOL_CLOSED) is not partial: it throws that {@link ClientException} (MCPOOL_CLOSED), as
 * {@code get}, {@code set} and {@code getMulti} do.
 */
public class PartialBatchException extends McpoolException {
    private static final long serialVersionUID = 1L;
    private final transient Map<String, Object> answers;
    private final transient Map<String, McpoolException> errors;

    PartialBatchException(String op, Map<String, ?> answers, Map<String, McpoolException> errors) {
        super(errors.size() + " key(s) of " + op + " failed (" + PartialResultException.someKeys(errors) + "), "
            + answers.size() + " answered: " + first(errors).getMessage(), errors);
        this.answers = Collections.unmodifiableMap(answers);
        this.errors = Collections.unmodifiableMap(errors);
    }

    /** Each answered key's answer, in the batch's order: {@code Boolean} (true stored,
     * deleted, touched; false not stored, missing, changed), or {@link CasResult} for
     * {@link Mcpool#casMultiResults}. Failed keys are absent. */
    public Map<String, Object> answers() {
        return answers;
    }

    /** Each failed key's exception, in the batch's order. */
    public Map<String, McpoolException> errors() {
        return errors;
    }
}

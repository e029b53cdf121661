/*
 * mcpool_jni.c: the JNI layer of the Java binding. It calls only include/mcpool.h.
 *
 * Rules kept here:
 *  - no hashing, protocol or value logic: bytes and flags in, bytes and flags out;
 *  - statuses 0..99 (answers) are returned to Java as ints; every status of 100 and above is
 *    thrown as an io.mcpool exception carrying the status and mcpool's last error message;
 *  - keys and values are copied out of Java arrays (GetByteArrayRegion) before any I/O, so no
 *    array is pinned and no critical region is held while a socket blocks;
 *  - loops that create Java objects delete each local reference before the next one;
 *  - text crosses as UTF-8 byte[] both ways (Java encodes and decodes it: io.mcpool.Utf8),
 *    never as a jstring: GetStringUTFChars/NewStringUTF speak modified UTF-8 (NUL as C0 80,
 *    characters outside the BMP as two three-byte surrogates), not the UTF-8 the core reads
 *    and writes. Only mcpool_version and mcpool_status_name, static ASCII, become jstrings;
 *  - user objects (the listeners, the resolver) are held by weak global references only: the
 *    Java client holds them strongly, so a listener that refers back to its client does not
 *    make the client a GC root (a strong global reference would: the Cleaner would never free
 *    it).
 *
 * The hot calls (store, get, delete, getMulti) keep JNI round trips to a minimum: lengths come
 * from Java (no GetArrayLength), keys and small values are copied to the stack (one
 * GetByteArrayRegion each), reads go through mcpool_client_get_into /
 * mcpool_client_get_multi_into into a stack or native scratch buffer (no mcpool_item, one
 * NewByteArray + SetByteArrayRegion per value), a multi-get hands its small values to Java as
 * one packed byte[] (Java slices it: no per-hit JNI calls), and a miss is an answer, never a
 * Java exception.
 */
#include <jni.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcpool.h"

#define KEY_STACK 1024
#define VALUE_STACK 8192
/* Multi-get: keys and per-key arrays on the stack up to these sizes, values up to
 * MULTI_SMALL bytes packed into one arena (itself on the stack up to ARENA_STACK bytes). */
#define MULTI_KEYS_STACK 4096
#define MULTI_N_STACK 128
#define MULTI_SMALL 4096
#define ARENA_STACK 8192

static jclass cls_client_exc, cls_config_exc, cls_connection_exc, cls_timeout_exc, cls_server_exc, cls_mcpool_exc;
static jclass cls_byte_array, cls_oom, cls_native;
static jmethodID mid_dispatch_event, mid_dispatch_operation, mid_dispatch_resolve;
static JavaVM *the_vm;
static jmethodID ctor_client_exc, ctor_config_exc, ctor_connection_exc, ctor_timeout_exc, ctor_server_exc,
    ctor_mcpool_exc;
static jfieldID fid_outcome_unknown; /* McpoolException.outcomeUnknown */

/* Threads this library attached to the JVM (a core thread running a callback) are detached
 * when they end: the key's destructor runs at the thread's exit, while the JVM still knows
 * it (HotSpot supports DetachCurrentThread from a TLS destructor). */
static pthread_key_t detach_key;
static int detach_key_ok;

static void detach_at_exit(void *unused) {
    (void)unused;
    if (the_vm != NULL) (*the_vm)->DetachCurrentThread(the_vm);
}

static jclass global_class(JNIEnv *env, const char *name) {
    jclass local = (*env)->FindClass(env, name);
    if (local == NULL) return NULL;
    jclass global = (jclass)(*env)->NewGlobalRef(env, local);
    (*env)->DeleteLocalRef(env, local);
    return global;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    (void)reserved;
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
    the_vm = vm;
    detach_key_ok = pthread_key_create(&detach_key, detach_at_exit) == 0;
    struct {
        jclass *cls;
        jmethodID *ctor;
        const char *name;
    } table[] = {
        {&cls_client_exc, &ctor_client_exc, "io/mcpool/ClientException"},
        {&cls_config_exc, &ctor_config_exc, "io/mcpool/ConfigurationException"},
        {&cls_connection_exc, &ctor_connection_exc, "io/mcpool/ConnectionException"},
        {&cls_timeout_exc, &ctor_timeout_exc, "io/mcpool/TimeoutException"},
        {&cls_server_exc, &ctor_server_exc, "io/mcpool/ServerException"},
        {&cls_mcpool_exc, &ctor_mcpool_exc, "io/mcpool/McpoolException"},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        *table[i].cls = global_class(env, table[i].name);
        if (*table[i].cls == NULL) return JNI_ERR;
        *table[i].ctor =
            (*env)->GetMethodID(env, *table[i].cls, "<init>", "(ILjava/lang/String;Ljava/lang/String;)V");
        if (*table[i].ctor == NULL) return JNI_ERR;
    }
    fid_outcome_unknown = (*env)->GetFieldID(env, cls_mcpool_exc, "outcomeUnknown", "Z");
    if (fid_outcome_unknown == NULL) return JNI_ERR;
    cls_byte_array = global_class(env, "[B");
    cls_oom = global_class(env, "java/lang/OutOfMemoryError");
    if (cls_byte_array == NULL || cls_oom == NULL) return JNI_ERR;
    cls_native = global_class(env, "io/mcpool/Native");
    if (cls_native == NULL) return JNI_ERR;
    mid_dispatch_event = (*env)->GetStaticMethodID(env, cls_native, "dispatchEvent", "(Ljava/lang/Object;I[BIJ)V");
    if (mid_dispatch_event == NULL) return JNI_ERR;
    mid_dispatch_operation = (*env)->GetStaticMethodID(env, cls_native, "dispatchOperation",
                                                       "(Ljava/lang/Object;[BII[B[BJII[BJJJ)V");
    if (mid_dispatch_operation == NULL) return JNI_ERR;
    mid_dispatch_resolve = (*env)->GetStaticMethodID(env, cls_native, "dispatchResolve", "(Ljava/lang/Object;[BIJ)I");
    if (mid_dispatch_resolve == NULL) return JNI_ERR;
    return JNI_VERSION_1_8;
}

/* Throws the exception for an error status, with this thread's last error message. The
 * class comes from the core's classifier (mcpool_status_class, docs/errors.md), the one map:
 * client error -> ClientException, configuration -> ConfigurationException (a
 * ClientException), server error (error replies, broken
 * replies, values that do not inflate) -> ServerException, timeout -> TimeoutException,
 * connection -> ConnectionException, anything else -> McpoolException. */
static jobject status_exception(JNIEnv *env, mcpool_status st);

static void throw_status(JNIEnv *env, mcpool_status st) {
    if ((*env)->ExceptionCheck(env)) return;
    jobject exc = status_exception(env, st);
    if (exc != NULL) (*env)->Throw(env, (jthrowable)exc);
    (*env)->DeleteLocalRef(env, exc);
}

/* The exception throw_status throws, made but not thrown (NULL with an exception pending if
 * it could not be made). */
static jobject status_exception_msg(JNIEnv *env, mcpool_status st, const char *msg, size_t len, bool unknown);

static jobject status_exception(JNIEnv *env, mcpool_status st) {
    return status_exception_msg(env, st, mcpool_last_error_message(), mcpool_last_error_length(),
                                mcpool_last_error_outcome_unknown());
}

/* As status_exception, with msg (len bytes of UTF-8) as the message and unknown as its
 * outcomeUnknown(): a batch item's own (mcpool_last_item_error_message,
 * mcpool_last_item_outcome_unknown). */
static jobject status_exception_msg(JNIEnv *env, mcpool_status st, const char *msg, size_t len, bool unknown) {
    jclass cls;
    jmethodID ctor;
    switch (mcpool_status_class(st)) {
    case MCPOOL_CLASS_CLIENT_ERROR:
        cls = cls_client_exc; ctor = ctor_client_exc;
        break;
    case MCPOOL_CLASS_CONFIGURATION:
        cls = cls_config_exc; ctor = ctor_config_exc;
        break;
    case MCPOOL_CLASS_SERVER_ERROR:
        cls = cls_server_exc; ctor = ctor_server_exc;
        break;
    case MCPOOL_CLASS_TIMEOUT:
        cls = cls_timeout_exc; ctor = ctor_timeout_exc;
        break;
    case MCPOOL_CLASS_CONNECTION:
        cls = cls_connection_exc; ctor = ctor_connection_exc;
        break;
    default:
        cls = cls_mcpool_exc; ctor = ctor_mcpool_exc;
    }
    jstring name = (*env)->NewStringUTF(env, mcpool_status_name((uint32_t)st));
    if (name == NULL) return NULL;
    /* The message is UTF-8 from Rust; NewStringUTF wants modified UTF-8, which agrees for
     * everything but NUL and supplementary characters: build it from bytes instead. */
    jstring jmsg = NULL;
    jbyteArray bytes = (*env)->NewByteArray(env, (jsize)len);
    if (bytes == NULL) return NULL;
    (*env)->SetByteArrayRegion(env, bytes, 0, (jsize)len, (const jbyte *)msg);
    jclass charsets = (*env)->FindClass(env, "io/mcpool/Native");
    if (charsets != NULL) {
        jmethodID utf8 = (*env)->GetStaticMethodID(env, charsets, "utf8", "([B)Ljava/lang/String;");
        if (utf8 != NULL) jmsg = (jstring)(*env)->CallStaticObjectMethod(env, charsets, utf8, bytes);
        (*env)->DeleteLocalRef(env, charsets);
    }
    (*env)->DeleteLocalRef(env, bytes);
    jobject exc = NULL;
    if (!(*env)->ExceptionCheck(env)) exc = (*env)->NewObject(env, cls, ctor, (jint)st, name, jmsg);
    if (exc != NULL && unknown) (*env)->SetBooleanField(env, exc, fid_outcome_unknown, JNI_TRUE);
    (*env)->DeleteLocalRef(env, name);
    (*env)->DeleteLocalRef(env, jmsg);
    return exc;
}

/* Whether an error status is the server's or the network's (timeout, connection, an error
 * reply, a reply that broke the protocol): what MemCachedClient turns into null/false/-1 as
 * Whalin did. The caller's own errors (bad key, bad argument, configuration) are not, nor is
 * a value that was read but cannot be delivered (MCPOOL_VALUE_FORMAT, MCPOOL_DECOMPRESS: the
 * key exists; Mcpool.unreadableValue on the Java side). */
static int server_side(mcpool_status st) {
    /* not a value that exists and cannot be read, nor a refused TLS certificate or SASL
     * login (a misconfiguration: thrown, tester finding tlssasl 1 / retest22 1) */
    if (st == MCPOOL_VALUE_FORMAT || st == MCPOOL_DECOMPRESS || st == MCPOOL_AUTH) return 0;
    mcpool_class c = mcpool_status_class(st);
    return c == MCPOOL_CLASS_SERVER_ERROR || c == MCPOOL_CLASS_TIMEOUT || c == MCPOOL_CLASS_CONNECTION;
}

/* Whether a status is an answer (ok, a miss, not stored, exists) rather than an error. */
static int is_answer(mcpool_status st) {
    mcpool_class c = mcpool_status_class(st);
    return c == MCPOOL_CLASS_OK || c == MCPOOL_CLASS_MISS || c == MCPOOL_CLASS_NOT_STORED;
}

/* Answers go back to Java as their status; errors are thrown (the returned value is then
 * ignored). */
static jint answer(JNIEnv *env, mcpool_status st) {
    if (!is_answer(st)) throw_status(env, st);
    return (jint)st;
}

/* The failed items' exceptions of a batch write, made as each item's message is known (never
 * later: a message read once the batch is over could be another item's or another call's,
 * tester finding batches 2). `arr` is NULL until an item fails, then an McpoolException[n]
 * that the native method returns (NULL: no item failed). */
typedef struct {
    jobjectArray arr;
    jsize n;
} item_errors;

/* Records item i's exception: status st (an error, not an answer) with msg (len bytes of
 * UTF-8) and unknown, the core's message and outcome for that item; an empty message leaves
 * the slot null (Java names the key and status). 0 with a Java exception pending. */
static int item_error(JNIEnv *env, item_errors *e, size_t i, mcpool_status st, const char *msg, size_t len,
                      bool unknown) {
    if (len == 0) return 1;
    if (e->arr == NULL) {
        e->arr = (*env)->NewObjectArray(env, e->n, cls_mcpool_exc, NULL);
        if (e->arr == NULL) return 0;
    }
    jobject exc = status_exception_msg(env, st, msg, len, unknown);
    if (exc == NULL) return 0;
    (*env)->SetObjectArrayElement(env, e->arr, (jsize)i, exc);
    (*env)->DeleteLocalRef(env, exc);
    return !(*env)->ExceptionCheck(env);
}

/* After a batch call that wrote a status per item (st, n of them; rc the call's own status):
 * each failed item's exception with its own message (mcpool_last_item_error_message), or,
 * when the call failed as a whole, that call's message for each. idx (NULL: the identity)
 * maps the batch's items to the Java call's. 0 with a Java exception pending. */
static int batch_errors(JNIEnv *env, item_errors *e, mcpool_status rc, const mcpool_status *st,
                        const size_t *idx, size_t n) {
    jobject whole = NULL; /* the call's own failure: one exception for every item */
    int ok = 1;
    for (size_t b = 0; b < n && ok; b++) {
        size_t i = idx != NULL ? idx[b] : b;
        if (rc == MCPOOL_OK) {
            if (is_answer(st[b])) continue;
            size_t mlen = 0;
            const char *msg = mcpool_last_item_error_message(b, &mlen);
            ok = item_error(env, e, i, st[b], msg, mlen, mcpool_last_item_outcome_unknown(b));
            continue;
        }
        if (whole == NULL) {
            if (e->arr == NULL) {
                e->arr = (*env)->NewObjectArray(env, e->n, cls_mcpool_exc, NULL);
                if (e->arr == NULL) return 0;
            }
            whole = status_exception(env, rc);
            if (whole == NULL) return 0;
        }
        (*env)->SetObjectArrayElement(env, e->arr, (jsize)i, whole);
        ok = !(*env)->ExceptionCheck(env);
    }
    if (whole != NULL) (*env)->DeleteLocalRef(env, whole);
    return ok;
}

static void throw_oom(JNIEnv *env, const char *what) {
    if (!(*env)->ExceptionCheck(env)) (*env)->ThrowNew(env, cls_oom, what);
}

/* A copy of a Java byte[]: on the stack when it fits, else malloc'd. */
typedef struct {
    uint8_t *ptr;
    size_t len;
    int heap;
} bytes_t;

static int bytes_get(JNIEnv *env, jbyteArray arr, uint8_t *stack, size_t stack_len, bytes_t *out) {
    out->ptr = NULL;
    out->len = 0;
    out->heap = 0;
    if (arr == NULL) return 1; /* NULL reaches mcpool, which refuses it with a status */
    jsize n = (*env)->GetArrayLength(env, arr);
    out->len = (size_t)n;
    if ((size_t)n <= stack_len) {
        out->ptr = stack;
    } else {
        out->ptr = malloc((size_t)n);
        if (out->ptr == NULL) {
            throw_oom(env, "mcpool: copying a value");
            return 0;
        }
        out->heap = 1;
    }
    (*env)->GetByteArrayRegion(env, arr, 0, n, (jbyte *)out->ptr);
    return 1;
}

/* As bytes_get, with the length already known on the Java side (no GetArrayLength call); an
 * out-of-range length leaves an ArrayIndexOutOfBoundsException pending (returns 0). */
static int bytes_get_n(JNIEnv *env, jbyteArray arr, jint n, uint8_t *stack, size_t stack_len,
                       bytes_t *out) {
    out->ptr = NULL;
    out->len = 0;
    out->heap = 0;
    if (arr == NULL) return 1;
    if (n < 0) n = 0;
    out->len = (size_t)n;
    if ((size_t)n <= stack_len) {
        out->ptr = stack;
    } else {
        out->ptr = malloc((size_t)n);
        if (out->ptr == NULL) {
            throw_oom(env, "mcpool: copying a value");
            return 0;
        }
        out->heap = 1;
    }
    if (n > 0) (*env)->GetByteArrayRegion(env, arr, 0, n, (jbyte *)out->ptr);
    if ((*env)->ExceptionCheck(env)) {
        if (out->heap) free(out->ptr);
        out->heap = 0;
        return 0;
    }
    return 1;
}

static void bytes_release(bytes_t *b) {
    if (b->heap) free(b->ptr);
}

/* Text from the core (UTF-8, len bytes, may hold any byte) as a Java byte[] for Java to
 * decode; NULL with an exception pending if Java could not make it. */
static jbyteArray new_bytes(JNIEnv *env, const char *p, size_t len) {
    if (len > (size_t)INT32_MAX) {
        throw_oom(env, "mcpool: text larger than a Java array");
        return NULL;
    }
    jbyteArray out = (*env)->NewByteArray(env, (jsize)len);
    if (out != NULL && len > 0) (*env)->SetByteArrayRegion(env, out, 0, (jsize)len, (const jbyte *)p);
    return out;
}

#define CLIENT(h) ((const mcpool_client *)(intptr_t)(h))
#define CONFIG(h) ((mcpool_config *)(intptr_t)(h))

/* ---------------------------------------------------------------------------------------- */
/* Library, configuration                                                                    */
/* ---------------------------------------------------------------------------------------- */

JNIEXPORT jstring JNICALL Java_io_mcpool_Native_version(JNIEnv *env, jclass cls) {
    (void)cls;
    return (*env)->NewStringUTF(env, mcpool_version());
}

JNIEXPORT jboolean JNICALL Java_io_mcpool_Native_tlsSupported(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return mcpool_tls_supported() ? JNI_TRUE : JNI_FALSE;
}

JNIEXPORT jstring JNICALL Java_io_mcpool_Native_statusName(JNIEnv *env, jclass cls, jint st) {
    (void)cls;
    return (*env)->NewStringUTF(env, mcpool_status_name((uint32_t)st));
}

/* seconds + nanos / 1e9 (a java.time.Duration: nanos 1..999999999 on top of seconds, which
 * may be negative) as a double strictly between seconds and seconds + 1, so that the core's
 * rule for fractions (mcpool_whole_seconds) sees a fraction where there is one: from 2^23 s
 * a nanosecond is below a double's step, and the plain sum would round to a whole number
 * (never rounded up) or to the next one. Beyond 2^53 s no double lies between: the sum as it
 * is (duration_whole takes a positive one apart; a negative one expires at once anyway). */
static double duration_seconds(int64_t seconds, int32_t nanos) {
    double v = (double)seconds + (double)nanos / 1e9;
    const int64_t exact = (int64_t)1 << 53;
    if (seconds > -exact && seconds < exact - 1) {
        double lo = (double)seconds, hi = (double)(seconds + 1);
        if (v <= lo) v = nextafter(lo, hi);
        if (v >= hi) v = nextafter(hi, lo);
    }
    return v;
}

/* A Duration (seconds, nanos 0..999999999 on top) as the whole seconds the core takes, by its
 * rule for fractions (mcpool_whole_seconds, through duration_seconds). From 2^53 s on no double
 * holds a fraction on top of the seconds (the step between doubles is 2 s there, 1024 s near
 * INT64_MAX), so the sum would land up to 512 s either side: a duration that ends after
 * INT64_MAX could come back as one that ends before it, answered as a moment nobody asked
 * for. There the core's rule is applied to the fraction alone, which is exact: a positive
 * fraction rounds up (to the next second; the 30-day line is far below), INT64_MAX at most
 * (a duration beyond INT64_MAX is then refused as too long, as it is). Far below 0 the sum as
 * it is: any negative duration expires the item at once. */
static int64_t duration_whole(int64_t seconds, int32_t nanos) {
    if (nanos == 0) return seconds;
    const int64_t exact = (int64_t)1 << 53;
    if (seconds >= exact - 1) {
        int64_t up = mcpool_whole_seconds((double)nanos / 1e9); /* 0 < fraction < 1: 1 */
        return seconds > INT64_MAX - up ? INT64_MAX : seconds + up;
    }
    return mcpool_whole_seconds(duration_seconds(seconds, nanos));
}

/* Mcpool.expiryFromNow: a duration (seconds, plus nanos 0..999999999 of a Duration; 0: whole
 * seconds as given) as the TTL the calls take, by the core's one rule
 * (mcpool_expiry_moment_from_now_checked; a fraction first by its rule for fractions,
 * mcpool_whole_seconds, at any size: duration_whole). A duration that ends after INT64_MAX
 * is refused by that rule ("invalid duration: N is too long: from now it ends after
 * 9223372036854775807, ..."), never answered as the capped INT64_MAX, a moment nobody asked
 * for (tester finding retest44 1: the unchecked form's cap was then refused as "invalid ttl:
 * 9223372036854775807 is above 2147483647"). The moment is then checked by the core (mcpool_expiry_checked,
 * "ttl"): one above MCPOOL_MAX_TTL (after 2038), which every call refuses and a jint cannot
 * hold, is thrown as its MCPOOL_INVALID_ARGUMENT. Either refusal names `call` (ASCII: the
 * Java call as written, e.g. "expiryFromNow(PT277777H46M40S)"). */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_expiryFromNow(JNIEnv *env, jclass cls, jlong seconds, jint nanos,
                                                           jbyteArray call) {
    (void)cls;
    char op[128] = "expiryFromNow";
    if (call != NULL) {
        jsize n = (*env)->GetArrayLength(env, call);
        if (n > (jsize)sizeof op - 1) n = (jsize)sizeof op - 1;
        (*env)->GetByteArrayRegion(env, call, 0, n, (jbyte *)op);
        op[n] = '\0';
    }
    int64_t whole = duration_whole((int64_t)seconds, (int32_t)nanos);
    int64_t moment = 0;
    uint32_t t = 0;
    mcpool_status st = mcpool_expiry_moment_from_now_checked(op, whole, &moment);
    if (st == MCPOOL_OK) st = mcpool_expiry_checked(op, NULL, 0, "ttl", moment, &t);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return -1;
    }
    return (jint)t; /* at most MCPOOL_MAX_TTL: a jint */
}

JNIEXPORT jlong JNICALL Java_io_mcpool_Native_configNew(JNIEnv *env, jclass cls) {
    (void)cls;
    mcpool_config *cfg = NULL;
    mcpool_status st = mcpool_config_new(&cfg);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return 0;
    }
    return (jlong)(intptr_t)cfg;
}

JNIEXPORT void JNICALL Java_io_mcpool_Native_configFree(JNIEnv *env, jclass cls, jlong cfg) {
    (void)env;
    (void)cls;
    mcpool_config_free(CONFIG(cfg));
}

/* addr: UTF-8 bytes (Java refuses negative weights before calling). */
JNIEXPORT void JNICALL Java_io_mcpool_Native_configAddServer(JNIEnv *env, jclass cls, jlong cfg,
                                                             jbyteArray addr, jint weight) {
    (void)cls;
    uint8_t stack[KEY_STACK];
    bytes_t a;
    if (!bytes_get(env, addr, stack, sizeof stack, &a)) return;
    /* a negative weight becomes 0, which the core refuses, naming the server (as setServers) */
    mcpool_status st = mcpool_config_add_server(CONFIG(cfg), (const char *)a.ptr, a.len,
                                                weight < 0 ? 0 : (uint32_t)weight);
    bytes_release(&a);
    answer(env, st);
}

/* One option of the core's table by name (mcpool_config_set): name and value are UTF-8
 * text; the core parses the value and names the option in its error. */
JNIEXPORT void JNICALL Java_io_mcpool_Native_configSet(JNIEnv *env, jclass cls, jlong cfg,
                                                       jbyteArray name, jbyteArray value) {
    (void)cls;
    uint8_t nstack[KEY_STACK], vstack[KEY_STACK];
    bytes_t n, v;
    if (!bytes_get(env, name, nstack, sizeof nstack, &n)) return;
    if (!bytes_get(env, value, vstack, sizeof vstack, &v)) {
        bytes_release(&n);
        return;
    }
    mcpool_status st = mcpool_config_set(CONFIG(cfg), (const char *)n.ptr, n.len, (const char *)v.ptr, v.len);
    bytes_release(&n);
    bytes_release(&v);
    answer(env, st);
}

/* The core's option table: how many, and each one's name and doc line (static ASCII). */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_optionCount(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return (jint)mcpool_option_count();
}

JNIEXPORT jstring JNICALL Java_io_mcpool_Native_optionName(JNIEnv *env, jclass cls, jint i, jboolean doc) {
    (void)cls;
    const char *t = i < 0 ? NULL : doc ? mcpool_option_doc((size_t)i) : mcpool_option_name((size_t)i);
    return t == NULL ? NULL : (*env)->NewStringUTF(env, t);
}

/* The number of the option a name (UTF-8 bytes, as the caller wrote it) names, by the core's
 * one rule for option names (mcpool_option_find: space around it trimmed, case ignored, - as
 * _), or -1 for none: the binding keeps no spelling rule of its own (tester finding
 * retest40 5: Java's trim() kept a no-break space the core trims). */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_optionFind(JNIEnv *env, jclass cls, jbyteArray name) {
    (void)cls;
    uint8_t stack[KEY_STACK];
    bytes_t n;
    if (!bytes_get(env, name, stack, sizeof stack, &n)) return -1;
    size_t i = 0;
    mcpool_status st = mcpool_option_find((const char *)n.ptr, n.len, &i);
    bytes_release(&n);
    return st == MCPOOL_OK && i <= (size_t)INT32_MAX ? (jint)i : -1;
}

JNIEXPORT jboolean JNICALL Java_io_mcpool_Native_optionIsSecret(JNIEnv *env, jclass cls, jint i) {
    (void)env;
    (void)cls;
    return i >= 0 && mcpool_option_is_secret((size_t)i) ? JNI_TRUE : JNI_FALSE;
}

/* A server address (UTF-8 bytes) as the core's errors show it (mcpool_address_shown: a
 * user:password@ before the host hidden, bytes not UTF-8 escaped), as UTF-8 bytes: the one
 * rule for the binding's own messages that name an address (Utf8.address). */
JNIEXPORT jbyteArray JNICALL Java_io_mcpool_Native_addressShown(JNIEnv *env, jclass cls, jbyteArray addr) {
    (void)cls;
    uint8_t astack[KEY_STACK];
    char stack[KEY_STACK];
    bytes_t a;
    if (!bytes_get(env, addr, astack, sizeof astack, &a)) return NULL;
    size_t n = 0;
    mcpool_status st = mcpool_address_shown((const char *)a.ptr, a.len, stack, sizeof stack, &n);
    jbyteArray out = NULL;
    if (st != MCPOOL_OK) {
        answer(env, st);
    } else if (n <= sizeof stack) {
        out = new_bytes(env, stack, n);
    } else {
        /* longer than the stack buffer: again into one of the length it gave */
        char *heap = malloc(n);
        size_t m = 0;
        if (heap == NULL) {
            throw_oom(env, "mcpool: showing an address");
        } else if ((st = mcpool_address_shown((const char *)a.ptr, a.len, heap, n, &m)) != MCPOOL_OK) {
            answer(env, st);
        } else {
            out = new_bytes(env, heap, m < n ? m : n);
        }
        free(heap);
    }
    bytes_release(&a);
    return out;
}

/* ---------------------------------------------------------------------------------------- */
/* Client                                                                                    */
/* ---------------------------------------------------------------------------------------- */

JNIEXPORT jlong JNICALL Java_io_mcpool_Native_clientNew(JNIEnv *env, jclass cls, jlong cfg) {
    (void)cls;
    mcpool_client *client = NULL;
    mcpool_status st = mcpool_client_new(CONFIG(cfg), &client);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return 0;
    }
    return (jlong)(intptr_t)client;
}

/* Closes the client (mcpool_client_close): calls in line for a connection and later ones end
 * with MCPOOL_CLOSED; the handle stays valid until clientFree. */
JNIEXPORT void JNICALL Java_io_mcpool_Native_clientClose(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    mcpool_client_close((mcpool_client *)(intptr_t)h);
}

/* Closes the client's connections (mcpool_client_disconnect_all): idle ones now, those in
 * use when their call gives them back; the next call to a server opens a new one. */
JNIEXPORT void JNICALL Java_io_mcpool_Native_disconnectAll(JNIEnv *env, jclass cls, jlong h) {
    (void)cls;
    answer(env, mcpool_client_disconnect_all(CLIENT(h)));
}

JNIEXPORT void JNICALL Java_io_mcpool_Native_clientFree(JNIEnv *env, jclass cls, jlong h) {
    (void)env;
    (void)cls;
    mcpool_client_free((mcpool_client *)(intptr_t)h);
}

/* Replaces the server list (mcpool_client_set_servers): the addresses' UTF-8 bytes one
 * after another in addrs, each one's length in lens, its weight in weights. */
JNIEXPORT void JNICALL Java_io_mcpool_Native_setServers(JNIEnv *env, jclass cls, jlong h,
                                                        jbyteArray addrs, jintArray lens,
                                                        jintArray weights) {
    (void)cls;
    if (addrs == NULL || lens == NULL || weights == NULL) {
        answer(env, mcpool_client_set_servers(CLIENT(h), NULL, NULL, NULL, 1));
        return;
    }
    jsize n = (*env)->GetArrayLength(env, lens);
    jsize ab = (*env)->GetArrayLength(env, addrs);
    if ((*env)->GetArrayLength(env, weights) != n) {
        answer(env, mcpool_client_set_servers(CLIENT(h), NULL, NULL, NULL, 1));
        return;
    }
    size_t un = (size_t)n;
    uint8_t *blob = malloc(ab > 0 ? (size_t)ab : 1);
    const char **specs = calloc(un + 1, sizeof *specs);
    size_t *sl = calloc(un + 1, sizeof *sl);
    uint32_t *ws = calloc(un + 1, sizeof *ws);
    jint *jl = calloc(un + 1, sizeof *jl), *jw = calloc(un + 1, sizeof *jw);
    if (blob == NULL || specs == NULL || sl == NULL || ws == NULL || jl == NULL || jw == NULL) {
        throw_oom(env, "mcpool: set-servers buffers");
        goto out;
    }
    if (ab > 0) (*env)->GetByteArrayRegion(env, addrs, 0, ab, (jbyte *)blob);
    if (n > 0) {
        (*env)->GetIntArrayRegion(env, lens, 0, n, jl);
        (*env)->GetIntArrayRegion(env, weights, 0, n, jw);
    }
    if ((*env)->ExceptionCheck(env)) goto out;
    size_t off = 0;
    for (size_t i = 0; i < un; i++) {
        if (jl[i] < 0 || off + (size_t)jl[i] > (size_t)ab) {
            answer(env, mcpool_client_set_servers(CLIENT(h), NULL, NULL, NULL, 1));
            goto out;
        }
        specs[i] = (const char *)blob + off;
        sl[i] = (size_t)jl[i];
        /* a negative weight becomes 0, which the core refuses, naming the server */
        ws[i] = jw[i] < 0 ? 0 : (uint32_t)jw[i];
        off += (size_t)jl[i];
    }
    answer(env, mcpool_client_set_servers(CLIENT(h), specs, sl, ws, un));
out:
    free(blob);
    free(specs);
    free(sl);
    free(ws);
    free(jl);
    free(jw);
}

JNIEXPORT jint JNICALL Java_io_mcpool_Native_serverCount(JNIEnv *env, jclass cls, jlong h) {
    (void)cls;
    size_t n = 0;
    mcpool_status st = mcpool_client_server_count(CLIENT(h), &n);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return 0;
    }
    return (jint)n;
}

/* The client's value format, as the core names it (ASCII: a plain jstring is exact). */
JNIEXPORT jstring JNICALL Java_io_mcpool_Native_valueFormat(JNIEnv *env, jclass cls, jlong h) {
    (void)cls;
    const char *name = NULL;
    size_t len = 0;
    mcpool_status st = mcpool_client_value_format(CLIENT(h), &name, &len);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return NULL;
    }
    return (*env)->NewStringUTF(env, name);
}

JNIEXPORT jbyteArray JNICALL Java_io_mcpool_Native_serverLabel(JNIEnv *env, jclass cls, jlong h,
                                                               jint index) {
    (void)cls;
    const char *label = NULL;
    size_t len = 0;
    mcpool_status st = mcpool_client_server_label(CLIENT(h), (size_t)index, &label, &len);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return NULL;
    }
    return new_bytes(env, label, len);
}

JNIEXPORT jint JNICALL Java_io_mcpool_Native_serverFor(JNIEnv *env, jclass cls, jlong h,
                                                       jbyteArray key) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return -1;
    size_t index = 0;
    mcpool_status st = mcpool_client_server_for(CLIENT(h), k.ptr, k.len, &index);
    bytes_release(&k);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return -1;
    }
    return (jint)index;
}

JNIEXPORT jint JNICALL Java_io_mcpool_Native_metricCount(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return (jint)mcpool_metric_count();
}

/* A metric's name (static ASCII), or null past the end. */
JNIEXPORT jstring JNICALL Java_io_mcpool_Native_metricName(JNIEnv *env, jclass cls, jint metric) {
    (void)cls;
    const char *name = metric < 0 ? NULL : mcpool_metric_name((uint32_t)metric);
    return name == NULL ? NULL : (*env)->NewStringUTF(env, name);
}

/* The core's snapshot of the client's servers (mcpool_client_metrics: no I/O), freed by the
 * caller with mcpool_metrics_free; NULL with the exception thrown. */
static mcpool_metrics *take_snapshot(JNIEnv *env, jlong h) {
    mcpool_metrics *snap = NULL;
    mcpool_status st = mcpool_client_metrics(CLIENT(h), &snap);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return NULL;
    }
    return snap;
}

/* The core's snapshot in the Prometheus text exposition format (mcpool_metrics_prometheus). */
JNIEXPORT jbyteArray JNICALL Java_io_mcpool_Native_metricsPrometheus(JNIEnv *env, jclass cls, jlong h) {
    (void)cls;
    mcpool_metrics *snap = take_snapshot(env, h);
    if (snap == NULL)
        return NULL;
    const char *text = NULL;
    size_t len = 0;
    jbyteArray out = NULL;
    mcpool_status st = mcpool_metrics_prometheus(snap, &text, &len);
    if (st != MCPOOL_OK)
        throw_status(env, st);
    else
        out = new_bytes(env, text, len); /* UTF-8 (a label may hold any server name) */
    mcpool_metrics_free(snap);
    return out;
}

/* A snapshot of every server's metrics and health, one entry per address (the core merges
 * a repeated address): {byte[][] labels, long[] values (servers * metricCount, server-major,
 * in mcpool_metric's numbering), long[] states (servers * 3: alive 0/1, consecutive
 * failures, ms until retried)}. */
JNIEXPORT jobjectArray JNICALL Java_io_mcpool_Native_snapshot(JNIEnv *env, jclass cls, jlong h) {
    (void)cls;
    mcpool_metrics *snap = take_snapshot(env, h);
    if (snap == NULL)
        return NULL;
    size_t servers = mcpool_metrics_len(snap), count = mcpool_metric_count();
    jobjectArray out = NULL, labels = NULL;
    jlongArray values = NULL, states = NULL;
    if (servers > (size_t)INT32_MAX / 3 || (servers > 0 && count > (size_t)INT32_MAX / servers)) {
        throw_oom(env, "mcpool: metrics snapshot");
        goto done;
    }
    labels = (*env)->NewObjectArray(env, (jsize)servers, cls_byte_array, NULL);
    values = labels ? (*env)->NewLongArray(env, (jsize)(servers * count)) : NULL;
    states = values ? (*env)->NewLongArray(env, (jsize)(servers * 3)) : NULL;
    if (states == NULL) goto done;
    for (size_t i = 0; i < servers; i++) {
        const char *label = NULL;
        size_t len = 0;
        if (mcpool_metrics_label(snap, i, &label, &len) != MCPOOL_OK) label = "", len = 0;
        jbyteArray jl = new_bytes(env, label, len);
        if (jl == NULL) goto done;
        (*env)->SetObjectArrayElement(env, labels, (jsize)i, jl);
        (*env)->DeleteLocalRef(env, jl);
        for (size_t m = 0; m < count; m++) {
            uint64_t v = 0;
            mcpool_metrics_get(snap, i, (uint32_t)m, &v);
            jlong jv = (jlong)v;
            (*env)->SetLongArrayRegion(env, values, (jsize)(i * count + m), 1, &jv);
        }
        bool alive = false;
        uint32_t failures = 0;
        uint64_t retry = 0;
        mcpool_metrics_state(snap, i, &alive, &failures, &retry);
        jlong sv[3] = {alive ? 1 : 0, (jlong)failures, (jlong)retry};
        (*env)->SetLongArrayRegion(env, states, (jsize)(i * 3), 3, sv);
    }
    out = (*env)->NewObjectArray(env, 3, (*env)->FindClass(env, "java/lang/Object"), NULL);
    if (out != NULL) {
        (*env)->SetObjectArrayElement(env, out, 0, labels);
        (*env)->SetObjectArrayElement(env, out, 1, values);
        (*env)->SetObjectArrayElement(env, out, 2, states);
    }
done:
    mcpool_metrics_free(snap);
    return out;
}

/* The JNIEnv of the thread a callback runs on (the calling thread, or a core thread the
 * work was handed to): a thread that is not a Java thread is attached as a daemon thread and
 * detached when it ends (detach_key). NULL when the JVM cannot give one: the callback is
 * then skipped. */
static JNIEnv *callback_env(void) {
    JNIEnv *env = NULL;
    if (the_vm == NULL) return NULL;
    jint got = (*the_vm)->GetEnv(the_vm, (void **)&env, JNI_VERSION_1_8);
    if (got == JNI_OK) return env;
    if (got != JNI_EDETACHED) return NULL;
    if ((*the_vm)->AttachCurrentThreadAsDaemon(the_vm, (void **)&env, NULL) != JNI_OK) return NULL;
    if (detach_key_ok) pthread_setspecific(detach_key, &detach_key); /* any non-NULL value */
    return env;
}

/* The listeners cross as weak global references (userdata): the Java client (NativeClient)
 * holds each listener strongly, so a listener that refers back to its client keeps nothing
 * alive, and the Cleaner can free a client dropped unclosed. Each callback takes a local
 * reference first and is skipped when the listener is gone: its client was unreachable
 * (being cleaned), so nobody is left to tell. The weak reference itself is deleted
 * (releaseRef) only after mcpool_client_free, when the core no longer calls back. */

/* The event callback: hands the event to Native.dispatchEvent(listener, ...) on whatever
 * thread the core runs it (callback_env). A Java exception never unwinds into the core:
 * dispatchEvent catches everything, and anything left pending is cleared here. */
static void event_callback(void *userdata, const mcpool_event *event) {
    if (userdata == NULL) return;
    JNIEnv *env = callback_env();
    if (env == NULL) return;
    /* An exception already pending (the event fired inside a call that failed on the Java
     * side) must survive the callback: JNI forbids most calls while one is pending. */
    jthrowable pending = (*env)->ExceptionOccurred(env);
    if (pending != NULL) (*env)->ExceptionClear(env);
    if ((*env)->PushLocalFrame(env, 8) == 0) {
        jobject listener = (*env)->NewLocalRef(env, (jweak)userdata); /* NULL: collected */
        if (listener != NULL) {
            size_t len = 0;
            const char *server = mcpool_event_server(event, &len);
            jbyteArray label = new_bytes(env, server, len);
            if (label != NULL)
                (*env)->CallStaticVoidMethod(env, cls_native, mid_dispatch_event, listener,
                                             (jint)mcpool_event_kind(event), label,
                                             (jint)mcpool_event_failures(event),
                                             (jlong)mcpool_event_retry_in_ms(event));
        }
        if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
        (*env)->PopLocalFrame(env, NULL);
    }
    if (pending != NULL) {
        (*env)->Throw(env, pending);
        (*env)->DeleteLocalRef(env, pending);
    }
}

/* A weak global reference to obj for a configuration's callback (0 with an exception pending
 * when the JVM cannot make one). */
static jweak callback_ref(JNIEnv *env, jobject obj, const char *what) {
    jweak ref = (*env)->NewWeakGlobalRef(env, obj);
    if (ref == NULL) throw_oom(env, what);
    return ref;
}

/* Makes listener (a ServerEventListener) the configuration's event callback: returns the
 * weak global reference the callback uses, which the caller keeps until every client built
 * from the configuration is freed, then releases (releaseRef); the caller also keeps the
 * listener itself reachable for as long (NativeClient). */
JNIEXPORT jlong JNICALL Java_io_mcpool_Native_configSetEventListener(JNIEnv *env, jclass cls,
                                                                      jlong cfg, jobject listener) {
    (void)cls;
    if (listener == NULL) return 0;
    jweak ref = callback_ref(env, listener, "mcpool: event listener");
    if (ref == NULL) return 0;
    mcpool_status st = mcpool_config_set_event_callback(CONFIG(cfg), event_callback, ref);
    if (st != MCPOOL_OK) {
        (*env)->DeleteWeakGlobalRef(env, ref);
        throw_status(env, st);
        return 0;
    }
    return (jlong)(intptr_t)ref;
}

/* The per-operation callback (docs/tracing.md): hands the record to
 * Native.dispatchOperation(dispatch, ...) on the thread that made the call (callback_env). As
 * for events, no Java exception unwinds into the core: dispatchOperation catches and counts,
 * anything left pending is cleared, and an exception pending before the callback is kept. */
static void op_callback(void *userdata, const mcpool_op_record *r) {
    if (userdata == NULL) return;
    JNIEnv *env = callback_env();
    if (env == NULL) return;
    jthrowable pending = (*env)->ExceptionOccurred(env);
    if (pending != NULL) (*env)->ExceptionClear(env);
    if ((*env)->PushLocalFrame(env, 8) == 0) {
        jobject dispatch = (*env)->NewLocalRef(env, (jweak)userdata); /* NULL: collected */
        if (dispatch != NULL) {
            size_t nl = 0, sl = 0, el = 0;
            const char *name = mcpool_op_name(r, &nl);
            const char *server = mcpool_op_server(r, &sl);
            const char *err = mcpool_op_error_message(r, &el);
            const char *proto = mcpool_op_protocol(r);
            jbyteArray jop = new_bytes(env, name, nl);
            jbyteArray jserver = jop ? new_bytes(env, server, sl) : NULL;
            jbyteArray jproto = jserver ? new_bytes(env, proto, strlen(proto)) : NULL;
            jbyteArray jerr = jproto ? new_bytes(env, err, el) : NULL;
            if (jerr != NULL)
                (*env)->CallStaticVoidMethod(env, cls_native, mid_dispatch_operation, dispatch, jop,
                                             (jint)mcpool_op_keys(r), (jint)mcpool_op_hits(r), jserver, jproto,
                                             (jlong)mcpool_op_duration_ns(r), (jint)mcpool_op_outcome_of(r),
                                             (jint)mcpool_op_error_class(r), jerr,
                                             (jlong)mcpool_op_bytes_sent(r), (jlong)mcpool_op_bytes_received(r),
                                             (jlong)mcpool_op_ended_ago_ns(r));
        }
        if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
        (*env)->PopLocalFrame(env, NULL);
    }
    if (pending != NULL) {
        (*env)->Throw(env, pending);
        (*env)->DeleteLocalRef(env, pending);
    }
}

/* Makes dispatch (a Native.OperationDispatch) the configuration's per-operation callback:
 * returns the weak global reference the callback uses, kept and released (releaseRef) as the
 * event listener's, the dispatch itself kept reachable by the caller (NativeClient). */
JNIEXPORT jlong JNICALL Java_io_mcpool_Native_configSetOperationListener(JNIEnv *env, jclass cls,
                                                                          jlong cfg, jobject dispatch) {
    (void)cls;
    if (dispatch == NULL) return 0;
    jweak ref = callback_ref(env, dispatch, "mcpool: operation listener");
    if (ref == NULL) return 0;
    mcpool_status st = mcpool_config_set_operation_callback(CONFIG(cfg), op_callback, ref);
    if (st != MCPOOL_OK) {
        (*env)->DeleteWeakGlobalRef(env, ref);
        throw_status(env, st);
        return 0;
    }
    return (jlong)(intptr_t)ref;
}

/* Deletes a weak global reference of configSetEventListener or configSetOperationListener (0:
 * nothing), once every client using it is freed. */
JNIEXPORT void JNICALL Java_io_mcpool_Native_releaseRef(JNIEnv *env, jclass cls, jlong ref) {
    (void)cls;
    if (ref != 0) (*env)->DeleteWeakGlobalRef(env, (jweak)(intptr_t)ref);
}

/* The resolver (mcpool_config_set_resolver_owned). Unlike the listeners' callbacks, the core
 * calls it on a helper thread of its own, possibly after mcpool_client_free (a stalled call
 * returns when it returns), so its userdata is a block of its own that the library frees
 * (resolver_block_free) once nothing can call the resolver any more: the JVM and a weak global
 * reference to the Resolver, which the Java client holds strongly (as the listeners, so a
 * resolver that refers to its client keeps nothing alive). */
struct resolver_block {
    JavaVM *vm;
    jweak resolver;
};

/* Resolver blocks made and not yet freed (Native.resolverBlocks, for the tests). */
static long resolver_blocks;

/* Says why the resolver found no address (static ASCII). */
static void resolver_reason(mcpool_resolved *out, const char *reason) {
    (void)mcpool_resolved_set_reason(out, reason, strlen(reason));
}

/* The JNIEnv of the thread the core runs a resolver call or a free on: a thread the JVM does
 * not know (the core's own) is attached as a daemon thread named mcpool-resolve, and *attached
 * set, so that the caller detaches it when done. NULL when the JVM gives none (it is going
 * away). */
static JNIEnv *resolver_env(JavaVM *vm, int *attached) {
    JNIEnv *env = NULL;
    *attached = 0;
    if (vm == NULL) return NULL;
    jint got = (*vm)->GetEnv(vm, (void **)&env, JNI_VERSION_1_8);
    if (got == JNI_OK) return env;
    if (got != JNI_EDETACHED) return NULL;
    JavaVMAttachArgs args = {JNI_VERSION_1_8, (char *)"mcpool-resolve", NULL};
    env = NULL;
    if ((*vm)->AttachCurrentThreadAsDaemon(vm, (void **)&env, &args) != JNI_OK || env == NULL) return NULL;
    *attached = 1;
    return env;
}

/* The resolver callback: hands the host (UTF-8 bytes) and port to Native.dispatchResolve,
 * which asks the Resolver, adds each address it answers with mcpool_resolved_add (Native.
 * resolvedAdd) and returns 0, or sets the reason (Native.resolvedSetReason) and returns 1.
 * No Java exception, and nothing else, unwinds into the core: dispatchResolve catches
 * everything, and anything still pending is cleared here. */
static int resolver_callback(void *userdata, const char *host, size_t host_len, uint16_t port,
                             mcpool_resolved *out) {
    struct resolver_block *block = userdata;
    if (block == NULL) return 1;
    int attached = 0;
    JNIEnv *env = resolver_env(block->vm, &attached);
    if (env == NULL) {
        resolver_reason(out, "the resolver could not run: the JVM did not attach the library's thread");
        return 1;
    }
    /* (The core's threads have none; kept for a thread the JVM knows, as the listeners do.) */
    jthrowable pending = (*env)->ExceptionOccurred(env);
    if (pending != NULL) (*env)->ExceptionClear(env);
    int rc = 1;
    if ((*env)->PushLocalFrame(env, 8) == 0) {
        jobject resolver = (*env)->NewLocalRef(env, block->resolver); /* NULL: collected */
        if (resolver == NULL) {
            if (!(*env)->ExceptionCheck(env))
                resolver_reason(out, "the resolver is gone: its client was closed or dropped");
        } else {
            jbyteArray jhost = new_bytes(env, host, host_len);
            if (jhost != NULL) {
                jint r = (*env)->CallStaticIntMethod(env, cls_native, mid_dispatch_resolve, resolver, jhost,
                                                     (jint)port, (jlong)(intptr_t)out);
                if (!(*env)->ExceptionCheck(env) && r == 0) rc = 0;
            }
        }
        if ((*env)->ExceptionCheck(env)) {
            (*env)->ExceptionClear(env);
            rc = 1;
            resolver_reason(out, "the resolver could not be asked: the JVM threw (out of memory?)");
        }
        (*env)->PopLocalFrame(env, NULL);
    } else {
        (*env)->ExceptionClear(env);
        resolver_reason(out, "the resolver could not be asked: the JVM is out of memory");
    }
    if (pending != NULL) {
        (*env)->Throw(env, pending);
        (*env)->DeleteLocalRef(env, pending);
    }
    if (attached) (*block->vm)->DetachCurrentThread(block->vm);
    return rc;
}

/* Frees a resolver block (mcpool_userdata_free): called once by the library, on any thread,
 * when nothing can call the resolver any more; or here, when the configuration refused it.
 * Deletes the weak global reference (safe with an exception pending); a JVM that gives no
 * JNIEnv any more is going away, and the reference with it. */
static void resolver_block_free(void *userdata) {
    struct resolver_block *block = userdata;
    if (block == NULL) return;
    int attached = 0;
    JNIEnv *env = resolver_env(block->vm, &attached);
    if (env != NULL) (*env)->DeleteWeakGlobalRef(env, block->resolver);
    if (attached) (*block->vm)->DetachCurrentThread(block->vm);
    __atomic_sub_fetch(&resolver_blocks, 1, __ATOMIC_ACQ_REL);
    free(block);
}

/* Makes resolver (an io.mcpool.Resolver) the configuration's resolver: a block holding the JVM
 * and a weak global reference to it, handed to the library (mcpool_config_set_resolver_owned),
 * which frees it. The caller keeps the resolver reachable while its clients are (NativeClient). */
JNIEXPORT void JNICALL Java_io_mcpool_Native_configSetResolver(JNIEnv *env, jclass cls, jlong cfg,
                                                               jobject resolver) {
    (void)cls;
    if (resolver == NULL) {
        throw_status(env, mcpool_config_set_resolver_owned(CONFIG(cfg), NULL, NULL, NULL));
        return;
    }
    JavaVM *vm = NULL;
    if ((*env)->GetJavaVM(env, &vm) != JNI_OK || vm == NULL) {
        throw_oom(env, "mcpool: resolver (no JavaVM)");
        return;
    }
    struct resolver_block *block = malloc(sizeof *block);
    if (block == NULL) {
        throw_oom(env, "mcpool: resolver");
        return;
    }
    block->vm = vm;
    block->resolver = callback_ref(env, resolver, "mcpool: resolver");
    if (block->resolver == NULL) {
        free(block);
        return;
    }
    __atomic_add_fetch(&resolver_blocks, 1, __ATOMIC_ACQ_REL);
    mcpool_status st = mcpool_config_set_resolver_owned(CONFIG(cfg), resolver_callback, block, resolver_block_free);
    if (st != MCPOOL_OK) {
        resolver_block_free(block); /* refused: still ours */
        throw_status(env, st);
    }
}

/* mcpool_resolved_add for the running resolver callback's answer out: the core's refusal
 * (text that is no IP literal, a 65th address) thrown with its message. */
JNIEXPORT void JNICALL Java_io_mcpool_Native_resolvedAdd(JNIEnv *env, jclass cls, jlong out, jbyteArray ip,
                                                         jint port) {
    (void)cls;
    uint8_t stack[128];
    bytes_t b;
    if (!bytes_get(env, ip, stack, sizeof stack, &b)) return;
    mcpool_status st = port < 0 || port > 65535
        ? MCPOOL_INVALID_ARGUMENT
        : mcpool_resolved_add((mcpool_resolved *)(intptr_t)out, (const char *)b.ptr, b.len, (uint16_t)port);
    bytes_release(&b);
    if (st != MCPOOL_OK) throw_status(env, st);
}

/* mcpool_resolved_set_reason for the running resolver callback's answer out (UTF-8 bytes, at
 * most 1024: Java cuts it); a reason the core refuses is left out. */
JNIEXPORT void JNICALL Java_io_mcpool_Native_resolvedSetReason(JNIEnv *env, jclass cls, jlong out,
                                                               jbyteArray reason) {
    (void)cls;
    uint8_t stack[1024];
    bytes_t b;
    if (!bytes_get(env, reason, stack, sizeof stack, &b)) return;
    (void)mcpool_resolved_set_reason((mcpool_resolved *)(intptr_t)out, (const char *)b.ptr, b.len);
    bytes_release(&b);
}

JNIEXPORT jlong JNICALL Java_io_mcpool_Native_resolverBlocks(JNIEnv *env, jclass cls) {
    (void)env;
    (void)cls;
    return (jlong)__atomic_load_n(&resolver_blocks, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------------------------------- */
/* Commands                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Every TTL Java hands a store, touch or counter below is a jint: mcpool_expiry_from_signed
 * makes a negative one MCPOOL_EXPIRED_AT_ONCE and keeps any other, at most 2^31-1 =
 * MCPOOL_MAX_TTL, so none of them is out of range. A 64-bit time (a Whalin Date's seconds)
 * goes through storeExpiry first, the core's check, and reaches a store as its jint. */

/* op: 0 set, 1 add, 2 replace, 3 append, 4 prepend, 5 cas. Returns the answer status. */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_store(JNIEnv *env, jclass cls, jlong h, jint op,
                                                   jbyteArray key, jint key_len, jbyteArray value,
                                                   jint value_len, jint flags, jint ttl, jlong cas) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    uint8_t vstack[VALUE_STACK];
    bytes_t k, v;
    if (!bytes_get_n(env, key, key_len, kstack, sizeof kstack, &k)) return -1;
    if (!bytes_get_n(env, value, value_len, vstack, sizeof vstack, &v)) {
        bytes_release(&k);
        return -1;
    }
    const mcpool_client *c = CLIENT(h);
    uint32_t f = (uint32_t)flags, t = mcpool_expiry_from_signed(ttl);
    mcpool_status st;
    switch (op) {
    case 0: st = mcpool_client_set(c, k.ptr, k.len, v.ptr, v.len, f, t); break;
    case 1: st = mcpool_client_add(c, k.ptr, k.len, v.ptr, v.len, f, t); break;
    case 2: st = mcpool_client_replace(c, k.ptr, k.len, v.ptr, v.len, f, t); break;
    case 3: st = mcpool_client_append(c, k.ptr, k.len, v.ptr, v.len); break;
    case 4: st = mcpool_client_prepend(c, k.ptr, k.len, v.ptr, v.len); break;
    case 5: st = mcpool_client_cas(c, k.ptr, k.len, v.ptr, v.len, f, t, (uint64_t)cas); break;
    default: st = mcpool_client_set(NULL, NULL, 0, NULL, 0, 0, 0);
    }
    bytes_release(&k);
    bytes_release(&v);
    return answer(env, st);
}

/* Where mcpool_client_get_into copies a value: the caller's stack buffer when it fits, else
 * malloc'd; the Java array is made once the value is read (never pinned during I/O). */
typedef struct {
    uint8_t *stack;
    size_t stack_len;
    uint8_t *heap;
    size_t len;
    int too_big;
} sink_t;

static void *sink_alloc(void *userdata, size_t len) {
    sink_t *s = userdata;
    s->len = len;
    if (len > (size_t)INT32_MAX) {
        s->too_big = 1;
        return NULL;
    }
    free(s->heap); /* called once per value; be safe should that ever change */
    s->heap = NULL;
    if (len <= s->stack_len) return s->stack;
    s->heap = malloc(len);
    return s->heap;
}

/* A stored value of a kind (the core's value format sets the flags and wire form): op 0 set,
 * 1 add, 2 replace, 5 cas; kind as mcpool_kind (Kind.ordinal()); compress and threshold as
 * mcpool_client_store_kind_compress (1: the client's rule; 3: on, with this threshold).
 * Returns the answer status. */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_storeKind(JNIEnv *env, jclass cls, jlong h, jint op,
                                                       jbyteArray key, jint key_len, jint kind,
                                                       jbyteArray value, jint value_len, jint ttl,
                                                       jlong cas, jint compress, jlong threshold) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    uint8_t vstack[VALUE_STACK];
    bytes_t k, v;
    if (!bytes_get_n(env, key, key_len, kstack, sizeof kstack, &k)) return -1;
    if (!bytes_get_n(env, value, value_len, vstack, sizeof vstack, &v)) {
        bytes_release(&k);
        return -1;
    }
    mcpool_store_op sop = op == 1 ? MCPOOL_STORE_ADD : op == 2 ? MCPOOL_STORE_REPLACE
                        : op == 5 ? MCPOOL_STORE_CAS : MCPOOL_STORE_SET;
    mcpool_status st = mcpool_client_store_kind_compress(
        CLIENT(h), sop, k.ptr, k.len, (mcpool_kind)kind, v.ptr, v.len, mcpool_expiry_from_signed(ttl),
        (uint64_t)cas, (uint8_t)compress, threshold < 0 ? 0 : (uint64_t)threshold);
    bytes_release(&k);
    bytes_release(&v);
    return answer(env, st);
}

/* Java's store op (0 set, 1 add, 2 replace, 3 append, 4 prepend, 5 cas) as mcpool_store_op;
 * an unknown one as a number the core refuses. */
static mcpool_store_op store_op(jint op) {
    switch (op) {
    case 0: return MCPOOL_STORE_SET;
    case 1: return MCPOOL_STORE_ADD;
    case 2: return MCPOOL_STORE_REPLACE;
    case 3: return MCPOOL_STORE_APPEND;
    case 4: return MCPOOL_STORE_PREPEND;
    case 5: return MCPOOL_STORE_CAS;
    default: return (mcpool_store_op)UINT32_MAX;
    }
}

/* A store's signed 64-bit time (a Whalin Date's seconds) checked by the core as the store by
 * op (Java's numbering) of key would take it (mcpool_client_store_expiry_checked): the TTL
 * to pass to it (a negative time MCPOOL_EXPIRED_AT_ONCE), or, above MCPOOL_MAX_TTL, the
 * core's MCPOOL_INVALID_ARGUMENT thrown naming the store, the key and the number as given,
 * a set's key deleted first, as a set so refused deletes it. */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_storeExpiry(JNIEnv *env, jclass cls, jlong h, jint op,
                                                         jbyteArray key, jint key_len, jlong seconds) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get_n(env, key, key_len, kstack, sizeof kstack, &k)) return -1;
    uint32_t t = 0;
    mcpool_status st =
        mcpool_client_store_expiry_checked(CLIENT(h), NULL, store_op(op), k.ptr, k.len, (int64_t)seconds, &t);
    bytes_release(&k);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return -1;
    }
    return (jint)t; /* at most MCPOOL_MAX_TTL: a jint */
}

/* A batch of stores (op as Java's: set, add, replace, append, prepend, cas): keys and values
 * packed one after another (lengths in klens, vlens), each item's kind (mcpool_kind; -1: raw
 * bytes stored with flags[i]), expiration time and (cas, may be NULL: all 0) CAS unique.
 * Every item goes in one mcpool_client_store_multi_kind call, one pipelined round trip per
 * server: an item of a kind is encoded as the single typed store (mcpool_client_store_kind)
 * encodes it, whatever form the format gives the kind (a String under spymemcached, flags 0,
 * which the byte calls take as byte[], used to be stored alone: tester finding batches 3), a
 * raw item (a transcoder's own flags: Whalin's MARKER_INTEGER, spymemcached's SPECIAL_LONG;
 * append/prepend bytes) is MCPOOL_KIND_RAW with its flags; the client's compression rule per
 * item (compress NULL), as a single set. Writes every item's status to out (answers and
 * errors alike: Java decides) and returns each failed item's exception, its message the
 * core's for that item (NULL when none failed). */
JNIEXPORT jobjectArray JNICALL Java_io_mcpool_Native_storeMulti(JNIEnv *env, jclass cls, jlong h, jint jop,
                                                                jbyteArray keys, jintArray klens,
                                                                jbyteArray vals, jintArray vlens,
                                                                jintArray kinds, jintArray jflags,
                                                                jintArray ttls, jlongArray jcas,
                                                                jintArray out) {
    (void)cls;
    mcpool_store_op op = store_op(jop);
    if (keys == NULL || klens == NULL || vals == NULL || vlens == NULL || kinds == NULL ||
        jflags == NULL || ttls == NULL || out == NULL) {
        answer(env, mcpool_client_store_multi(NULL, op, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL));
        return NULL;
    }
    jsize n = (*env)->GetArrayLength(env, klens);
    if (n == 0) return NULL;
    size_t un = (size_t)n;
    item_errors errs = {NULL, n};
    jsize kb = (*env)->GetArrayLength(env, keys), vb = (*env)->GetArrayLength(env, vals);
    /* per item: key/value pointers and lengths, CAS, flags, ttl, kind, status, the Java
     * ints. */
    size_t per = 2 * sizeof(uint8_t *) + 2 * sizeof(size_t) + sizeof(uint64_t) + 2 * sizeof(uint32_t) +
                 sizeof(mcpool_kind) + sizeof(mcpool_status) + 6 * sizeof(jint);
    uint8_t *kblob = malloc(kb > 0 ? (size_t)kb : 1), *vblob = malloc(vb > 0 ? (size_t)vb : 1);
    uint8_t *block = malloc(un * per);
    if (kblob == NULL || vblob == NULL || block == NULL) {
        throw_oom(env, "mcpool: set-multi buffers");
        goto out;
    }
    const uint8_t **kp = (const uint8_t **)block;
    const uint8_t **vp = kp + un;
    size_t *kl = (size_t *)(vp + un), *vl = kl + un;
    uint64_t *cs = (uint64_t *)(vl + un);
    uint32_t *fl = (uint32_t *)(cs + un), *tt = fl + un;
    mcpool_kind *kd = (mcpool_kind *)(tt + un);
    mcpool_status *st = (mcpool_status *)(kd + un);
    jint *jkl = (jint *)(st + un), *jvl = jkl + un, *jkind = jvl + un, *jttl = jkind + un, *jout = jttl + un;
    jint *jfl = jout + un;
    if (kb > 0) (*env)->GetByteArrayRegion(env, keys, 0, kb, (jbyte *)kblob);
    if (vb > 0) (*env)->GetByteArrayRegion(env, vals, 0, vb, (jbyte *)vblob);
    (*env)->GetIntArrayRegion(env, klens, 0, n, jkl);
    (*env)->GetIntArrayRegion(env, vlens, 0, n, jvl);
    (*env)->GetIntArrayRegion(env, kinds, 0, n, jkind);
    (*env)->GetIntArrayRegion(env, jflags, 0, n, jfl);
    (*env)->GetIntArrayRegion(env, ttls, 0, n, jttl);
    if (jcas != NULL) (*env)->GetLongArrayRegion(env, jcas, 0, n, (jlong *)cs);
    else memset(cs, 0, un * sizeof *cs);
    if ((*env)->ExceptionCheck(env)) goto out;
    size_t ko = 0, vo = 0;
    for (size_t i = 0; i < un; i++) {
        if (jkl[i] < 0 || jvl[i] < 0 || ko + (size_t)jkl[i] > (size_t)kb || vo + (size_t)jvl[i] > (size_t)vb) {
            answer(env, mcpool_client_store_multi(NULL, op, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL, NULL));
            goto out;
        }
        kp[i] = kblob + ko;
        kl[i] = (size_t)jkl[i];
        vp[i] = vblob + vo;
        vl[i] = (size_t)jvl[i];
        kd[i] = jkind[i] >= 0 ? (mcpool_kind)jkind[i] : MCPOOL_KIND_RAW;
        fl[i] = (uint32_t)jfl[i];
        tt[i] = mcpool_expiry_from_signed(jttl[i]);
        st[i] = MCPOOL_UNKNOWN_ERROR;
        ko += (size_t)jkl[i];
        vo += (size_t)jvl[i];
    }
    {
        mcpool_status rc = mcpool_client_store_multi_kind(CLIENT(h), op, kp, kl, kd, vp, vl, fl, tt, cs, un,
                                                          NULL, st);
        for (size_t i = 0; i < un; i++) jout[i] = (jint)(rc == MCPOOL_OK ? st[i] : rc);
        if (!batch_errors(env, &errs, rc, st, NULL, un)) goto out;
    }
    (*env)->SetIntArrayRegion(env, out, 0, n, jout);
out:
    free(kblob);
    free(vblob);
    free(block);
    return (*env)->ExceptionCheck(env) ? NULL : errs.arr;
}

/* The keys of a batch call, packed one after another by Java (key i has klens[i] bytes):
 * copied out of the JVM once and split into the pointer and length arrays the C ABI takes. */
typedef struct {
    uint8_t *blob;
    const uint8_t **ptrs;
    size_t *lens;
} packed_keys;

/* Reads n >= 1 packed keys: 1 when pk is filled, 0 with an exception pending, -1 when a
 * length is negative or past the bytes (the caller answers with its C call's refusal). Free
 * with packed_keys_free whatever it returned. */
static int packed_keys_read(JNIEnv *env, jbyteArray keys, jintArray klens, jsize n,
                            packed_keys *pk, const char *what) {
    size_t un = (size_t)n;
    jsize kb = (*env)->GetArrayLength(env, keys);
    pk->blob = malloc(kb > 0 ? (size_t)kb : 1);
    pk->ptrs = malloc(un * sizeof *pk->ptrs);
    pk->lens = malloc(un * sizeof *pk->lens);
    jint *jkl = malloc(un * sizeof *jkl);
    int r = 1;
    if (pk->blob == NULL || pk->ptrs == NULL || pk->lens == NULL || jkl == NULL) {
        throw_oom(env, what);
        r = 0;
        goto out;
    }
    if (kb > 0) (*env)->GetByteArrayRegion(env, keys, 0, kb, (jbyte *)pk->blob);
    (*env)->GetIntArrayRegion(env, klens, 0, n, jkl);
    if ((*env)->ExceptionCheck(env)) {
        r = 0;
        goto out;
    }
    size_t ko = 0;
    for (size_t i = 0; i < un; i++) {
        if (jkl[i] < 0 || ko + (size_t)jkl[i] > (size_t)kb) {
            r = -1;
            goto out;
        }
        pk->ptrs[i] = pk->blob + ko;
        pk->lens[i] = (size_t)jkl[i];
        ko += (size_t)jkl[i];
    }
out:
    free(jkl);
    return r;
}

static void packed_keys_free(packed_keys *pk) {
    free(pk->blob);
    free((void *)pk->ptrs);
    free(pk->lens);
}

/* Sets the packed keys to the packed values (flags 0, all with ttl) through
 * mcpool_client_set_multi_noreply: no reply per item on the text protocol, one barrier round
 * trip per server. The core answers only the first failure (an item refused before sending
 * fails alone, the others are still sent), so that one status is thrown as its exception,
 * with the core's message, once the call is over; returns its status (MCPOOL_OK). */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_setMultiNoreply(JNIEnv *env, jclass cls, jlong h,
                                                             jbyteArray keys, jintArray klens,
                                                             jbyteArray vals, jintArray vlens, jint ttl) {
    (void)cls;
    if (keys == NULL || klens == NULL || vals == NULL || vlens == NULL) {
        return answer(env, mcpool_client_set_multi_noreply(NULL, NULL, NULL, NULL, NULL, 0, 0));
    }
    jsize n = (*env)->GetArrayLength(env, klens);
    if (n == 0) return MCPOOL_OK;
    /* a values' length list shorter than the keys' would be read past its end */
    if ((*env)->GetArrayLength(env, vlens) != n) {
        return answer(env, mcpool_client_set_multi_noreply(CLIENT(h), NULL, NULL, NULL, NULL, (size_t)n, 0));
    }
    packed_keys pk, pv = {NULL, NULL, NULL};
    jint rc = -1;
    int rk = packed_keys_read(env, keys, klens, n, &pk, "mcpool: set-multi-noreply buffers"), rv = 0;
    /* the values are packed as the keys are: the same reader, nothing key-specific in it */
    if (rk > 0) rv = packed_keys_read(env, vals, vlens, n, &pv, "mcpool: set-multi-noreply buffers");
    if (rk < 0 || rv < 0) {
        /* a length negative or past its bytes: the core's refusal of a NULL array */
        rc = answer(env, mcpool_client_set_multi_noreply(CLIENT(h), NULL, NULL, NULL, NULL, (size_t)n, 0));
    } else if (rk > 0 && rv > 0) {
        rc = answer(env, mcpool_client_set_multi_noreply(CLIENT(h), pk.ptrs, pk.lens, pv.ptrs, pv.lens, (size_t)n,
                                                         mcpool_expiry_from_signed(ttl)));
    }
    packed_keys_free(&pk);
    packed_keys_free(&pv);
    return rc;
}

/* Deletes the packed keys in one pipelined round trip per server; every key's status to out.
 * Returns each failed key's exception with the core's message for that key (NULL when none
 * failed), as storeMulti. */
JNIEXPORT jobjectArray JNICALL Java_io_mcpool_Native_deleteMulti(JNIEnv *env, jclass cls, jlong h,
                                                                 jbyteArray keys, jintArray klens,
                                                                 jintArray out) {
    (void)cls;
    if (keys == NULL || klens == NULL || out == NULL) {
        answer(env, mcpool_client_delete_multi(NULL, NULL, NULL, 0, NULL));
        return NULL;
    }
    jsize n = (*env)->GetArrayLength(env, klens);
    if (n == 0) return NULL;
    size_t un = (size_t)n;
    item_errors errs = {NULL, n};
    packed_keys pk;
    mcpool_status *st = malloc(un * sizeof *st);
    jint *jout = malloc(un * sizeof *jout);
    int r = packed_keys_read(env, keys, klens, n, &pk, "mcpool: delete-multi buffers");
    if (r < 0) answer(env, mcpool_client_delete_multi(NULL, NULL, NULL, 0, NULL));
    if (r > 0 && (st == NULL || jout == NULL)) throw_oom(env, "mcpool: delete-multi buffers");
    if (r > 0 && st != NULL && jout != NULL) {
        for (size_t i = 0; i < un; i++) st[i] = MCPOOL_UNKNOWN_ERROR;
        mcpool_status rc = mcpool_client_delete_multi(CLIENT(h), pk.ptrs, pk.lens, un, st);
        for (size_t i = 0; i < un; i++) jout[i] = (jint)(rc == MCPOOL_OK ? st[i] : rc);
        if (batch_errors(env, &errs, rc, st, NULL, un)) (*env)->SetIntArrayRegion(env, out, 0, n, jout);
    }
    packed_keys_free(&pk);
    free(st);
    free(jout);
    return (*env)->ExceptionCheck(env) ? NULL : errs.arr;
}

/* Touches the packed keys (key i gets ttls[i] seconds) in one pipelined round trip per
 * server; every key's status to out, each failed key's exception returned as deleteMulti. */
JNIEXPORT jobjectArray JNICALL Java_io_mcpool_Native_touchMulti(JNIEnv *env, jclass cls, jlong h,
                                                                jbyteArray keys, jintArray klens,
                                                                jintArray ttls, jintArray out) {
    (void)cls;
    if (keys == NULL || klens == NULL || ttls == NULL || out == NULL) {
        answer(env, mcpool_client_touch_multi(NULL, NULL, NULL, NULL, 0, NULL));
        return NULL;
    }
    jsize n = (*env)->GetArrayLength(env, klens);
    if (n == 0) return NULL;
    size_t un = (size_t)n;
    item_errors errs = {NULL, n};
    packed_keys pk;
    mcpool_status *st = malloc(un * sizeof *st);
    uint32_t *tt = malloc(un * sizeof *tt);
    jint *jttl = malloc(un * sizeof *jttl), *jout = malloc(un * sizeof *jout);
    int r = packed_keys_read(env, keys, klens, n, &pk, "mcpool: touch-multi buffers");
    if (r < 0) answer(env, mcpool_client_touch_multi(NULL, NULL, NULL, NULL, 0, NULL));
    if (r > 0 && (st == NULL || tt == NULL || jttl == NULL || jout == NULL)) {
        throw_oom(env, "mcpool: touch-multi buffers");
        r = 0;
    }
    if (r > 0) {
        (*env)->GetIntArrayRegion(env, ttls, 0, n, jttl);
        r = !(*env)->ExceptionCheck(env);
    }
    if (r > 0) {
        for (size_t i = 0; i < un; i++) {
            tt[i] = mcpool_expiry_from_signed(jttl[i]);
            st[i] = MCPOOL_UNKNOWN_ERROR;
        }
        mcpool_status rc = mcpool_client_touch_multi(CLIENT(h), pk.ptrs, pk.lens, tt, un, st);
        for (size_t i = 0; i < un; i++) jout[i] = (jint)(rc == MCPOOL_OK ? st[i] : rc);
        if (batch_errors(env, &errs, rc, st, NULL, un)) (*env)->SetIntArrayRegion(env, out, 0, n, jout);
    }
    packed_keys_free(&pk);
    free(st);
    free(tt);
    free(jttl);
    free(jout);
    return (*env)->ExceptionCheck(env) ? NULL : errs.arr;
}

/* Adds (incr) or subtracts deltas[i] to the counter of each packed key in one pipelined round
 * trip per server; every key's status to out, the new value to values[i] where it is OK
 * (the unsigned 64-bit value's bits: Java checks the range), each failed key's exception
 * returned as deleteMulti. Java refuses negative deltas. */
JNIEXPORT jobjectArray JNICALL Java_io_mcpool_Native_arithMulti(JNIEnv *env, jclass cls, jlong h,
                                                                jboolean incr, jbyteArray keys,
                                                                jintArray klens, jlongArray deltas,
                                                                jlongArray values, jintArray out) {
    (void)cls;
    if (keys == NULL || klens == NULL || deltas == NULL || values == NULL || out == NULL) {
        answer(env, mcpool_client_arith_multi(NULL, true, NULL, NULL, NULL, 0, NULL, NULL));
        return NULL;
    }
    jsize n = (*env)->GetArrayLength(env, klens);
    if (n == 0) return NULL;
    size_t un = (size_t)n;
    item_errors errs = {NULL, n};
    packed_keys pk;
    uint64_t *dl = malloc(un * sizeof *dl), *vals = malloc(un * sizeof *vals);
    mcpool_status *st = malloc(un * sizeof *st);
    jint *jout = malloc(un * sizeof *jout);
    int r = packed_keys_read(env, keys, klens, n, &pk, "mcpool: arith-multi buffers");
    if (r < 0) answer(env, mcpool_client_arith_multi(NULL, true, NULL, NULL, NULL, 0, NULL, NULL));
    if (r > 0 && (dl == NULL || vals == NULL || st == NULL || jout == NULL)) {
        throw_oom(env, "mcpool: arith-multi buffers");
        r = 0;
    }
    if (r > 0) {
        (*env)->GetLongArrayRegion(env, deltas, 0, n, (jlong *)dl);
        r = !(*env)->ExceptionCheck(env);
    }
    if (r > 0) {
        for (size_t i = 0; i < un; i++) {
            vals[i] = 0;
            st[i] = MCPOOL_UNKNOWN_ERROR;
        }
        mcpool_status rc = mcpool_client_arith_multi(CLIENT(h), incr, pk.ptrs, pk.lens, dl, un, vals, st);
        for (size_t i = 0; i < un; i++) jout[i] = (jint)(rc == MCPOOL_OK ? st[i] : rc);
        if (batch_errors(env, &errs, rc, st, NULL, un)) {
            (*env)->SetIntArrayRegion(env, out, 0, n, jout);
            (*env)->SetLongArrayRegion(env, values, 0, n, (const jlong *)vals);
        }
    }
    packed_keys_free(&pk);
    free(dl);
    free(vals);
    free(st);
    free(jout);
    return (*env)->ExceptionCheck(env) ? NULL : errs.arr;
}

/* Throws the exception of an error status, with this thread's last error message. */
JNIEXPORT void JNICALL Java_io_mcpool_Native_throwStatus(JNIEnv *env, jclass cls, jint st) {
    (void)cls;
    if (!is_answer((mcpool_status)st)) throw_status(env, (mcpool_status)st);
}

/* The kind of a value read with these flags (delivered flags always have one), or -1. */
static jlong kind_of(jlong h, uint32_t flags) {
    mcpool_kind kind;
    return mcpool_client_flags_kind(CLIENT(h), flags, &kind) == MCPOOL_OK ? (jlong)kind : -1;
}

/* A read's meta array as the Java side asks for it by its length: [flags, cas], then the
 * kind (3 or more), then whether the body is verbatim (4). */
static void meta_fill(JNIEnv *env, jlong h, jlongArray meta, uint32_t flags, uint64_t cas) {
    jlong m[4] = {(jlong)flags, (jlong)cas, 0, 0};
    jsize ml = (*env)->GetArrayLength(env, meta);
    jsize mn = ml >= 4 ? 4 : ml >= 3 ? 3 : 2;
    if (mn >= 3) m[2] = kind_of(h, flags);
    if (mn == 4) {
        bool verbatim = false;
        m[3] = mcpool_client_flags_verbatim(CLIENT(h), flags, &verbatim) == MCPOOL_OK && verbatim;
    }
    (*env)->SetLongArrayRegion(env, meta, 0, mn, m);
}

/* One key's value into a Java array (NULL on a miss): mcpool_client_get_into, or with
 * or_stored mcpool_client_get_or_stored_into (a value the format cannot deliver as memcached
 * holds it, flags as stored; no CAS: meta[1] says 1 for such a value); meta as meta_fill
 * writes it. */
static jbyteArray read_one(JNIEnv *env, jlong h, jbyteArray key, jint key_len, bool with_cas,
                           bool or_stored, jlongArray meta) {
    uint8_t kstack[KEY_STACK];
    uint8_t vstack[VALUE_STACK];
    bytes_t k;
    if (!bytes_get_n(env, key, key_len, kstack, sizeof kstack, &k)) return NULL;
    sink_t sink = {vstack, sizeof vstack, NULL, 0, 0};
    uint32_t flags = 0;
    uint64_t cas = 0;
    bool as_stored = false;
    mcpool_status st =
        or_stored ? mcpool_client_get_or_stored_into(CLIENT(h), k.ptr, k.len, sink_alloc, &sink, &flags, &as_stored)
                  : mcpool_client_get_into(CLIENT(h), k.ptr, k.len, sink_alloc, &sink, &flags,
                                           with_cas ? &cas : NULL);
    bytes_release(&k);
    jbyteArray out = NULL;
    if (st == MCPOOL_OK) {
        const uint8_t *data = sink.heap != NULL ? sink.heap : sink.stack;
        out = (*env)->NewByteArray(env, (jsize)sink.len);
        if (out != NULL) {
            if (sink.len > 0) (*env)->SetByteArrayRegion(env, out, 0, (jsize)sink.len, (const jbyte *)data);
            if (meta != NULL) meta_fill(env, h, meta, flags, or_stored ? (uint64_t)as_stored : cas);
        }
    } else if (st == MCPOOL_ALLOC_FAILED) {
        throw_oom(env, sink.too_big ? "mcpool: value larger than a Java array" : "mcpool: reading a value");
    } else {
        answer(env, st);
    }
    free(sink.heap);
    return out;
}

/* Returns the value (NULL on a miss); meta[0] = flags, meta[1] = CAS unique, meta[2] (when
 * meta has 3 slots) = the value's kind, meta[3] (when it has 4) = 1 when the body is the one
 * memcached holds (mcpool_client_flags_verbatim: what incr sees), else 0. */
JNIEXPORT jbyteArray JNICALL Java_io_mcpool_Native_get(JNIEnv *env, jclass cls, jlong h,
                                                       jbyteArray key, jint key_len,
                                                       jboolean with_cas, jlongArray meta) {
    (void)cls;
    return read_one(env, h, key, key_len, with_cas, false, meta);
}

/* getOrStored: the value as get delivers it, or as memcached holds it when the value format
 * cannot deliver it (mcpool_client_get_or_stored_into); meta[0] = the flags (as stored for
 * such a value), meta[1] = 1 for such a value, else 0. NULL on a miss. */
JNIEXPORT jbyteArray JNICALL Java_io_mcpool_Native_getOrStored(JNIEnv *env, jclass cls, jlong h,
                                                               jbyteArray key, jint key_len,
                                                               jlongArray meta) {
    (void)cls;
    return read_one(env, h, key, key_len, false, true, meta);
}

/* Get-and-touch (the core's gat, or gats with_cas): the value (NULL on a miss), its expiry set
 * to ttl seconds by the core's rule for a signed expiry (as touch); meta as for get. */
JNIEXPORT jbyteArray JNICALL Java_io_mcpool_Native_gat(JNIEnv *env, jclass cls, jlong h,
                                                       jbyteArray key, jint key_len, jint ttl,
                                                       jboolean with_cas, jlongArray meta) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get_n(env, key, key_len, kstack, sizeof kstack, &k)) return NULL;
    mcpool_item *item = NULL;
    uint32_t exptime = mcpool_expiry_from_signed(ttl);
    mcpool_status st = with_cas ? mcpool_client_gats(CLIENT(h), k.ptr, k.len, exptime, &item)
                                : mcpool_client_gat(CLIENT(h), k.ptr, k.len, exptime, &item);
    bytes_release(&k);
    jbyteArray out = NULL;
    if (st == MCPOOL_OK) {
        size_t len = mcpool_item_len(item);
        uint32_t flags = mcpool_item_flags(item);
        uint64_t cas = mcpool_item_cas(item);
        if (len > (size_t)INT32_MAX) {
            throw_oom(env, "mcpool: value larger than a Java array");
        } else if ((out = (*env)->NewByteArray(env, (jsize)len)) != NULL) {
            if (len > 0)
                (*env)->SetByteArrayRegion(env, out, 0, (jsize)len, (const jbyte *)mcpool_item_data(item));
            if (meta != NULL) meta_fill(env, h, meta, flags, cas);
        }
        mcpool_item_free(item);
    } else {
        answer(env, st);
    }
    return out;
}

/* A delete with an explicit CAS version (meta E, memcached 1.6.27+). */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_deleteWithVersion(JNIEnv *env, jclass cls, jlong h,
                                                               jbyteArray key, jlong version) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return -1;
    mcpool_status st = mcpool_client_delete_with_version(CLIENT(h), k.ptr, k.len, (uint64_t)version);
    bytes_release(&k);
    return answer(env, st);
}

/* incr (or decr) with an explicit CAS version (meta E, memcached 1.6.27+); delta >= 0 (Java
 * refuses a negative one before this). out[0] = the new value on success. */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_arithWithVersion(JNIEnv *env, jclass cls, jlong h,
                                                              jboolean incr, jbyteArray key,
                                                              jlong delta, jlong version,
                                                              jlongArray out) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return -1;
    uint64_t value = 0;
    mcpool_status st = mcpool_client_arith_with_version(CLIENT(h), incr, k.ptr, k.len, (uint64_t)delta,
                                                        (uint64_t)version, &value);
    bytes_release(&k);
    if (st == MCPOOL_OK && out != NULL) {
        jlong v = (jlong)value;
        (*env)->SetLongArrayRegion(env, out, 0, 1, &v);
    }
    return answer(env, st);
}

JNIEXPORT jint JNICALL Java_io_mcpool_Native_delete(JNIEnv *env, jclass cls, jlong h,
                                                    jbyteArray key, jint key_len) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get_n(env, key, key_len, kstack, sizeof kstack, &k)) return -1;
    mcpool_status st = mcpool_client_delete(CLIENT(h), k.ptr, k.len);
    bytes_release(&k);
    return answer(env, st);
}

JNIEXPORT jint JNICALL Java_io_mcpool_Native_touch(JNIEnv *env, jclass cls, jlong h,
                                                   jbyteArray key, jint ttl) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return -1;
    mcpool_status st = mcpool_client_touch(CLIENT(h), k.ptr, k.len, mcpool_expiry_from_signed(ttl));
    bytes_release(&k);
    return answer(env, st);
}

/* A counter (decimal text, raw flags 0: the core's form). value >= 0: Mcpool.storeCounter
 * refuses a negative one before this (cast, -1 would be 2^64-1). */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_setCounter(JNIEnv *env, jclass cls, jlong h,
                                                        jbyteArray key, jlong value, jint ttl) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return -1;
    mcpool_status st = mcpool_client_set_counter(CLIENT(h), k.ptr, k.len, (uint64_t)value,
                                                 mcpool_expiry_from_signed(ttl));
    bytes_release(&k);
    return answer(env, st);
}

/* op: 0 incr, 1 decr, 2 incr-or-init, 3 decr-or-init. out[0] = the new value on success. */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_arith(JNIEnv *env, jclass cls, jlong h, jint op,
                                                   jbyteArray key, jlong delta, jlong initial,
                                                   jint ttl, jlongArray out) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return -1;
    const mcpool_client *c = CLIENT(h);
    uint64_t value = 0, d = (uint64_t)delta, init = (uint64_t)initial;
    mcpool_status st;
    switch (op) {
    case 0: st = mcpool_client_incr(c, k.ptr, k.len, d, &value); break;
    case 1: st = mcpool_client_decr(c, k.ptr, k.len, d, &value); break;
    case 2: st = mcpool_client_incr_or_init(c, k.ptr, k.len, d, init, mcpool_expiry_from_signed(ttl), &value); break;
    case 3: st = mcpool_client_decr_or_init(c, k.ptr, k.len, d, init, mcpool_expiry_from_signed(ttl), &value); break;
    default: st = mcpool_client_incr(NULL, NULL, 0, 0, NULL);
    }
    bytes_release(&k);
    if (st == MCPOOL_OK && out != NULL) {
        jlong v = (jlong)value;
        (*env)->SetLongArrayRegion(env, out, 0, 1, &v);
    }
    return answer(env, st);
}

/* A lease read (meta protocol): the item's bytes or null (none); meta[0] = the value's kind
 * (mcpool_kind, from its flags), meta[1] = CAS, meta[2] = the mcpool_lease answer, meta[3]
 * (when meta has 4 slots) the flags. */
JNIEXPORT jbyteArray JNICALL Java_io_mcpool_Native_getLease(JNIEnv *env, jclass cls, jlong h,
                                                            jbyteArray key, jint vivify_ttl,
                                                            jint recache_below, jlongArray meta) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return NULL;
    mcpool_lease lease = MCPOOL_LEASE_WAIT;
    mcpool_item *item = NULL;
    uint32_t vivify = 0, recache = 0;
    /* checked as given (the core's rule): -1 is refused naming -1, never cast to 4294967295 */
    mcpool_status st = mcpool_expiry_checked("get_lease", k.ptr, k.len, "vivify_ttl", vivify_ttl, &vivify);
    if (st == MCPOOL_OK)
        st = mcpool_expiry_checked("get_lease", k.ptr, k.len, "recache_below", recache_below, &recache);
    if (st == MCPOOL_OK)
        st = mcpool_client_get_lease(CLIENT(h), k.ptr, k.len, vivify, recache, &lease, &item);
    bytes_release(&k);
    if (st != MCPOOL_OK) {
        answer(env, st);
        return NULL;
    }
    jbyteArray out = NULL;
    jlong m[4] = {0, 0, (jlong)lease, 0};
    if (item != NULL) {
        size_t len = mcpool_item_len(item);
        if (len > (size_t)INT32_MAX) {
            throw_oom(env, "mcpool: value larger than a Java array");
        } else {
            out = (*env)->NewByteArray(env, (jsize)len);
            if (out != NULL && len > 0)
                (*env)->SetByteArrayRegion(env, out, 0, (jsize)len, (const jbyte *)mcpool_item_data(item));
        }
        m[0] = kind_of(h, mcpool_item_flags(item));
        m[3] = (jlong)mcpool_item_flags(item);
        m[1] = (jlong)mcpool_item_cas(item);
        mcpool_item_free(item);
    }
    if (!(*env)->ExceptionCheck(env) && meta != NULL)
        (*env)->SetLongArrayRegion(env, meta, 0, (*env)->GetArrayLength(env, meta) >= 4 ? 4 : 3, m);
    return out;
}

JNIEXPORT jint JNICALL Java_io_mcpool_Native_invalidate(JNIEnv *env, jclass cls, jlong h,
                                                        jbyteArray key, jint stale_ttl) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return -1;
    uint32_t stale = 0;
    /* checked as given, as getLease's times */
    mcpool_status st = mcpool_expiry_checked("invalidate", k.ptr, k.len, "stale_ttl", stale_ttl, &stale);
    if (st == MCPOOL_OK)
        st = mcpool_client_invalidate(CLIENT(h), k.ptr, k.len, stale);
    bytes_release(&k);
    return answer(env, st);
}

/* A set with an explicit CAS version (meta E, memcached 1.6.27+): a value of a kind (its
 * flags from the core's value format) or, kind -1, raw bytes with the caller's flags. */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_setWithVersion(JNIEnv *env, jclass cls, jlong h,
                                                            jbyteArray key, jint kind,
                                                            jbyteArray value, jint flags, jint ttl,
                                                            jlong version) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    uint8_t vstack[VALUE_STACK];
    bytes_t k, v;
    uint32_t f = (uint32_t)flags;
    mcpool_status st = MCPOOL_OK;
    if (kind >= 0) st = mcpool_client_kind_flags(CLIENT(h), (mcpool_kind)kind, &f);
    if (st != MCPOOL_OK) return answer(env, st);
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return -1;
    if (!bytes_get(env, value, vstack, sizeof vstack, &v)) {
        bytes_release(&k);
        return -1;
    }
    st = mcpool_client_set_with_version(CLIENT(h), k.ptr, k.len, v.ptr, v.len, f, mcpool_expiry_from_signed(ttl),
                                        (uint64_t)version);
    bytes_release(&k);
    bytes_release(&v);
    return answer(env, st);
}

/* An item's metadata without its value (meta protocol): out[0..6] = hit_before, last access
 * (s), ttl (s, -1: never expires), cas, size, flags. */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_metaInfo(JNIEnv *env, jclass cls, jlong h,
                                                      jbyteArray key, jlongArray out) {
    (void)cls;
    uint8_t kstack[KEY_STACK];
    bytes_t k;
    mcpool_item_info info;
    if (!bytes_get(env, key, kstack, sizeof kstack, &k)) return -1;
    mcpool_status st = mcpool_client_meta_info(CLIENT(h), k.ptr, k.len, &info);
    bytes_release(&k);
    if (st == MCPOOL_OK && out != NULL) {
        jlong m[6] = {info.hit_before, (jlong)info.last_access_s, (jlong)info.ttl_s,
                      (jlong)info.cas, (jlong)info.size, (jlong)info.flags};
        (*env)->SetLongArrayRegion(env, out, 0, 6, m);
    }
    return answer(env, st);
}

/* Flushes every server (the core's rule for a negative delay: now): per server, in
 * configuration order, its label (byte[]) and null when flushed or its exception, made by
 * status_exception (the one status-to-class map), not thrown. */
JNIEXPORT jobjectArray JNICALL Java_io_mcpool_Native_flushAllEach(JNIEnv *env, jclass cls,
                                                                  jlong h, jint delay) {
    (void)cls;
    mcpool_server_results *r = NULL;
    mcpool_status st = mcpool_client_flush_all_each(CLIENT(h), mcpool_delay_from_signed(delay), &r);
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return NULL;
    }
    size_t n = mcpool_server_results_len(r);
    jclass object = (*env)->FindClass(env, "java/lang/Object");
    jobjectArray out = object == NULL || n > (size_t)INT32_MAX / 2
                           ? NULL
                           : (*env)->NewObjectArray(env, (jsize)(2 * n), object, NULL);
    if (object != NULL) (*env)->DeleteLocalRef(env, object);
    for (size_t i = 0; out != NULL && i < n; i++) {
        if ((*env)->PushLocalFrame(env, 8) != 0) {
            out = NULL;
            break;
        }
        const char *label = "";
        size_t len = 0;
        mcpool_server_results_label(r, i, &label, &len);
        jbyteArray jl = new_bytes(env, label, len);
        mcpool_status s = mcpool_server_results_status(r, i); /* sets the last error */
        jobject exc = jl == NULL || s == MCPOOL_OK ? NULL : status_exception(env, s);
        int failed = jl == NULL || (*env)->ExceptionCheck(env);
        if (!failed) {
            (*env)->SetObjectArrayElement(env, out, (jsize)(2 * i), jl);
            (*env)->SetObjectArrayElement(env, out, (jsize)(2 * i + 1), exc);
        }
        (*env)->PopLocalFrame(env, NULL);
        if (failed) out = NULL;
    }
    mcpool_server_results_free(r);
    return out;
}

/* Flushes one server (its index in the list), now or after delay seconds (the core's rule
 * for a negative delay: now). */
JNIEXPORT jint JNICALL Java_io_mcpool_Native_flushServer(JNIEnv *env, jclass cls, jlong h,
                                                         jint index, jint delay) {
    (void)cls;
    if (index < 0) return answer(env, mcpool_client_flush_server(NULL, 0, 0));
    return answer(env, mcpool_client_flush_server(CLIENT(h), (size_t)index, mcpool_delay_from_signed(delay)));
}

/* Multi-get through mcpool_client_get_multi_into. Values of at most MULTI_SMALL bytes are
 * copied into one arena (on the stack, growing on the heap) and handed to Java as one packed
 * byte[] with spans[i] = offset, spans[n + i] = length (offset -1: not in the arena); larger
 * values are received one at a time into one staging buffer and each becomes its own byte[]
 * in vals[i] when the next value arrives (or the call ends). The core copies each value into
 * the returned memory right away, so growing (moving) the arena between two allocations is
 * safe (values are located by offset), and so is reusing the staging buffer.
 *
 * Why one staging buffer: a malloc'd buffer per large value, all freed at the end of the
 * call, made glibc hand the memory back to the system after every call (its trim threshold
 * is 128 KiB) and fault it in again on the next: 100 values of 30 KiB spent 2.5 ms per call
 * instead of 1.4 ms. */
typedef struct {
    JNIEnv *env;
    jobjectArray vals;
    uint8_t *arena;
    size_t arena_len, arena_cap;
    int arena_heap;
    int32_t *off;   /* per key: offset in the arena, -1 none, -2 a byte[] in vals[i] */
    int32_t *len;   /* per key, right after off (both go to Java in one call) */
    int32_t *flags;
    int64_t *cas;
    uint8_t *stage; /* the large value being received */
    size_t stage_cap;
    size_t staged;  /* its key's index, or SIZE_MAX */
    size_t n;
    jint hits;
    int oom;
} multi_ctx;

/* Hands the staged large value to Java as vals[index]; 0 if Java could not take it (an
 * exception is then pending, and no JNI call may follow). */
static int multi_unstage(multi_ctx *m) {
    if (m->staged == SIZE_MAX) return 1;
    size_t i = m->staged;
    m->staged = SIZE_MAX;
    JNIEnv *env = m->env;
    jbyteArray arr = (*env)->NewByteArray(env, m->len[i]);
    if (arr == NULL) return 0; /* OutOfMemoryError pending */
    (*env)->SetByteArrayRegion(env, arr, 0, m->len[i], (const jbyte *)m->stage);
    (*env)->SetObjectArrayElement(env, m->vals, (jsize)i, arr);
    (*env)->DeleteLocalRef(env, arr);
    return !(*env)->ExceptionCheck(env);
}

static void *multi_alloc(void *userdata, size_t index, size_t len, uint32_t flags, uint64_t cas) {
    multi_ctx *m = userdata;
    if (m->oom || index >= m->n || len > (size_t)INT32_MAX) {
        m->oom = 1;
        return NULL;
    }
    m->flags[index] = (int32_t)flags;
    m->cas[index] = (int64_t)cas;
    m->len[index] = (int32_t)len;
    if (len > MULTI_SMALL) {
        if (!multi_unstage(m)) {
            m->oom = 1;
            return NULL;
        }
        if (len > m->stage_cap) {
            free(m->stage); /* nothing in it to keep */
            m->stage = malloc(len);
            m->stage_cap = m->stage == NULL ? 0 : len;
            if (m->stage == NULL) {
                m->oom = 1;
                return NULL;
            }
        }
        m->off[index] = -2;
        m->staged = index;
        return m->stage;
    }
    if (len > (size_t)INT32_MAX - m->arena_len) {
        m->oom = 1;
        return NULL;
    }
    if (m->arena_len + len > m->arena_cap) {
        size_t cap = m->arena_cap * 2;
        if (cap < m->arena_len + len) cap = m->arena_len + len;
        uint8_t *p = m->arena_heap ? realloc(m->arena, cap) : malloc(cap);
        if (p == NULL) {
            m->oom = 1;
            return NULL;
        }
        if (!m->arena_heap) memcpy(p, m->arena, m->arena_len);
        m->arena = p;
        m->arena_cap = cap;
        m->arena_heap = 1;
    }
    m->off[index] = (int32_t)m->arena_len;
    m->arena_len += len;
    return m->arena + m->off[index];
}

/* A key a lenient multi-get (MemCachedClient's) left out because its server failed. */
#define MULTI_LEFT_OUT (-3)
/* A key whose value was read but cannot be delivered (MCPOOL_VALUE_FORMAT, MCPOOL_DECOMPRESS):
 * its status in kinds[i], its exception (the core's message for that key) in vals[i]. */
#define MULTI_UNREADABLE (-4)
/* A key that failed otherwise (its server down, a timeout, an error reply): its status in
 * kinds[i], its exception (the core's message for that key) in vals[i]. */
#define MULTI_FAILED (-5)

/* keys: every key's bytes one after another; lens: each key's length. Hits: vals[i] (values
 * above MULTI_SMALL bytes) or the returned packed array at spans[i] (length spans[n + i]);
 * kinds[i] (the value's mcpool_kind, from its flags), raw_flags[i] (the flags as delivered),
 * cas[i]. A key that failed gets spans[i] = MULTI_UNREADABLE (a value that cannot be
 * delivered) or MULTI_FAILED (anything else), its status in flags[i] and its own exception
 * in vals[i]; nothing is thrown for them (Java reports them with the hits); lenient: a key
 * whose server failed (server_side) is left out instead, spans[i] = MULTI_LEFT_OUT. Only a
 * call that failed as a whole throws. */
static jbyteArray get_multi(JNIEnv *env, jlong h, jbyteArray keys, jintArray lens,
                            jboolean with_cas, jboolean lenient, jobjectArray vals,
                            jintArray flags, jintArray raw_flags, jlongArray cas, jintArray spans,
                            int touch, uint32_t exptime) {
    if (keys == NULL || lens == NULL || vals == NULL || flags == NULL || raw_flags == NULL ||
        cas == NULL || spans == NULL) {
        answer(env, mcpool_client_get_multi_into(NULL, NULL, NULL, 0, false, NULL, NULL, NULL));
        return NULL;
    }
    jsize n = (*env)->GetArrayLength(env, lens);
    if (n == 0) return NULL;
    jsize blob_len = (*env)->GetArrayLength(env, keys);
    size_t total = (size_t)blob_len, un = (size_t)n;

    /* One block for the per-key arrays: on the stack for up to MULTI_N_STACK keys. */
    size_t per_key = sizeof(const uint8_t *) + sizeof(size_t) + sizeof(mcpool_status) +
                     4 * sizeof(int32_t) + sizeof(int64_t);
    _Alignas(16) uint8_t kstack[MULTI_KEYS_STACK];
    _Alignas(16) uint8_t astack[MULTI_N_STACK * (8 + 8 + 4 + 16 + 8)];
    _Alignas(16) uint8_t arena_stack[ARENA_STACK];
    uint8_t *blob = total <= sizeof kstack ? kstack : malloc(total);
    uint8_t *block = un <= MULTI_N_STACK ? astack : malloc(un * per_key);
    multi_ctx m = {env, vals, arena_stack, 0, sizeof arena_stack, 0, NULL, NULL, NULL, NULL,
                   NULL, 0, SIZE_MAX, un, 0, 0};
    jbyteArray packed = NULL;
    if (blob == NULL || block == NULL) {
        throw_oom(env, "mcpool: multi-get buffers");
        goto out;
    }
    /* Widest members first, so every array stays aligned. */
    const uint8_t **kptrs = (const uint8_t **)block;
    size_t *klens = (size_t *)(block + un * sizeof *kptrs);
    m.cas = (int64_t *)(block + un * (sizeof *kptrs + sizeof *klens));
    mcpool_status *statuses = (mcpool_status *)(block + un * (sizeof *kptrs + sizeof *klens + sizeof *m.cas));
    int32_t *jlens = (int32_t *)((uint8_t *)statuses + un * sizeof *statuses);
    m.off = jlens + un;
    m.len = m.off + un;
    m.flags = m.len + un;

    if (total > 0) (*env)->GetByteArrayRegion(env, keys, 0, blob_len, (jbyte *)blob);
    (*env)->GetIntArrayRegion(env, lens, 0, n, (jint *)jlens);
    if ((*env)->ExceptionCheck(env)) goto out;
    size_t off = 0;
    for (size_t i = 0; i < un; i++) {
        if (jlens[i] < 0 || off + (size_t)jlens[i] > total) {
            answer(env, mcpool_client_get_multi_into(NULL, NULL, NULL, 0, false, NULL, NULL, NULL));
            goto out;
        }
        kptrs[i] = blob + off;
        klens[i] = (size_t)jlens[i];
        off += (size_t)jlens[i];
        m.off[i] = -1;
        m.len[i] = 0;
        m.flags[i] = 0;
        m.cas[i] = 0;
    }
    mcpool_status st =
        touch ? mcpool_client_gat_multi_into(CLIENT(h), exptime, kptrs, klens, un, with_cas,
                                             multi_alloc, &m, statuses)
              : mcpool_client_get_multi_into(CLIENT(h), kptrs, klens, un, with_cas, multi_alloc,
                                             &m, statuses);
    if (st != MCPOOL_OK) {
        answer(env, st);
        goto out;
    }
    if (!m.oom && !multi_unstage(&m)) m.oom = 1;
    if (m.oom) {
        if (!(*env)->ExceptionCheck(env)) throw_oom(env, "mcpool: multi-get value");
        goto out;
    }
    /* Hits in the arena may all be empty values: the packed array exists (if empty) whenever
     * one span points into it. Each failed key's exception is made here, before any other
     * mcpool call (kind_of below) could replace the batch's item messages. */
    int in_arena = 0;
    for (size_t i = 0; i < un; i++) {
        if (statuses[i] == MCPOOL_OK) {
            m.hits++;
            in_arena |= m.off[i] >= 0;
        } else {
            if (m.off[i] == -2) (*env)->SetObjectArrayElement(env, vals, (jsize)i, NULL);
            m.off[i] = -1; /* not delivered (or broken after allocation): not a hit */
            if (!is_answer(statuses[i]) && lenient && server_side(statuses[i])) {
                m.off[i] = MULTI_LEFT_OUT; /* lenient: left out, Java counts it */
            } else if (!is_answer(statuses[i])) {
                m.off[i] = statuses[i] == MCPOOL_VALUE_FORMAT || statuses[i] == MCPOOL_DECOMPRESS
                               ? MULTI_UNREADABLE : MULTI_FAILED;
                size_t mlen = 0;
                const char *msg = mcpool_last_item_error_message(i, &mlen);
                jobject exc = status_exception_msg(env, statuses[i], msg, mlen, mcpool_last_item_outcome_unknown(i));
                if (exc == NULL) goto out;
                (*env)->SetObjectArrayElement(env, vals, (jsize)i, exc);
                (*env)->DeleteLocalRef(env, exc);
                if ((*env)->ExceptionCheck(env)) goto out;
            }
        }
    }
    if (in_arena) {
        packed = (*env)->NewByteArray(env, (jsize)m.arena_len);
        if (packed == NULL) goto out;
        (*env)->SetByteArrayRegion(env, packed, 0, (jsize)m.arena_len, (const jbyte *)m.arena);
    }
    /* spans: the n offsets, then the n lengths (m.len follows m.off in the block); -1 for
     * values not in the arena (misses, and large values already in vals[i]). */
    for (size_t i = 0; i < un; i++) {
        if (m.off[i] < 0) {
            if (m.off[i] != MULTI_LEFT_OUT && m.off[i] != MULTI_UNREADABLE && m.off[i] != MULTI_FAILED)
                m.off[i] = -1;
            m.len[i] = 0;
        }
    }
    (*env)->SetIntArrayRegion(env, spans, 0, 2 * n, (const jint *)m.off);
    (*env)->SetIntArrayRegion(env, raw_flags, 0, n, (const jint *)m.flags); /* as delivered */
    for (size_t i = 0; i < un; i++)
        m.flags[i] = statuses[i] == MCPOOL_OK ? (int32_t)kind_of(h, (uint32_t)m.flags[i])
                     : m.off[i] == MULTI_UNREADABLE || m.off[i] == MULTI_FAILED ? (int32_t)statuses[i] : -1;
    (*env)->SetIntArrayRegion(env, flags, 0, n, (const jint *)m.flags);
    (*env)->SetLongArrayRegion(env, cas, 0, n, (const jlong *)m.cas);
out:
    free(m.stage);
    if (m.arena_heap) free(m.arena);
    if (blob != kstack) free(blob);
    if (block != astack) free(block);
    if ((*env)->ExceptionCheck(env)) {
        (*env)->DeleteLocalRef(env, packed);
        return NULL;
    }
    return packed;
}

JNIEXPORT jbyteArray JNICALL Java_io_mcpool_Native_getMulti(JNIEnv *env, jclass cls, jlong h,
                                                            jbyteArray keys, jintArray lens,
                                                            jboolean with_cas, jboolean lenient,
                                                            jobjectArray vals,
                                                            jintArray flags, jintArray raw_flags,
                                                            jlongArray cas, jintArray spans) {
    (void)cls;
    return get_multi(env, h, keys, lens, with_cas, lenient, vals, flags, raw_flags, cas, spans, 0, 0);
}

/* getMulti that also sets each found key's expiry to ttl seconds (get-and-touch, the core's
 * gat per key; ttl by the core's rule for a signed expiry, as touch). */
JNIEXPORT jbyteArray JNICALL Java_io_mcpool_Native_gatMulti(JNIEnv *env, jclass cls, jlong h,
                                                            jint ttl, jbyteArray keys,
                                                            jintArray lens, jboolean with_cas,
                                                            jobjectArray vals, jintArray flags,
                                                            jintArray raw_flags, jlongArray cas,
                                                            jintArray spans) {
    (void)cls;
    return get_multi(env, h, keys, lens, with_cas, JNI_FALSE, vals, flags, raw_flags, cas, spans, 1,
                     mcpool_expiry_from_signed(ttl));
}

/* Statistics (group NULL: general; "items", "slabs", ...) or, with version set, versions.
 * Flattened for Java as byte[]s of UTF-8: for each server, label, status (decimal, 0 when it
 * answered), error message, pair count (decimal), then name, value, name, value, ... */
static jobjectArray server_results(JNIEnv *env, mcpool_server_results *r) {
    size_t servers = mcpool_server_results_len(r);
    size_t total = 0;
    for (size_t i = 0; i < servers; i++) {
        size_t count = 0;
        mcpool_server_results_count(r, i, &count);
        total += 4 + 2 * count;
    }
    jobjectArray out = (*env)->NewObjectArray(env, (jsize)total, cls_byte_array, NULL);
    if (out == NULL) return NULL;
    jsize pos = 0;
    for (size_t i = 0; i < servers; i++) {
        if ((*env)->PushLocalFrame(env, 16) != 0) return NULL;
        const char *label = "";
        size_t len = 0, count = 0;
        mcpool_server_results_label(r, i, &label, &len);
        mcpool_status st = mcpool_server_results_status(r, i);
        const char *err = st == MCPOOL_OK ? "" : mcpool_last_error_message();
        size_t err_len = st == MCPOOL_OK ? 0 : mcpool_last_error_length();
        mcpool_server_results_count(r, i, &count);
        char status[16], num[32];
        snprintf(status, sizeof status, "%u", (unsigned)st);
        snprintf(num, sizeof num, "%zu", count);
        const char *texts[4] = {label, status, err, num};
        size_t lens[4] = {len, strlen(status), err_len, strlen(num)};
        for (int p = 0; p < 4; p++) {
            jbyteArray part = new_bytes(env, texts[p], lens[p]);
            if (part == NULL) break; /* an exception is pending: checked below */
            (*env)->SetObjectArrayElement(env, out, pos++, part);
        }
        (*env)->PopLocalFrame(env, NULL);
        if ((*env)->ExceptionCheck(env)) return NULL;
        for (size_t e = 0; e < count; e++) {
            const char *name = "", *value = "";
            size_t nl = 0, vl = 0;
            mcpool_server_results_entry(r, i, e, &name, &nl, &value, &vl);
            jbyteArray jn = new_bytes(env, name, nl);
            jbyteArray jv = jn == NULL ? NULL : new_bytes(env, value, vl);
            if (jn == NULL || jv == NULL) return NULL;
            (*env)->SetObjectArrayElement(env, out, pos++, jn);
            (*env)->SetObjectArrayElement(env, out, pos++, jv);
            (*env)->DeleteLocalRef(env, jn);
            (*env)->DeleteLocalRef(env, jv);
        }
        if ((*env)->ExceptionCheck(env)) return NULL;
    }
    return out;
}

/* what: 0 statistics (of group), 1 versions, 2 a no-op round trip (no pairs). strict: when
 * every server failed (all down, an unknown group), the first server's error is thrown
 * instead of a list of failures. */
JNIEXPORT jobjectArray JNICALL Java_io_mcpool_Native_stats(JNIEnv *env, jclass cls, jlong h,
                                                           jbyteArray group, jint what,
                                                           jboolean strict) {
    (void)cls;
    mcpool_server_results *r = NULL;
    mcpool_status st;
    if (what == 1) {
        st = mcpool_client_version(CLIENT(h), &r);
    } else if (what == 2) {
        st = mcpool_client_noop(CLIENT(h), &r);
    } else {
        uint8_t stack[KEY_STACK];
        bytes_t g;
        if (!bytes_get(env, group, stack, sizeof stack, &g)) return NULL;
        st = mcpool_client_stats(CLIENT(h), (const char *)g.ptr, g.len, &r);
        bytes_release(&g);
    }
    if (st != MCPOOL_OK) {
        throw_status(env, st);
        return NULL;
    }
    if (strict) {
        size_t servers = mcpool_server_results_len(r), answered = 0;
        for (size_t i = 0; i < servers; i++) {
            if (mcpool_server_results_status(r, i) == MCPOOL_OK) answered++;
        }
        if (servers > 0 && answered == 0) {
            /* The status call sets the thread's last error to server 0's message. */
            throw_status(env, mcpool_server_results_status(r, 0));
            mcpool_server_results_free(r);
            return NULL;
        }
    }
    jobjectArray out = server_results(env, r);
    mcpool_server_results_free(r);
    return out;
}

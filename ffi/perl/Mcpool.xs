/*
 * Mcpool.xs: the Perl binding of mcpool. Calls only include/mcpool.h: placement, the
 * protocol, pooling and compression are the core's. This file turns Perl scalars into
 * (bytes, flags) and back, with Cache::Memcached's flag layout:
 *   1 = Storable (the value is a serialized reference), 2 = compressed (gzip; owned by the
 *   core, which compresses and inflates), 4 = UTF-8 (a character string, with utf8 => 1).
 */
#define PERL_NO_GET_CONTEXT
#include "EXTERN.h"
#include "perl.h"
#include "XSUB.h"

#include "mcpool.h"

#include <string.h>

#define F_STORABLE 0x1u
#define F_UTF8 0x4u

/* Room for the longest key memcached accepts (250) behind the longest namespace (250). */
#define KEYBUF 512

/* 30 days plus a second: memcached reads it as a unix time long past, so the item expires
 * at once, which is what a negative expiration time means to the server. */
#define EXPIRED_NOW 2592001u

typedef struct {
    mcpool_client *client;
    mcpool_config *config; /* kept to rebuild the client (namespace, compression, disconnect) */
    SV *freeze;            /* serialize_methods: code refs */
    SV *thaw;
    char *prefix;          /* namespace we prepend ourselves (hash_namespace => 1), else NULL */
    STRLEN prefix_len;
    int utf8;
} mcp_t;

typedef mcp_t *Mcpool;

static HV *mcp_stash; /* the Mcpool stash of the loading interpreter: a fast type check */

static mcp_t *
mcp_from_sv(pTHX_ SV *sv)
{
    if (SvROK(sv)) {
        SV *rv = SvRV(sv);
        if (SvOBJECT(rv) && SvIOK(rv)
            && (SvSTASH(rv) == mcp_stash || sv_derived_from(sv, "Mcpool"))) {
            mcp_t *m = INT2PTR(mcp_t *, SvIVX(rv));
            if (m && m->client)
                return m;
            croak("Mcpool: this client has been destroyed");
        }
    }
    croak("Mcpool: not an Mcpool object (call it as $memd->method(...))");
    return NULL; /* not reached */
}

static void
mcp_croak_status(pTHX_ const char *what, mcpool_status st)
{
    croak("Mcpool: %s failed: %s: %s", what, mcpool_status_name(st), mcpool_last_error_message());
}

/* A key as bytes: undef and references are refused with a message naming the method; the
 * namespace is prepended here only with hash_namespace (else the core adds it). Keys are
 * sent as Perl stores them, as Cache::Memcached::Fast does (SvPV). */
static const uint8_t *
mcp_key(pTHX_ mcp_t *m, SV *sv, STRLEN *len, char *buf, const char *fn)
{
    const char *p;
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        croak("Mcpool::%s: the key is undef", fn);
    if (SvROK(sv) && !SvAMAGIC(sv))
        croak("Mcpool::%s: the key must be a string, not a reference (%s)", fn,
              sv_reftype(SvRV(sv), 0));
    p = SvPV_nomg(sv, *len);
    if (m->prefix_len && m->prefix_len + *len <= KEYBUF) {
        memcpy(buf, m->prefix, m->prefix_len);
        memcpy(buf + m->prefix_len, p, *len);
        *len += m->prefix_len;
        return (const uint8_t *)buf;
    }
    /* Without a namespace, or a key so long (> 262 bytes) that the core refuses it anyway. */
    return (const uint8_t *)p;
}

/* A value as bytes and flags: references through the serializer (flag 1); character
 * strings encoded as UTF-8 (flag 4) with utf8 => 1, else downgraded (croaks "Wide
 * character" as Cache::Memcached::Fast does). The core compresses (flag 2). */
static const char *
mcp_value(pTHX_ mcp_t *m, SV *sv, STRLEN *len, uint32_t *flags)
{
    const char *p;
    SvGETMAGIC(sv);
    if (SvROK(sv)) {
        dSP;
        int n;
        SV *out;
        PUSHMARK(SP);
        XPUSHs(sv);
        PUTBACK;
        n = call_sv(m->freeze, G_SCALAR);
        SPAGAIN;
        if (n != 1)
            croak("Mcpool: the serialize method returned nothing");
        out = POPs;
        PUTBACK;
        *flags |= F_STORABLE;
        return SvPV(out, *len);
    }
    if (!SvOK(sv)) {
        *len = 0;
        return "";
    }
    p = SvPV_nomg(sv, *len);
    if (SvUTF8(sv)) {
        if (m->utf8) {
            *flags |= F_UTF8; /* Perl keeps it as UTF-8 already: the bytes are the encoding */
        } else {
            SV *tmp = sv_2mortal(newSVpvn_flags(p, *len, SVf_UTF8));
            sv_utf8_downgrade(tmp, 0);
            p = SvPV(tmp, *len);
        }
    }
    return p;
}

/* Turns fetched bytes (a new SV) into the Perl value, or NULL to report a miss (a value
 * that does not thaw or decode, as Cache::Memcached::Fast does). Storable thaw runs only
 * for values flagged Storable. */
static SV *
mcp_decode(pTHX_ mcp_t *m, SV *sv, uint32_t flags)
{
    if (flags & F_STORABLE) {
        dSP;
        int n;
        SV *res = NULL;
        PUSHMARK(SP);
        XPUSHs(sv_2mortal(sv));
        PUTBACK;
        n = call_sv(m->thaw, G_SCALAR | G_EVAL);
        SPAGAIN;
        if (n == 1)
            res = POPs;
        PUTBACK;
        if (!res || SvTRUE(ERRSV))
            return NULL;
        return SvREFCNT_inc_simple_NN(res);
    }
    if ((flags & F_UTF8) && m->utf8 && !sv_utf8_decode(sv)) {
        SvREFCNT_dec(sv);
        return NULL;
    }
    return sv;
}

static SV *
mcp_item_sv(pTHX_ mcp_t *m, mcpool_item *item, int with_cas)
{
    size_t len = mcpool_item_len(item);
    SV *sv = newSVpvn(len ? (const char *)mcpool_item_data(item) : "", len);
    uint32_t flags = mcpool_item_flags(item);
    uint64_t cas = mcpool_item_cas(item);
    mcpool_item_free(item);
    sv = mcp_decode(aTHX_ m, sv, flags);
    if (sv && with_cas) {
        AV *av = newAV();
        av_extend(av, 1);
        av_push(av, newSVuv((UV)cas));
        av_push(av, sv);
        sv = newRV_noinc((SV *)av);
    }
    return sv;
}

static uint32_t
mcp_exptime(pTHX_ SV *sv)
{
    IV t;
    SvGETMAGIC(sv);
    if (!SvOK(sv))
        return 0;
    t = SvIV_nomg(sv);
    if (t < 0)
        return EXPIRED_NOW;
    return t > (IV)UINT32_MAX ? UINT32_MAX : (uint32_t)t;
}

/* What a command answers, Cache::Memcached::Fast's way: true, false ("") for a cache
 * answer that says no, nothing (undef) for an error. */
#define RETURN_STATUS(st)                                                                 \
    do {                                                                                  \
        if ((st) == MCPOOL_OK)                                                            \
            XSRETURN_YES;                                                                 \
        if ((st) < 100)                                                                   \
            XSRETURN_NO;                                                                  \
        XSRETURN_EMPTY;                                                                   \
    } while (0)

/* Multi-get: the callback only copies each hit into a new SV (nothing that can croak runs
 * inside the core's call); decoding happens after it returns. */
typedef struct {
#ifdef PERL_IMPLICIT_CONTEXT
    PerlInterpreter *perl;
#endif
    SV **vals;
    uint32_t *flags;
    uint64_t *cas;
} mcp_multi_t;

static void
mcp_on_hit(void *userdata, size_t index, const uint8_t *key, size_t key_len,
           const uint8_t *value, size_t value_len, uint32_t flags, uint64_t cas)
{
    mcp_multi_t *mm = (mcp_multi_t *)userdata;
#ifdef PERL_IMPLICIT_CONTEXT
    dTHXa(mm->perl);
#endif
    PERL_UNUSED_ARG(key);
    PERL_UNUSED_ARG(key_len);
    if (mm->vals[index]) /* a key asked twice is answered twice: keep one */
        SvREFCNT_dec(mm->vals[index]);
    mm->vals[index] = newSVpvn(value_len ? (const char *)value : "", value_len);
    mm->flags[index] = flags;
    mm->cas[index] = cas;
}

static void
mcp_rebuild(pTHX_ mcp_t *m)
{
    mcpool_client *c = NULL;
    mcpool_status st = mcpool_client_new(m->config, &c);
    if (st != MCPOOL_OK)
        mcp_croak_status(aTHX_ "building the client", st);
    mcpool_client_free(m->client);
    m->client = c;
}

static void
mcp_set_prefix(pTHX_ mcp_t *m, SV *ns, int hash_namespace)
{
    STRLEN len = 0;
    const char *p = SvOK(ns) ? SvPV(ns, len) : "";
    mcpool_status st;
    if (len > 250)
        croak("Mcpool: the namespace is longer than 250 bytes");
    Safefree(m->prefix);
    m->prefix = NULL;
    m->prefix_len = 0;
    if (hash_namespace && len) {
        m->prefix = savepvn(p, len);
        m->prefix_len = len;
        len = 0;
    }
    st = mcpool_config_set_key_prefix(m->config, (const uint8_t *)p, len);
    if (st != MCPOOL_OK)
        mcp_croak_status(aTHX_ "namespace", st);
}

static IV
hv_iv(pTHX_ HV *hv, const char *k, IV dflt)
{
    SV **p = hv_fetch(hv, k, (I32)strlen(k), 0);
    return (p && SvOK(*p)) ? SvIV(*p) : dflt;
}

static NV
hv_nv(pTHX_ HV *hv, const char *k, NV dflt)
{
    SV **p = hv_fetch(hv, k, (I32)strlen(k), 0);
    return (p && SvOK(*p)) ? SvNV(*p) : dflt;
}

#define CFG(call, what)                                                                   \
    do {                                                                                  \
        mcpool_status st_ = (call);                                                       \
        if (st_ != MCPOOL_OK) {                                                           \
            mcpool_config_free(cfg);                                                      \
            mcp_croak_status(aTHX_ what, st_);                                            \
        }                                                                                 \
    } while (0)

MODULE = Mcpool		PACKAGE = Mcpool

PROTOTYPES: DISABLE

BOOT:
    mcp_stash = gv_stashpvs("Mcpool", GV_ADD);

const char *
library_version()
    CODE:
        RETVAL = mcpool_version();
    OUTPUT:
        RETVAL

SV *
_new(class, addrs, weights, opts)
        const char *class
        AV *addrs
        AV *weights
        HV *opts
    PREINIT:
        mcpool_config *cfg = NULL;
        mcp_t *m;
        SSize_t i, n;
        SV *obj, **p;
        STRLEN len;
        const char *s;
        IV threshold;
    CODE:
        if (mcpool_config_new(&cfg) != MCPOOL_OK)
            croak("Mcpool: out of memory");
        n = av_len(addrs) + 1;
        for (i = 0; i < n; i++) {
            SV **a = av_fetch(addrs, i, 0);
            SV **w = av_fetch(weights, i, 0);
            s = SvPV(*a, len);
            CFG(mcpool_config_add_server(cfg, s, len, (uint32_t)SvUV(*w)), "adding a server");
        }
        p = hv_fetchs(opts, "distribution", 0);
        s = SvPV(*p, len);
        CFG(mcpool_config_set_distribution(cfg, s, len), "distribution");
        CFG(mcpool_config_set_compression_format(cfg, "gzip", 4), "compression format");
        threshold = hv_iv(aTHX_ opts, "compress_threshold", -1);
        CFG(mcpool_config_set_compression(cfg, threshold > 0 && hv_iv(aTHX_ opts, "compress_enabled", 1)),
            "compression");
        if (threshold > 0)
            CFG(mcpool_config_set_compression_threshold(cfg, (size_t)threshold), "compress_threshold");
        CFG(mcpool_config_set_compression_ratio(cfg, hv_nv(aTHX_ opts, "compress_ratio", 0.8)),
            "compress_ratio (must be above 0 and at most 1)");
        CFG(mcpool_config_set_connect_timeout_ms(cfg, (uint64_t)hv_iv(aTHX_ opts, "connect_timeout_ms", 250)),
            "connect_timeout");
        CFG(mcpool_config_set_io_timeout_ms(cfg, (uint64_t)hv_iv(aTHX_ opts, "io_timeout_ms", 1000)),
            "io_timeout");
        CFG(mcpool_config_set_failure_limit(cfg, (uint32_t)hv_iv(aTHX_ opts, "failure_limit", 2)),
            "max_failures");
        CFG(mcpool_config_set_retry_timeout_ms(cfg, (uint64_t)hv_iv(aTHX_ opts, "retry_ms", 10000)),
            "failure_timeout");
        CFG(mcpool_config_set_retry_timeout_max_ms(cfg, (uint64_t)hv_iv(aTHX_ opts, "retry_ms", 10000)),
            "failure_timeout");
        CFG(mcpool_config_set_max_value_size(cfg, (size_t)hv_iv(aTHX_ opts, "max_size", 1048576)),
            "max_size");
        CFG(mcpool_config_set_min_idle(cfg, (uint32_t)hv_iv(aTHX_ opts, "min_idle", 0)), "min_idle");
        CFG(mcpool_config_set_max_size(cfg, (uint32_t)hv_iv(aTHX_ opts, "pool_size", 4)), "pool_size");
        Newxz(m, 1, mcp_t);
        m->config = cfg;
        m->utf8 = (int)hv_iv(aTHX_ opts, "utf8", 0);
        m->freeze = newSVsv(*hv_fetchs(opts, "freeze", 0));
        m->thaw = newSVsv(*hv_fetchs(opts, "thaw", 0));
        p = hv_fetchs(opts, "namespace", 0);
        mcp_set_prefix(aTHX_ m, p ? *p : &PL_sv_undef, (int)hv_iv(aTHX_ opts, "hash_namespace", 0));
        {
            mcpool_status st = mcpool_client_new(cfg, &m->client);
            if (st != MCPOOL_OK) {
                SvREFCNT_dec(m->freeze);
                SvREFCNT_dec(m->thaw);
                Safefree(m->prefix);
                Safefree(m);
                mcpool_config_free(cfg);
                mcp_croak_status(aTHX_ "building the client", st);
            }
        }
        obj = newSViv(PTR2IV(m));
        RETVAL = sv_bless(newRV_noinc(obj), gv_stashpv(class, GV_ADD));
        SvREADONLY_on(obj);
    OUTPUT:
        RETVAL

void
_destroy(self)
        SV *self
    PREINIT:
        mcp_t *m;
        SV *rv;
    CODE:
        if (!SvROK(self))
            return;
        rv = SvRV(self);
        m = INT2PTR(mcp_t *, SvIV(rv));
        if (!m)
            return;
        SvREADONLY_off(rv);
        sv_setiv(rv, 0);
        SvREADONLY_on(rv);
        mcpool_client_free(m->client);
        mcpool_config_free(m->config);
        SvREFCNT_dec(m->freeze);
        SvREFCNT_dec(m->thaw);
        Safefree(m->prefix);
        Safefree(m);

int
CLONE_SKIP(...)
    CODE:
        PERL_UNUSED_VAR(items);
        RETVAL = 1;
    OUTPUT:
        RETVAL

void
get(m, key)
        Mcpool m
        SV *key
    ALIAS:
        gets = 1
    PREINIT:
        char kbuf[KEYBUF];
        STRLEN klen;
        const uint8_t *k;
        mcpool_item *item = NULL;
        mcpool_status st;
        SV *sv;
    PPCODE:
        k = mcp_key(aTHX_ m, key, &klen, kbuf, ix ? "gets" : "get");
        st = ix ? mcpool_client_gets(m->client, k, klen, &item)
                : mcpool_client_get(m->client, k, klen, &item);
        if (st != MCPOOL_OK)
            XSRETURN_EMPTY;
        sv = mcp_item_sv(aTHX_ m, item, ix);
        if (!sv)
            XSRETURN_EMPTY;
        mXPUSHs(sv);
        XSRETURN(1);

void
gat(m, exptime, key)
        Mcpool m
        SV *exptime
        SV *key
    ALIAS:
        gats = 1
    PREINIT:
        char kbuf[KEYBUF];
        STRLEN klen;
        const uint8_t *k;
        mcpool_item *item = NULL;
        mcpool_status st;
        uint32_t t;
        SV *sv;
    PPCODE:
        t = mcp_exptime(aTHX_ exptime);
        k = mcp_key(aTHX_ m, key, &klen, kbuf, ix ? "gats" : "gat");
        st = ix ? mcpool_client_gats(m->client, k, klen, t, &item)
                : mcpool_client_gat(m->client, k, klen, t, &item);
        if (st != MCPOOL_OK)
            XSRETURN_EMPTY;
        sv = mcp_item_sv(aTHX_ m, item, ix);
        if (!sv)
            XSRETURN_EMPTY;
        mXPUSHs(sv);
        XSRETURN(1);

void
get_multi(m, ...)
        Mcpool m
    ALIAS:
        gets_multi = 1
    PREINIT:
        size_t n, i;
        const uint8_t **keys;
        size_t *lens;
        mcp_multi_t mm;
        HV *hv;
        char *kbufs = NULL;
        const char *fn;
    PPCODE:
        fn = ix ? "gets_multi" : "get_multi";
        n = (size_t)(items - 1);
        hv = newHV();
        sv_2mortal((SV *)hv);
        if (n > 0) {
            /* One block for the key pointers, lengths, values, flags and CAS uniques. */
            char *block;
            size_t sz = n * (sizeof(*keys) + sizeof(*lens) + sizeof(SV *) + sizeof(uint64_t)
                             + sizeof(uint32_t));
            Newxz(block, sz, char);
            SAVEFREEPV(block);
            keys = (const uint8_t **)block;
            lens = (size_t *)(block + n * sizeof(*keys));
            mm.vals = (SV **)((char *)lens + n * sizeof(*lens));
            mm.cas = (uint64_t *)((char *)mm.vals + n * sizeof(SV *));
            mm.flags = (uint32_t *)((char *)mm.cas + n * sizeof(uint64_t));
#ifdef PERL_IMPLICIT_CONTEXT
            mm.perl = aTHX;
#endif
            if (m->prefix_len) {
                Newx(kbufs, n * KEYBUF, char);
                SAVEFREEPV(kbufs);
            }
            for (i = 0; i < n; i++) {
                STRLEN l;
                SV *ks = ST(i + 1);
                if (m->prefix_len) {
                    keys[i] = mcp_key(aTHX_ m, ks, &l, kbufs + i * KEYBUF, fn);
                } else {
                    /* the common case, inlined: no namespace of ours to add */
                    SvGETMAGIC(ks);
                    if (!SvOK(ks) || (SvROK(ks) && !SvAMAGIC(ks)))
                        keys[i] = mcp_key(aTHX_ m, ks, &l, NULL, fn); /* croaks */
                    keys[i] = (const uint8_t *)SvPV_nomg(ks, l);
                }
                lens[i] = l;
            }
            (void)mcpool_client_get_multi_cb(m->client, keys, lens, n, ix != 0, mcp_on_hit, &mm);
            hv_ksplit(hv, n);
            for (i = 0; i < n; i++) {
                SV *sv = mm.vals[i];
                if (!sv)
                    continue;
                sv = mcp_decode(aTHX_ m, sv, mm.flags[i]);
                if (!sv)
                    continue;
                if (ix) {
                    AV *av = newAV();
                    av_extend(av, 1);
                    av_push(av, newSVuv((UV)mm.cas[i]));
                    av_push(av, sv);
                    sv = newRV_noinc((SV *)av);
                }
                if (!hv_store_ent(hv, ST(i + 1), sv, 0))
                    SvREFCNT_dec(sv);
            }
        }
        XPUSHs(sv_2mortal(newRV_inc((SV *)hv)));
        XSRETURN(1);

void
set(m, key, ...)
        Mcpool m
        SV *key
    ALIAS:
        add = 1
        replace = 2
        append = 3
        prepend = 4
        cas = 5
    PREINIT:
        static const char *const names[] = { "set", "add", "replace", "append", "prepend", "cas" };
        char kbuf[KEYBUF];
        STRLEN klen, vlen;
        const uint8_t *k;
        const char *v;
        int arg = 2;
        uint64_t cas = 0;
        uint32_t flags = 0, t = 0;
        mcpool_status st;
    PPCODE:
        if (ix == 5) {
            if (items < 4)
                croak("Usage: $memd->cas($key, $cas, $value[, $expiration_time])");
            cas = (uint64_t)SvUV(ST(2));
            arg = 3;
        } else if (items < 3) {
            croak("Usage: $memd->%s($key, $value%s)", names[ix],
                  ix == 3 || ix == 4 ? "" : "[, $expiration_time]");
        }
        k = mcp_key(aTHX_ m, key, &klen, kbuf, names[ix]);
        v = mcp_value(aTHX_ m, ST(arg), &vlen, &flags);
        if (items > arg + 1)
            t = mcp_exptime(aTHX_ ST(arg + 1));
        switch (ix) {
        case 0: st = mcpool_client_set(m->client, k, klen, (const uint8_t *)v, vlen, flags, t); break;
        case 1: st = mcpool_client_add(m->client, k, klen, (const uint8_t *)v, vlen, flags, t); break;
        case 2: st = mcpool_client_replace(m->client, k, klen, (const uint8_t *)v, vlen, flags, t); break;
        case 3: st = mcpool_client_append(m->client, k, klen, (const uint8_t *)v, vlen); break;
        case 4: st = mcpool_client_prepend(m->client, k, klen, (const uint8_t *)v, vlen); break;
        default: st = mcpool_client_cas(m->client, k, klen, (const uint8_t *)v, vlen, flags, t, cas); break;
        }
        RETURN_STATUS(st);

void
delete(m, key, ...)
        Mcpool m
        SV *key
    ALIAS:
        remove = 1
    PREINIT:
        char kbuf[KEYBUF];
        STRLEN klen;
        const uint8_t *k;
        mcpool_status st;
    PPCODE:
        k = mcp_key(aTHX_ m, key, &klen, kbuf, ix ? "remove" : "delete");
        if (items > 2 && SvOK(ST(2)) && SvUV(ST(2)) != 0)
            warn("non-zero delete expiration time is ignored");
        st = mcpool_client_delete(m->client, k, klen);
        RETURN_STATUS(st);

void
touch(m, key, ...)
        Mcpool m
        SV *key
    PREINIT:
        char kbuf[KEYBUF];
        STRLEN klen;
        const uint8_t *k;
        mcpool_status st;
        uint32_t t = 0;
    PPCODE:
        k = mcp_key(aTHX_ m, key, &klen, kbuf, "touch");
        if (items > 2)
            t = mcp_exptime(aTHX_ ST(2));
        st = mcpool_client_touch(m->client, k, klen, t);
        RETURN_STATUS(st);

void
incr(m, key, ...)
        Mcpool m
        SV *key
    ALIAS:
        decr = 1
    PREINIT:
        char kbuf[KEYBUF];
        STRLEN klen;
        const uint8_t *k;
        mcpool_status st;
        uint64_t delta = 1, out = 0;
    PPCODE:
        k = mcp_key(aTHX_ m, key, &klen, kbuf, ix ? "decr" : "incr");
        if (items > 2) {
            SV *d = ST(2);
            SvGETMAGIC(d);
            if (SvOK(d))
                delta = (uint64_t)SvUV_nomg(d);
        }
        st = ix ? mcpool_client_decr(m->client, k, klen, delta, &out)
                : mcpool_client_incr(m->client, k, klen, delta, &out);
        if (st == MCPOOL_OK) {
            /* zero is "0E0": true in a boolean context, as Cache::Memcached::Fast returns it */
            if (out == 0)
                mXPUSHs(newSVpvs("0E0"));
            else
                mXPUSHs(newSVuv((UV)out));
            XSRETURN(1);
        }
        if (st < 100)
            XSRETURN_NO;
        XSRETURN_EMPTY;

SV *
_flush_all(m, delay)
        Mcpool m
        UV delay
    CODE:
        RETVAL = newSViv((IV)mcpool_client_flush_all(m->client, (uint32_t)delay));
    OUTPUT:
        RETVAL

void
server_labels(m)
        Mcpool m
    PREINIT:
        size_t n = 0, i;
    PPCODE:
        if (mcpool_client_server_count(m->client, &n) != MCPOOL_OK)
            XSRETURN_EMPTY;
        EXTEND(SP, (SSize_t)n);
        for (i = 0; i < n; i++) {
            const char *l = NULL;
            size_t len = 0;
            if (mcpool_client_server_label(m->client, i, &l, &len) == MCPOOL_OK)
                mPUSHs(newSVpvn(l, len));
            else
                PUSHs(&PL_sv_undef);
        }
        XSRETURN((SSize_t)n);

void
server_for(m, key)
        Mcpool m
        SV *key
    PREINIT:
        char kbuf[KEYBUF];
        STRLEN klen;
        const uint8_t *k;
        size_t idx = 0;
        const char *l = NULL;
        size_t len = 0;
    PPCODE:
        k = mcp_key(aTHX_ m, key, &klen, kbuf, "server_for");
        if (mcpool_client_server_for(m->client, k, klen, &idx) != MCPOOL_OK
            || mcpool_client_server_label(m->client, idx, &l, &len) != MCPOOL_OK)
            XSRETURN_EMPTY;
        mXPUSHs(newSVpvn(l, len));
        XSRETURN(1);

SV *
server_versions(m)
        Mcpool m
    PREINIT:
        mcpool_server_results *r = NULL;
        size_t n, i;
        HV *hv;
    CODE:
        hv = newHV();
        if (mcpool_client_version(m->client, &r) == MCPOOL_OK) {
            n = mcpool_server_results_len(r);
            for (i = 0; i < n; i++) {
                const char *label = NULL, *name = NULL, *value = NULL;
                size_t llen = 0, nlen = 0, vlen = 0;
                if (mcpool_server_results_status(r, i) != MCPOOL_OK)
                    continue;
                if (mcpool_server_results_label(r, i, &label, &llen) != MCPOOL_OK)
                    continue;
                if (mcpool_server_results_entry(r, i, 0, &name, &nlen, &value, &vlen) != MCPOOL_OK)
                    continue;
                (void)hv_store(hv, label, (I32)llen, newSVpvn(value, vlen), 0);
            }
            mcpool_server_results_free(r);
        }
        RETVAL = newRV_noinc((SV *)hv);
    OUTPUT:
        RETVAL

void
disconnect_all(m)
        Mcpool m
    CODE:
        mcp_rebuild(aTHX_ m);

void
_set_namespace(m, ns, hash_namespace)
        Mcpool m
        SV *ns
        int hash_namespace
    CODE:
        mcp_set_prefix(aTHX_ m, ns, hash_namespace);
        mcp_rebuild(aTHX_ m);

void
_set_compression(m, on)
        Mcpool m
        int on
    PREINIT:
        mcpool_status st;
    CODE:
        st = mcpool_config_set_compression(m->config, on ? true : false);
        if (st != MCPOOL_OK)
            mcp_croak_status(aTHX_ "enable_compress", st);
        mcp_rebuild(aTHX_ m);

SV *
last_error(...)
    CODE:
        PERL_UNUSED_VAR(items);
        RETVAL = newSVpvn(mcpool_last_error_message(), mcpool_last_error_length());
    OUTPUT:
        RETVAL

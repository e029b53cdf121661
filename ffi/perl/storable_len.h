/* storable_len.h: where a Storable image ends, for Mcpool.xs (included once, after perl.h).
 * Used to find bytes an append or prepend left after a serialized value. */
#ifndef MCPOOL_STORABLE_LEN_H
#define MCPOOL_STORABLE_LEN_H

/* The length of a Storable image (Storable.xs's binary format, major 2: what freeze and
 * nfreeze write in memory), read the way Storable's retrieve reads it but building nothing:
 * 1 with *len the bytes the image's root object takes, 0 when this cannot tell (an image cut
 * short, a length Storable would refuse, an old or a newer format, a large object over 2 GB,
 * a type this walker does not know). Used only to find bytes after a complete image (what an
 * append or prepend to a serialized value leaves, which thaw ignores); thaw itself decides
 * what the image holds. Iterative, with a stack of open containers: any nesting depth. */
enum { MCP_STO_ITEMS, MCP_STO_HASH, MCP_STO_FHASH, MCP_STO_TIDX, MCP_STO_HOOK };

typedef struct {
    unsigned char op, phase, extra; /* extra: a hook of a tied object (SHT_EXTRA) */
    U32 left;                              /* items (or hash entries) still to read */
} mcp_sto_frame;

typedef struct {
    const unsigned char *p, *e;
    int net; /* network order (nfreeze); else this machine's (thaw checks the header) */
} mcp_sto_t;

static int
mcp_sto_byte(mcp_sto_t *c, unsigned *x)
{
    if (c->p >= c->e)
        return 0;
    *x = *c->p++;
    return 1;
}

static int
mcp_sto_skip(mcp_sto_t *c, size_t k)
{
    if ((size_t)(c->e - c->p) < k)
        return 0;
    c->p += k;
    return 1;
}

/* RLEN: a 4-byte length, in network order or this machine's; negative ones (which Storable
 * never writes, and reads as nothing or refuses) are refused here. */
static int
mcp_sto_len(mcp_sto_t *c, U32 *x)
{
    U32 v;
    if (c->e - c->p < 4)
        return 0;
    if (c->net)
        v = (U32)c->p[0] << 24 | (U32)c->p[1] << 16 | (U32)c->p[2] << 8 | (U32)c->p[3];
    else
        memcpy(&v, c->p, 4);
    c->p += 4;
    if (v > (U32)I32_MAX)
        return 0;
    *x = v;
    return 1;
}

/* A length, 4 bytes when `large`, else one. */
static int
mcp_sto_len_or_byte(mcp_sto_t *c, int large, U32 *x)
{
    unsigned b;
    if (large)
        return mcp_sto_len(c, x);
    if (!mcp_sto_byte(c, &b))
        return 0;
    *x = b;
    return 1;
}

/* A length and the bytes it counts. */
static int
mcp_sto_counted(mcp_sto_t *c, int large)
{
    U32 n;
    return mcp_sto_len_or_byte(c, large, &n) && mcp_sto_skip(c, n);
}

/* The hook's fields after its recursed objects (SX_HOOK: the class, the frozen string, the
 * list of object tags). */
static int
mcp_sto_hook_tail(mcp_sto_t *c, unsigned flags)
{
    U32 n;
    if (flags & 0x20) { /* SHF_IDX_CLASSNAME: a class seen before, by index */
        if (!mcp_sto_len_or_byte(c, flags & 0x04, &n))
            return 0;
    } else if (!mcp_sto_counted(c, flags & 0x04)) { /* SHF_LARGE_CLASSLEN */
        return 0;
    }
    if (!mcp_sto_counted(c, flags & 0x08)) /* SHF_LARGE_STRLEN: the frozen string */
        return 0;
    if (flags & 0x80) { /* SHF_HAS_LIST: object tags, 4 bytes each (8: large ids) */
        if (flags & 0x10) { /* SHF_LARGE_LISTLEN: a signed count, negative for large ids */
            U32 v;
            I32 len3;
            if (c->e - c->p < 4)
                return 0;
            if (c->net)
                v = (U32)c->p[0] << 24 | (U32)c->p[1] << 16 | (U32)c->p[2] << 8 | (U32)c->p[3];
            else
                memcpy(&v, c->p, 4);
            c->p += 4;
            len3 = (I32)v;
            if (len3 < 0)
                return len3 != I32_MIN && mcp_sto_skip(c, (size_t)-len3 * 8);
            return mcp_sto_skip(c, (size_t)len3 * 4);
        }
        if (!mcp_sto_len_or_byte(c, 0, &n))
            return 0;
        return mcp_sto_skip(c, (size_t)n * 4);
    }
    return 1;
}

#define MCP_STO_STACK 32

static int
mcp_storable_len(const unsigned char *data, size_t n, size_t *len)
{
    mcp_sto_t c;
    mcp_sto_frame local[MCP_STO_STACK], *st = local, *f;
    size_t depth = 0, cap = MCP_STO_STACK;
    unsigned b, major, minor;
    int ok = 0;
    c.p = data;
    c.e = data + n;
    /* the header of an in-memory image (no "pst0" magic): (major << 1) | netorder, minor;
     * native order adds the byte order string and the sizes of int, long, char * (and NV
     * from minor 2) */
    if (!mcp_sto_byte(&c, &b))
        return 0;
    major = b >> 1;
    c.net = b & 1;
    if (major != 2 || !mcp_sto_byte(&c, &minor))
        return 0;
    if (!c.net && !(mcp_sto_counted(&c, 0) && mcp_sto_skip(&c, minor >= 2 ? 4 : 3)))
        return 0;
    /* the root: one object */
    st[0].op = MCP_STO_ITEMS;
    st[0].left = 1;
    depth = 1;
    while (depth > 0) {
        U32 k;
        unsigned type;
        f = &st[depth - 1];
        /* where the open container is: the next object to read, or its fields after one */
        switch (f->op) {
        case MCP_STO_ITEMS:
            if (f->left == 0) {
                depth--;
                continue;
            }
            f->left--;
            break;
        case MCP_STO_HASH: /* (value, key length, key) per entry */
            if (f->phase == 1) {
                if (!mcp_sto_counted(&c, 1))
                    goto done;
                f->phase = 0;
                continue;
            }
            if (f->left == 0) {
                depth--;
                continue;
            }
            f->left--;
            f->phase = 1;
            break;
        case MCP_STO_FHASH: /* (value, flags, key length and key, or a key object) */
            if (f->phase == 1) {
                if (!mcp_sto_byte(&c, &b))
                    goto done;
                if (b & 0x08) { /* SHV_K_ISSV: the key is an object */
                    f->phase = 0;
                    break;
                }
                if (!mcp_sto_counted(&c, 1))
                    goto done;
                f->phase = 0;
                continue;
            }
            if (f->left == 0) {
                depth--;
                continue;
            }
            f->left--;
            f->phase = 1;
            break;
        case MCP_STO_TIDX: /* an object, then an index */
            if (f->phase == 1) {
                if (!mcp_sto_skip(&c, 4))
                    goto done;
                depth--;
                continue;
            }
            f->phase = 1;
            break;
        default: /* MCP_STO_HOOK: 0 a recursed object is next, 2 one was read (its flags
                  * follow), 3 the tied object is next, 1 it was read */
            if (f->phase == 1) {
                depth--;
                continue;
            }
            if (f->phase == 0 || f->phase == 3) {
                f->phase = f->phase == 0 ? 2 : 1;
                break;
            }
            if (!mcp_sto_byte(&c, &b))
                goto done;
            if (b & 0x40) /* SHF_NEED_RECURSE: another object first */
                break;
            if (!mcp_sto_hook_tail(&c, b))
                goto done;
            if (!f->extra) {
                depth--;
                continue;
            }
            f->phase = 1; /* the tied object follows */
            break;
        }
        /* one object: its type, then what it holds; a container is pushed */
        if (!mcp_sto_byte(&c, &type))
            goto done;
        if (depth == cap) { /* every frame took a byte of the image: depth <= n */
            mcp_sto_frame *bigger;
            size_t ncap = cap * 2;
            if (st == local) {
                Newx(bigger, ncap, mcp_sto_frame);
                Copy(local, bigger, cap, mcp_sto_frame);
            } else {
                bigger = st;
                Renew(bigger, ncap, mcp_sto_frame);
            }
            st = bigger;
            cap = ncap;
        }
        f = &st[depth];
        f->phase = f->extra = 0;
        f->left = 0;
        switch (type) {
        case 0:  /* SX_OBJECT: a tag */
        case 9:  /* SX_NETINT */
            if (!mcp_sto_skip(&c, 4))
                goto done;
            break;
        case 1:  /* SX_LSCALAR */
        case 24: /* SX_LUTF8STR */
            if (!mcp_sto_counted(&c, 1))
                goto done;
            break;
        case 10: /* SX_SCALAR */
        case 23: /* SX_UTF8STR */
            if (!mcp_sto_counted(&c, 0))
                goto done;
            break;
        case 2: /* SX_ARRAY */
        case 3: /* SX_HASH */
            if (!mcp_sto_len(&c, &k))
                goto done;
            f->op = type == 2 ? MCP_STO_ITEMS : MCP_STO_HASH;
            f->left = k;
            depth++;
            break;
        case 25: /* SX_FLAG_HASH: hash flags, then the entries */
            if (!mcp_sto_byte(&c, &b) || !mcp_sto_len(&c, &k))
                goto done;
            f->op = MCP_STO_FHASH;
            f->left = k;
            depth++;
            break;
        case 4:  /* SX_REF */
        case 11: /* SX_TIED_ARRAY */
        case 12: /* SX_TIED_HASH */
        case 13: /* SX_TIED_SCALAR */
        case 20: /* SX_OVERLOAD */
        case 27: /* SX_WEAKREF */
        case 28: /* SX_WEAKOVERLOAD */
            f->op = MCP_STO_ITEMS;
            f->left = 1;
            depth++;
            break;
        case 21: /* SX_TIED_KEY: the object, the key */
            f->op = MCP_STO_ITEMS;
            f->left = 2;
            depth++;
            break;
        case 22: /* SX_TIED_IDX: the object, a 4-byte index */
            f->op = MCP_STO_TIDX;
            depth++;
            break;
        case 5:  /* SX_UNDEF */
        case 14: /* SX_SV_UNDEF */
        case 15: /* SX_SV_YES */
        case 16: /* SX_SV_NO */
        case 31: /* SX_SVUNDEF_ELEM */
            break;
        case 6: /* SX_INTEGER: the reader's IV */
            if (!mcp_sto_skip(&c, IVSIZE))
                goto done;
            break;
        case 7: /* SX_DOUBLE: the reader's NV */
            if (!mcp_sto_skip(&c, NVSIZE))
                goto done;
            break;
        case 8: /* SX_BYTE */
            if (!mcp_sto_skip(&c, 1))
                goto done;
            break;
        case 17: /* SX_BLESS: a class name (length byte, or 0x80 and 4 bytes), the object */
        case 18: /* SX_IX_BLESS: a class index (likewise), the object */
            if (!mcp_sto_byte(&c, &b))
                goto done;
            if (b & 0x80) {
                if (!mcp_sto_len(&c, &k))
                    goto done;
            } else {
                k = b;
            }
            if (type == 17 && !mcp_sto_skip(&c, k))
                goto done;
            f->op = MCP_STO_ITEMS;
            f->left = 1;
            depth++;
            break;
        case 19: /* SX_HOOK: flags (with a tied object, its type), objects, the rest */
            if (!mcp_sto_byte(&c, &b))
                goto done;
            f->op = MCP_STO_HOOK;
            f->extra = (b & 0x03) == 3; /* SHT_EXTRA: a tied object, its type byte next */
            if (f->extra && !mcp_sto_byte(&c, &type))
                goto done;
            if (b & 0x40) { /* objects first: each followed by the flags again */
                depth++;
                break;
            }
            if (!mcp_sto_hook_tail(&c, b))
                goto done;
            if (f->extra) {
                f->phase = 3;
                depth++;
            }
            break;
        case 26: /* SX_CODE: its source as one of the scalar types */
            if (!mcp_sto_byte(&c, &b))
                goto done;
            if (b == 10 || b == 23) {
                if (!mcp_sto_counted(&c, 0))
                    goto done;
            } else if (b == 1 || b == 24) {
                if (!mcp_sto_counted(&c, 1))
                    goto done;
            } else {
                goto done;
            }
            break;
        case 29: /* SX_VSTRING: the v-string, then the scalar */
        case 30: /* SX_LVSTRING */
            if (!mcp_sto_counted(&c, type == 30))
                goto done;
            f->op = MCP_STO_ITEMS;
            f->left = 1;
            depth++;
            break;
        case 32: /* SX_REGEXP: op flags, the pattern (4-byte length with op flag 1), flags */
            if (!mcp_sto_byte(&c, &b) || !mcp_sto_counted(&c, b & 0x01) ||
                !mcp_sto_counted(&c, 0))
                goto done;
            break;
        default: /* SX_LOBJECT (over 2 GB), a newer type, or not an image: cannot tell */
            goto done;
        }
    }
    *len = (size_t)(c.p - data);
    ok = 1;
done:
    if (st != local)
        Safefree(st);
    return ok;
}

#endif

//! The typed-value calls of [`Client`]: `set_value`, `store_value`, `get_value`,
//! `get_values`, `value_kind`, `kind_flags`: the client's value format applied on top of
//! the byte-level calls.

use super::Client;
use crate::error::{Error, Result};
use crate::item::StoreOutcome;
use crate::key::Single;
use crate::proto::ascii::StoreCommand;
use crate::set_item::Compress;
use crate::sink::Callbacks;
use crate::value::transcode::Part;
use crate::value::{Kind, Value};
use std::borrow::Cow;

/// Append and prepend store bytes, never a typed value's encoding.
fn typed_store(cmd: StoreCommand) -> Result<()> {
    if matches!(cmd, StoreCommand::Append | StoreCommand::Prepend) {
        return Err(Error::Unsupported(
            "append and prepend store bytes, not typed values".into(),
        ));
    }
    Ok(())
}

impl Client {
    /// Stores a typed value under `key` in the client's value format (flags, integer and
    /// boolean encodings, compression: docs/value-format.md). `Error::Unsupported` when the
    /// format has no such kind (e.g. an integer under `cache-memcached-fast`) or the value is a
    /// serialized object whose kind is off.
    pub fn set_value(
        &self,
        key: impl AsRef<[u8]>,
        value: &Value,
        ttl: u32,
    ) -> Result<StoreOutcome> {
        self.store_value(StoreCommand::Set, key, value, ttl)
    }

    /// [`Client::set_value`] with any store command but append/prepend (which cannot keep a
    /// typed value's encoding): set, add, replace, cas.
    pub fn store_value(
        &self,
        cmd: StoreCommand,
        key: impl AsRef<[u8]>,
        value: &Value,
        ttl: u32,
    ) -> Result<StoreOutcome> {
        self.store_value_as(cmd, key, value, ttl, Compress::Auto)
    }

    /// [`Client::store_value`] with a per-call compression decision ([`Compress`]): e.g.
    /// Whalin's per-`MemCachedClient` threshold (`Compress::Threshold`) on one shared client.
    pub fn store_value_as(
        &self,
        cmd: StoreCommand,
        key: impl AsRef<[u8]>,
        value: &Value,
        ttl: u32,
        compress: Compress,
    ) -> Result<StoreOutcome> {
        let key = key.as_ref();
        let encoded = self.encode_typed(cmd, key, value.kind(), Part::of(value), compress);
        self.store_encoded(cmd, key, encoded, ttl)
    }

    /// Stores many typed values, pipelined per server as [`Client::set_multi`] (one round
    /// trip per server), each encoded as [`Client::set_value`] encodes it. One outcome per
    /// item, in order; an item the format cannot store (`Error::Unsupported`) fails alone.
    pub fn set_multi_values<K: AsRef<[u8]>>(
        &self,
        items: &[(K, Value)],
        ttl: u32,
    ) -> Vec<Result<StoreOutcome>> {
        let bodies: Vec<Cow<'_, [u8]>> = items.iter().map(|(_, v)| v.abi_body()).collect();
        let typed: Vec<crate::set_item::SetItem<'_>> = items
            .iter()
            .zip(&bodies)
            .map(|((k, v), b)| crate::set_item::SetItem::typed(k.as_ref(), v.kind(), b, ttl))
            .collect();
        self.store_multi_items(StoreCommand::Set, &typed)
    }

    /// Stores a value of `kind` given as its ABI body (the bytes; UTF-8 for text; an
    /// integer's decimal text of any size, as [`Client::store_int_text_as`]; `0` or `1` for a
    /// boolean), as [`Client::store_value_as`] stores the [`Value`]: the form the C ABI and
    /// the bindings hand a typed value in. A body that is not one of its kind is
    /// `Error::InvalidArgument`, a kind the format lacks `Error::Unsupported` (checked first,
    /// whatever the body).
    pub fn store_kind_as(
        &self,
        cmd: StoreCommand,
        key: impl AsRef<[u8]>,
        kind: Kind,
        body: &[u8],
        ttl: u32,
        compress: Compress,
    ) -> Result<StoreOutcome> {
        let key = key.as_ref();
        let encoded = self.encode_kind(cmd, key, kind, body, compress);
        self.store_encoded(cmd, key, encoded, ttl)
    }

    /// Stores an integer of the rest of the integer kind's range, `2**63..=2**64-1`
    /// (memcached's counter range: `incr`/`decr` count in it), as its decimal digits under
    /// the format's integer flags: what the Python peers (pylibmc, python-memcached,
    /// pymemcache) store for such an int, so `incr` keeps counting on it. A value up to
    /// `i64::MAX` is [`Client::store_value_as`]'s `Value::Int`. The formats that write
    /// integers as 64-bit signed binary (`whalin`, `spymemcached`: Java's `long`) have no form
    /// for it: `Error::InvalidArgument`; one without integers: `Error::Unsupported`.
    pub fn store_unsigned_as(
        &self,
        cmd: StoreCommand,
        key: impl AsRef<[u8]>,
        value: u64,
        ttl: u32,
        compress: Compress,
    ) -> Result<StoreOutcome> {
        let digits = value.to_string();
        self.store_kind_as(cmd, key, Kind::Int, digits.as_bytes(), ttl, compress)
    }

    /// Stores an integer of any size given as its decimal text (an optional `-`, then digits:
    /// the ABI's form of an int, e.g. a Python `int`'s `str`): the one rule for an integer
    /// whatever its size. One in `i64` is [`Client::store_value_as`]'s `Value::Int`; one in
    /// `2**63..=2**64-1` is [`Client::store_unsigned_as`]'s; a larger one (beyond 64 bits) is
    /// its digits under the format's integer flags where the format writes integers as
    /// decimal text (`mcpool`, `pylibmc`, `python-memcached`, `pymemcache`: what pylibmc,
    /// python-memcached and pymemcache store for a Python `int` of any size, and what every
    /// mcpool byte-level read delivers exactly), and `Error::InvalidArgument` where integers
    /// are 64-bit binary (`whalin`, `spymemcached`). Text that is not such an integer is
    /// `Error::InvalidArgument`; a format without integers `Error::Unsupported`.
    pub fn store_int_text_as(
        &self,
        cmd: StoreCommand,
        key: impl AsRef<[u8]>,
        digits: &[u8],
        ttl: u32,
        compress: Compress,
    ) -> Result<StoreOutcome> {
        self.store_kind_as(cmd, key, Kind::Int, digits, ttl, compress)
    }

    /// The wire body and flags of a value of `kind` given as its ABI body
    /// ([`Client::store_kind_as`]'s rule, one place for the single and the batch stores).
    pub(crate) fn encode_kind<'v>(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        kind: Kind,
        body: &'v [u8],
        compress: Compress,
    ) -> Result<(Cow<'v, [u8]>, u32)> {
        typed_store(cmd)?;
        // a kind the format lacks is Unsupported whatever the body (a binding falls back to
        // bytes on it: Perl stores a number as its text, as Cache::Memcached::Fast does)
        self.check_kind(kind)?;
        let not_a = |what: &str| Error::InvalidArgument {
            what: "value",
            reason: format!("the data is not a valid {kind} ({what})"),
        };
        let part = match kind {
            Kind::Int => match crate::value::kind::parse_decimal(body) {
                Some(i) => Part::Int(i),
                None if crate::value::kind::is_integer_text(body) => {
                    return self.encode_int_digits(cmd, key, body, compress)
                }
                None => {
                    return Err(not_a(
                        "an integer is given as its decimal text: an optional '-', then \
                         digits, e.g. \"-42\"",
                    ))
                }
            },
            Kind::Bool => match body {
                b"1" => Part::Bool(true),
                b"0" => Part::Bool(false),
                _ => return Err(not_a("\"0\" or \"1\"")),
            },
            Kind::Text if std::str::from_utf8(body).is_err() => return Err(not_a("UTF-8")),
            _ => Part::Plain(body),
        };
        self.encode_typed(cmd, key, kind, part, compress)
    }

    /// An integer beyond `i64` given as its decimal digits: in memcached's counter range
    /// (up to `2**64-1`) its canonical digits, beyond it the digits as given, under the
    /// format's integer flags (the formats that write integers as decimal text; one whose
    /// integers are 64-bit binary has no form for it: `Error::InvalidArgument`).
    fn encode_int_digits<'v>(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        digits: &'v [u8],
        compress: Compress,
    ) -> Result<(Cow<'v, [u8]>, u32)> {
        let values = self.values();
        let unsigned = crate::value::kind::parse_unsigned_above_i64(digits);
        let flags = values.decimal_int_flags().ok_or_else(|| match unsigned {
            Some(u) => values.above_i64(u),
            None => values.beyond_64_bits(digits),
        })?;
        match unsigned {
            Some(u) => {
                let canonical = u.to_string();
                let (data, flags) =
                    self.encode_value_as(cmd, key, canonical.as_bytes(), flags, compress)?;
                Ok((Cow::Owned(data.into_owned()), flags))
            }
            None => self.encode_value_as(cmd, key, digits, flags, compress),
        }
    }

    /// The wire body and flags of a typed value given by its kind and parts, compressed per
    /// `compress`, within the size limits.
    fn encode_typed<'v>(
        &self,
        cmd: StoreCommand,
        key: &[u8],
        kind: Kind,
        part: Part<'v>,
        compress: Compress,
    ) -> Result<(Cow<'v, [u8]>, u32)> {
        typed_store(cmd)?;
        let given = match part {
            Part::Plain(b) => b.len(),
            Part::Int(i) => i.to_string().len(),
            Part::Bool(_) => 1,
        };
        let limit = self.check_given_size(cmd, key, given)?;
        let (data, flags) = match compress {
            Compress::Auto => self.values().encode_part(kind, part)?,
            decided => {
                let rule = self.compression_for(decided)?;
                crate::value::Transcoder::new(self.config().values, &rule)
                    .encode_part(kind, part)?
            }
        };
        if data.len() > limit {
            return Err(self.too_large(cmd, key, data.len(), limit));
        }
        Ok((data, flags))
    }

    /// Reads `key` as a typed value in the client's value format: `None` on a miss; an error
    /// naming the key and the flags when they mean nothing in the format, mark a serialized
    /// kind that is off, or say compressed over a stream that cannot be inflated.
    pub fn get_value(&self, key: impl AsRef<[u8]>) -> Result<Option<Value>> {
        let mut out = None;
        let mut found = Ok(false);
        self.read(
            &Single(key.as_ref()),
            false,
            None,
            &mut Callbacks(
                |_, body: &[u8], flags: u32, _| {
                    out = Some((body.to_vec(), flags));
                    Ok(())
                },
                |_, r| found = r,
            ),
        );
        let hit = found?;
        match out.filter(|_| hit) {
            None => Ok(None),
            Some((body, flags)) => self.typed(key.as_ref(), body, flags).map(Some),
        }
    }

    /// Reads many keys as typed values (one round trip per server): one result per key, in
    /// order.
    pub fn get_values<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<Result<Option<Value>>> {
        let mut got: Vec<Option<(Vec<u8>, u32)>> = (0..keys.len()).map(|_| None).collect();
        let mut found = Vec::with_capacity(keys.len());
        self.read(
            keys,
            false,
            None,
            &mut Callbacks(
                |i, body: &[u8], flags: u32, _| {
                    got[i] = Some((body.to_vec(), flags));
                    Ok(())
                },
                |_, r| found.push(r),
            ),
        );
        found
            .into_iter()
            .zip(got)
            .zip(keys)
            .map(|((r, g), k)| match (r?, g) {
                (true, Some((body, flags))) => self.typed(k.as_ref(), body, flags).map(Some),
                _ => Ok(None),
            })
            .collect()
    }

    /// The kind of a value read through this client's byte API (`get`, `get_item`, …), from
    /// the flags it was given.
    pub fn value_kind(&self, flags: u32) -> Result<Kind> {
        self.values().flags_kind(flags)
    }

    /// Whether a value read through this client's byte API with these delivered flags came
    /// with the body memcached holds (bytes, text, a decimal integer: what `incr` sees,
    /// inflation aside), false for a binary integer or boolean the read turned into its
    /// decimal text (Whalin, spymemcached): no counter, though `get` delivers digits.
    pub fn value_body_verbatim(&self, flags: u32) -> Result<bool> {
        self.values().flags_body_verbatim(flags)
    }

    /// The flags under which the byte API (`store`, `set_multi` with flags) stores an
    /// uncompressed value of `kind` given as its ABI body (decimal text for integers, `0`/`1`
    /// for booleans: what `get` delivers) exactly as [`Client::store_value`] stores it, the
    /// core converting it to the format's wire form (Whalin's and spymemcached's binary Long,
    /// Whalin's byte boolean). `Error::Unsupported` where the format has no such kind, writes
    /// it with flags 0, which the byte API takes as bytes (spymemcached's text), or writes it
    /// as a pickle (a bool under python-memcached and pymemcache).
    pub fn kind_flags(&self, kind: Kind) -> Result<u32> {
        self.values().kind_flags(kind)
    }

    /// `Err(Error::Unsupported)` (naming the kind and the format) when the value format has
    /// no `kind`: what a binding asks before it reads a value of that kind from its caller,
    /// so that "this format has no integers" is told apart from "not a valid integer".
    pub fn check_kind(&self, kind: Kind) -> Result<()> {
        self.values().check_kind(kind)
    }

    fn typed(&self, key: &[u8], body: Vec<u8>, flags: u32) -> Result<Value> {
        let kind = self.values().flags_kind(flags)?;
        crate::value::kind::typed_value(key, flags, kind, body)
    }
}

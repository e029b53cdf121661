//! Keys: the [`Keys`] of a call as the caller gives them, and their preparation for the
//! wire (`KeyRules`: prefix, sanitizing, the protocol's checks), done before any byte is
//! sent.

use crate::error::{Error, Result};
use crate::proto::{has_space_or_control, Protocol};
use std::borrow::Cow;

/// The keys of a call, as the caller gives them: each key, or why it cannot be one (a key
/// that is refused fails alone, before any I/O, with that error). Slices of anything that
/// is bytes are keys (`&[&str]`, `&[Vec<u8>]`, …); a caller with its own representation
/// (the C ABI's arrays of pointers and lengths) implements this.
pub trait Keys {
    /// How many keys.
    fn count(&self) -> usize;
    /// Key `i` (`i < count()`) as the caller gave it (before prefix and sanitizing), or
    /// the error that key fails with.
    fn key(&self, i: usize) -> Result<&[u8]>;
    /// `Some` for one key read on its own (a `get`, not a multi-get of one key): the read
    /// engine serves it on the single-key route, where a plain read may be handed over to
    /// another caller's connection while it waits (docs/handover.md).
    fn single(&self) -> Option<&[u8]> {
        None
    }
}

impl<K: AsRef<[u8]>> Keys for [K] {
    #[inline]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline]
    fn key(&self, i: usize) -> Result<&[u8]> {
        Ok(self[i].as_ref())
    }
}

/// One key read on its own (see [`Keys::single`]).
#[derive(Clone, Copy, Debug)]
pub struct Single<'a>(pub &'a [u8]);

impl Keys for Single<'_> {
    fn count(&self) -> usize {
        1
    }
    fn key(&self, _i: usize) -> Result<&[u8]> {
        Ok(self.0)
    }
    fn single(&self) -> Option<&[u8]> {
        Some(self.0)
    }
}

/// The error of a key of `len` bytes, over [`MAX_KEY_LEN`], none of which is read: for a
/// [`Keys`] whose caller's lengths are not to be trusted that far (the C ABI's).
pub fn too_long(len: usize) -> Error {
    Error::InvalidKey {
        key: too_long_named(len),
        // Above 64 KiB no configuration takes it: naming 250 bytes then misled a client with
        // long_keys = hash (tester finding claims 3).
        reason: if len > MAX_HASHED_KEY_LEN {
            "key is longer than 64 KiB, the most any client takes (with long_keys = hash)"
        } else {
            "key is longer than 250 bytes (64 KiB with long_keys = hash)"
        },
    }
}

/// How a key over [`MAX_KEY_LEN`] bytes is named in a refusal: by its length, never its
/// bytes (`"<251 bytes>"`).
fn too_long_named(len: usize) -> String {
    format!("\"<{len} bytes>\"")
}

/// How a refused key is named in its error ([`Error::InvalidKey`]'s `key`): by its length
/// when over [`MAX_KEY_LEN`] bytes, else [`quoted`].
pub(crate) fn refused_named(key: &[u8]) -> String {
    if key.len() > MAX_KEY_LEN {
        too_long_named(key.len())
    } else {
        quoted(key)
    }
}

/// How a client turns a caller's key into its wire key: the namespace prefix, URL-encoding
/// when sanitizing, and the protocol's checks.
#[derive(Clone, Debug)]
pub(crate) struct KeyRules {
    /// Prepended to every key.
    pub prefix: Vec<u8>,
    /// URL-encode keys (Whalin's `sanitizeKeys`).
    pub sanitize: bool,
    /// Sanitizing keeps `/` (proxy-pool: routing prefixes).
    pub keep_slash: bool,
    /// The protocol whose rules apply.
    pub protocol: Protocol,
    /// What a wire key over the protocol's limit becomes (option `long_keys`).
    pub long_keys: LongKeys,
}

/// What a wire key (prefix included) over the protocol's length limit becomes: option
/// `long_keys`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LongKeys {
    /// Refused with [`Error::InvalidKey`] (the default).
    #[default]
    Refuse,
    /// Dalli's truncated form (`KeyManager#truncated_key`) for a wire key over 250
    /// characters: its first 212 characters (213 when a `key_prefix` is set, Dalli's
    /// namespace rule), `:md5:`, and the hex MD5 of the whole wire key; 249 (250) bytes for
    /// an ASCII key. A key Dalli could not store either is refused with
    /// [`Error::InvalidKey`]: over 250 bytes in at most 250 characters (Dalli sends it
    /// whole), or whose truncated form is over 250 bytes. See [`dalli_truncated`].
    Hash,
}

impl std::str::FromStr for LongKeys {
    type Err = Error;
    fn from_str(s: &str) -> Result<LongKeys> {
        match s.trim().to_ascii_lowercase().as_str() {
            "refuse" => Ok(LongKeys::Refuse),
            "hash" => Ok(LongKeys::Hash),
            _ => Err(Error::Config(format!(
                "unknown long_keys policy {s:?} (refuse, hash)"
            ))),
        }
    }
}

/// The longest key a caller may give when `long_keys` is `hash` (the wire key is hashed
/// down to 250 bytes); with `refuse` the limit is [`MAX_KEY_LEN`].
pub const MAX_HASHED_KEY_LEN: usize = 64 * 1024;

/// Dalli's separator between the kept prefix and the digest.
const TRUNCATED_KEY_SEPARATOR: &[u8] = b":md5:";

/// How long Dalli (Ruby's `String#length`) finds `wire`: the characters of a valid UTF-8
/// key, else its bytes (Ruby counts a binary string's bytes).
fn dalli_length(wire: &[u8]) -> usize {
    match std::str::from_utf8(wire) {
        Ok(s) => s.chars().count(),
        Err(_) => wire.len(),
    }
}

/// The bytes of Dalli's `key[0, n]`: the first `n` characters of a valid UTF-8 key, else its
/// first `n` bytes.
fn dalli_prefix(wire: &[u8], n: usize) -> &[u8] {
    match std::str::from_utf8(wire) {
        Ok(s) => match s.char_indices().nth(n) {
            Some((at, _)) => &wire[..at],
            None => wire,
        },
        Err(_) => &wire[..n.min(wire.len())],
    }
}

/// `kept` + `:md5:` + the 32 lower-case hex digits of MD5(`wire`).
fn with_digest(kept: &[u8], wire: &[u8]) -> Vec<u8> {
    use md5::{Digest, Md5};
    let digest = Md5::digest(wire);
    let mut out = Vec::with_capacity(kept.len() + TRUNCATED_KEY_SEPARATOR.len() + 32);
    out.extend_from_slice(kept);
    out.extend_from_slice(TRUNCATED_KEY_SEPARATOR);
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in digest {
        out.push(HEX[(b >> 4) as usize]);
        out.push(HEX[(b & 15) as usize]);
    }
    out
}

/// Dalli's truncated key (lib/dalli/key_manager.rb, `truncated_key`): `key[0, n]` +
/// `:md5:` + the 32 lower-case hex digits of MD5(`wire`), where `wire` is the whole key as
/// the server would store it (namespace included), `n` = `target` − 37 *characters*
/// (Ruby's `String#slice` on a UTF-8 string; bytes for a key that is not valid UTF-8), and
/// the digest is of the key's bytes. Dalli's target is 249 without a namespace and 250 with
/// one ("for historical reasons"). For a non-ASCII key the result is longer than `target`
/// bytes (each character kept counts its UTF-8 bytes): memcached takes it only up to 250.
pub fn dalli_truncated(wire: &[u8], target: usize) -> Vec<u8> {
    let keep = target.saturating_sub(TRUNCATED_KEY_SEPARATOR.len() + 32);
    with_digest(dalli_prefix(wire, keep), wire)
}

impl KeyRules {
    /// Checks a wire key against the protocol's rules.
    #[inline]
    pub(crate) fn validate_wire(&self, wire: &[u8]) -> Result<()> {
        match self.protocol {
            Protocol::Text => validate(wire),
            // Meta sends such keys base64-encoded, binary as they are.
            Protocol::Meta => validate_meta(wire),
            Protocol::Binary => validate_length(wire),
        }
    }

    /// What `wire` becomes when it is over the protocol's limit and `long_keys` is `hash`
    /// (`None`: it stays, and its own error stands): Dalli's form, or, for a key with a space
    /// or control byte (which meta sends base64-encoded), mcpool's own 186-byte form (149
    /// bytes kept; Dalli has no form of such a key that memcached takes), on binary too
    /// (see [`KeyRules::meta_would_hash`]). A key Dalli cannot store (its form would be over
    /// 250 bytes) is refused with a reason saying so.
    ///
    /// A key over 250 bytes whose space or control byte is past the part Dalli's form keeps
    /// gets Dalli's form on every protocol: it has none left, and text stores it so (tester
    /// finding keys2 1: meta and binary used their own form, so a text client's update or
    /// delete of the same key was not seen by them).
    fn hashed(&self, wire: &[u8]) -> Option<Result<Vec<u8>>> {
        if self.long_keys != LongKeys::Hash {
            return None;
        }
        if self.protocol != Protocol::Text && has_space_or_control(wire) {
            if let Some(Ok(dalli)) = self.dalli_form(wire) {
                if !has_space_or_control(&dalli) {
                    return Some(Ok(dalli));
                }
            }
            return (wire.len() > MAX_META_BASE64_KEY_LEN).then(|| {
                let keep = MAX_META_BASE64_KEY_LEN - TRUNCATED_KEY_SEPARATOR.len() - 32;
                Ok(with_digest(&wire[..keep], wire))
            });
        }
        self.dalli_form(wire)
    }

    /// Dalli's truncated form of `wire` (`None` when it is not over 250 bytes), or the
    /// reason it has none memcached takes.
    fn dalli_form(&self, wire: &[u8]) -> Option<Result<Vec<u8>>> {
        if wire.len() <= MAX_KEY_LEN {
            return None;
        }
        let refuse = |reason| Error::InvalidKey {
            key: quoted(wire),
            reason,
        };
        // Dalli counts characters: a key of at most 250 characters it sends whole.
        if dalli_length(wire) <= MAX_KEY_LEN {
            return Some(Err(refuse(
                "key is over 250 bytes in 250 characters or fewer: Dalli sends such a key \
                 whole (it shortens keys over 250 characters), which memcached refuses, so \
                 long_keys = hash has no shared form for it either",
            )));
        }
        let target = if self.prefix.is_empty() {
            MAX_KEY_LEN - 1
        } else {
            MAX_KEY_LEN
        };
        let hashed = dalli_truncated(wire, target);
        if hashed.len() > MAX_KEY_LEN {
            return Some(Err(refuse(
                "Dalli's truncated form of this key (its first 212 characters, 213 with a \
                 key_prefix, then :md5: and the digest) is over 250 bytes, which memcached \
                 refuses: long_keys = hash has no shared form for it",
            )));
        }
        Some(Ok(hashed))
    }

    /// The longest key a caller may give: [`MAX_KEY_LEN`], or [`MAX_HASHED_KEY_LEN`] when
    /// long keys are hashed.
    pub(crate) fn max_caller_len(&self) -> usize {
        match self.long_keys {
            LongKeys::Refuse => MAX_KEY_LEN,
            LongKeys::Hash => MAX_HASHED_KEY_LEN,
        }
    }

    /// Validates `wire`, or, when it is too long and long keys are hashed, its hashed form
    /// (`None` when `wire` itself is good).
    fn checked(&self, wire: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.validate_wire(wire) {
            Ok(()) if !self.meta_would_hash(wire) => Ok(None),
            r => match self.hashed(wire) {
                Some(hashed) => {
                    let hashed = hashed?;
                    self.validate_wire(&hashed)?;
                    Ok(Some(hashed))
                }
                None => r.map(|()| None),
            },
        }
    }

    /// On binary with `long_keys = hash`, a key with a space or control byte over 186 bytes,
    /// which binary could send whole (up to 250) but meta hashes (it goes base64-encoded):
    /// hashed as meta hashes it, so that every mcpool client with `long_keys = hash` stores
    /// it under one name whatever its protocol (tester finding keys 1: at 187..=250 bytes a
    /// meta client missed what a binary one stored).
    fn meta_would_hash(&self, wire: &[u8]) -> bool {
        self.protocol == Protocol::Binary
            && self.long_keys == LongKeys::Hash
            && wire.len() > MAX_META_BASE64_KEY_LEN
            && has_space_or_control(wire)
    }

    /// [`KeyRules::wire_key`] without an allocation: `Ok(None)` when the key goes on the
    /// wire as given, `Ok(Some((start, len)))` when it was written (prefixed, sanitized) at
    /// the end of `arena`. On an error `arena` is left as it was.
    pub(crate) fn wire_key_into(
        &self,
        key: &[u8],
        arena: &mut Vec<u8>,
    ) -> Result<Option<(u32, u32)>> {
        let prefix = &self.prefix;
        if key.is_empty() && prefix.is_empty() {
            // An empty key is refused; under a prefix it is the prefix itself (as
            // Cache::Memcached::Fast's namespace and Django's key prefix make it).
            return self.validate_wire(key).map(|()| None);
        }
        let start = arena.len();
        if prefix.is_empty() && !self.sanitize {
            return match self.checked(key)? {
                None => Ok(None),
                Some(hashed) => {
                    arena.extend_from_slice(&hashed);
                    Ok(Some((start as u32, hashed.len() as u32)))
                }
            };
        }
        arena.extend_from_slice(prefix);
        if self.sanitize {
            arena.extend_from_slice(&self.sanitized(key));
        } else {
            arena.extend_from_slice(key);
        }
        match self.checked(&arena[start..]) {
            Ok(None) => {}
            Ok(Some(hashed)) => {
                arena.truncate(start);
                arena.extend_from_slice(&hashed);
            }
            Err(e) => {
                let e = self.length_named(e, arena.len() - start, key.len());
                arena.truncate(start);
                return Err(e);
            }
        }
        Ok(Some((start as u32, (arena.len() - start) as u32)))
    }

    /// The key as the server stores it: sanitized if configured, prefixed, validated.
    pub(crate) fn wire_key<'a>(&self, key: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        if key.is_empty() && self.prefix.is_empty() {
            // Refused; under a prefix the wire key is the prefix itself.
            return validate(key).map(|_| Cow::Borrowed(key));
        }
        let given = key.len();
        let key = if self.sanitize {
            self.sanitized(key)
        } else {
            Cow::Borrowed(key)
        };
        let prefix = &self.prefix;
        let wire = if prefix.is_empty() {
            key
        } else {
            let mut k = Vec::with_capacity(prefix.len() + key.len());
            k.extend_from_slice(prefix);
            k.extend_from_slice(&key);
            Cow::Owned(k)
        };
        match self
            .checked(&wire)
            .map_err(|e| self.length_named(e, wire.len(), given))?
        {
            None => Ok(wire),
            Some(hashed) => Ok(Cow::Owned(hashed)),
        }
    }

    /// A length refusal of a key the client lengthened says by how much: URL-encoded by
    /// `sanitize_keys`, the encoded length and what the caller gave (tester finding keys2 3:
    /// a 200-byte key was "<600 bytes>", longer than 250, with no word of the encoding);
    /// under a key prefix, the caller's bytes and the prefix's (retest45 5: a 151-byte key
    /// was "<251 bytes>", no word of the prefix; the CLI said it, the bindings did not).
    fn length_named(&self, e: Error, wire_len: usize, given: usize) -> Error {
        match e {
            Error::InvalidKey { key, reason } if key.starts_with("\"<") => {
                let key = if self.sanitize {
                    format!(
                        "\"<{wire_len} bytes once URL-encoded by sanitize_keys (with the \
                         key_prefix); {given} as given>\""
                    )
                } else if !self.prefix.is_empty() {
                    prefixed_length(wire_len, given, self.prefix.len(), PREFIX_NAMED)
                } else {
                    key
                };
                Error::InvalidKey { key, reason }
            }
            e => e,
        }
    }

    /// The key URL-encoded as Whalin does; in proxy-pool mode `/` is kept, so that the
    /// proxy's routing prefix (mcrouter `/region/cluster/`, memcached proxy `route/`)
    /// survives.
    fn sanitized<'k>(&self, key: &'k [u8]) -> Cow<'k, [u8]> {
        if self.keep_slash {
            url_encode_keeping_slash(key)
        } else {
            url_encode(key)
        }
    }
}

/// memcached's limit on a key's length, in bytes.
pub const MAX_KEY_LEN: usize = 250;

/// The longest key the meta protocol can carry when it must go base64-encoded (a key with a
/// space, a control byte or DEL): memcached takes at most 250 characters of base64, padded
/// (memcached 1.6 refuses the 252 of 187 bytes, and does not decode the unpadded 250).
/// Other keys, UTF-8 included, go as they are, up to [`MAX_KEY_LEN`].
pub const MAX_META_BASE64_KEY_LEN: usize = 186;

/// How the core's errors name the key prefix in a length refusal (see [`prefixed_length`]).
pub const PREFIX_NAMED: &str = "the key_prefix";

/// A key the prefix made too long, as an error names it: both lengths and where the prefix
/// came from, `"<251 bytes: 249 bytes + 2 of the key_prefix>"` (`prefix_named` is
/// [`PREFIX_NAMED`] in the core; a front end may name its own option, as the CLI does).
pub fn prefixed_length(
    total: usize,
    given: usize,
    prefix_len: usize,
    prefix_named: &str,
) -> String {
    format!("\"<{total} bytes: {given} bytes + {prefix_len} of {prefix_named}>\"")
}

/// Why `prefix` cannot be a key prefix (namespace), or `None`: it may not be longer than a
/// key, nor begin or end with white space (space, tab, CR, LF, ...). Text never changes
/// silently (docs/options.md), and a namespace `"app "` next to `"app"` is a mistake nobody
/// means; so every way of setting one (`ClientBuilder::key_prefix`, the `key_prefix` option,
/// `mcpool_config_set_key_prefix`) refuses it. Interior bytes are checked with each key, by
/// its protocol's rule.
pub fn key_prefix_problem(prefix: &[u8]) -> Option<String> {
    let space = |b: Option<&u8>| b.is_some_and(u8::is_ascii_whitespace);
    if prefix.len() > MAX_KEY_LEN {
        Some(format!(
            "{} bytes is longer than a key ({MAX_KEY_LEN})",
            prefix.len()
        ))
    } else if space(prefix.first()) || space(prefix.last()) {
        Some("begins or ends with white space (a namespace is never trimmed)".into())
    } else {
        None
    }
}

/// The error of a refused wire key: an over-long one as [`too_long`] (its length, never the
/// key, and the long_keys hint: one message for this limit on every path), any other named.
#[cold]
#[inline(never)]
fn refused(key: &[u8], reason: &'static str) -> Error {
    if key.len() > MAX_KEY_LEN {
        return too_long(key.len());
    }
    Error::InvalidKey {
        key: quoted(key),
        reason,
    }
}

/// Checks a full wire key (prefix included) for the text protocols: 1..=250 bytes, no
/// space, no control byte (which covers `\r`, `\n`, `\0`), no DEL.
pub fn validate(key: &[u8]) -> Result<()> {
    let reason = if key.is_empty() {
        "key is empty"
    } else if key.len() > MAX_KEY_LEN {
        "key is longer than 250 bytes"
    } else if has_space_or_control(key) {
        "key contains a space or control byte"
    } else {
        return Ok(());
    };
    Err(refused(key, reason))
}

/// Checks only the length (1..=250 bytes): for the meta (base64 keys) and binary protocols,
/// where any byte may appear in a key.
pub fn validate_length(key: &[u8]) -> Result<()> {
    let reason = if key.is_empty() {
        "key is empty"
    } else if key.len() > MAX_KEY_LEN {
        "key is longer than 250 bytes"
    } else {
        return Ok(());
    };
    Err(refused(key, reason))
}

/// Checks a key for the meta protocol: up to 250 bytes sent as they are (any byte but a
/// space, a control byte or DEL: UTF-8 keys included, as on the text protocol); a key with
/// any of those is sent base64-encoded, up to [`MAX_META_BASE64_KEY_LEN`] (186) bytes.
pub fn validate_meta(key: &[u8]) -> Result<()> {
    validate_length(key)?;
    if key.len() > MAX_META_BASE64_KEY_LEN && has_space_or_control(key) {
        return Err(refused(
            key,
            "key with a space or control byte longer than 186 bytes (meta sends such keys \
             base64-encoded, and memcached takes at most 250 characters)",
        ));
    }
    Ok(())
}

/// The key as error messages show it: in double quotes, escaped as Rust's `{:?}` escapes a
/// string (`"b\nc"`), with each byte that is not UTF-8 and each ASCII control byte other
/// than tab, newline and return written `\xNN` (`"\xff k"`, `"k\x01"`: `\xNN` is always the
/// byte NN), so two different keys never read the same; cut after 300 bytes of text (`…`).
/// The one place a key is shown: the core's errors and the C ABI's messages use it.
pub fn quoted(key: &[u8]) -> String {
    const MAX: usize = 300;
    let mut s = String::with_capacity(key.len().min(MAX) + 2);
    s.push('"');
    let mut cut = false;
    'out: for chunk in key.utf8_chunks() {
        for c in chunk.valid().chars() {
            if s.len() > MAX {
                cut = true;
                break 'out;
            }
            match c {
                // escaped in a string's `{:?}` only as a char literal
                '\'' => s.push(c),
                '\t' | '\n' | '\r' => s.extend(c.escape_debug()),
                _ if c.is_ascii_control() => s.push_str(&format!("\\x{:02x}", c as u8)),
                _ => s.extend(c.escape_debug()),
            }
        }
        for b in chunk.invalid() {
            if s.len() > MAX {
                cut = true;
                break 'out;
            }
            s.push_str(&format!("\\x{b:02x}"));
        }
    }
    if cut {
        s.push('…');
    }
    s.push('"');
    s
}

/// URL-encodes a key exactly as Java's `URLEncoder.encode(key, "UTF-8")` does (Whalin's
/// `sanitizeKeys`): `a-z A-Z 0-9 . - * _` stay, space becomes `+`, every other byte
/// becomes `%XX` (upper-case hex). Borrowed when nothing needed escaping.
///
/// This rewrites `/` (as `%2F`), as Whalin does: the `whalin-*` profiles must store keys
/// under exactly Whalin's names. In front of a proxy that routes by key prefix use
/// [`url_encode_keeping_slash`] (what `proxy-pool` does).
pub fn url_encode(key: &[u8]) -> Cow<'_, [u8]> {
    encode(key, false)
}

/// [`url_encode`], except that `/` stays as it is: mcrouter (`/region/cluster/key`) and
/// memcached's proxy (the text before the first `/`) route by it. Used under `proxy-pool`.
pub fn url_encode_keeping_slash(key: &[u8]) -> Cow<'_, [u8]> {
    encode(key, true)
}

fn encode(key: &[u8], keep_slash: bool) -> Cow<'_, [u8]> {
    let keep = |b: u8| {
        b.is_ascii_alphanumeric()
            || matches!(b, b'.' | b'-' | b'*' | b'_')
            || (keep_slash && b == b'/')
    };
    if key.iter().all(|&b| keep(b)) {
        return Cow::Borrowed(key);
    }
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut out = Vec::with_capacity(key.len() * 3);
    for &b in key {
        if keep(b) {
            out.push(b);
        } else if b == b' ' {
            out.push(b'+');
        } else {
            out.extend_from_slice(&[b'%', HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_too_long_for_any_client_names_the_64_kib_limit() {
        let msg = |len| too_long(len).to_string();
        assert!(msg(251).contains("longer than 250 bytes (64 KiB with long_keys = hash)"));
        assert!(msg(MAX_HASHED_KEY_LEN).contains("250 bytes"));
        let over = msg(MAX_HASHED_KEY_LEN + 1);
        assert!(
            over.contains("longer than 64 KiB") && !over.contains("250"),
            "{over}"
        );
    }

    #[test]
    fn quoted_keeps_every_byte_apart() {
        assert_eq!(quoted(b"user:1"), r#""user:1""#);
        assert_eq!(quoted(b"b\nc \"q\" \\ 'x'"), r#""b\nc \"q\" \\ 'x'""#);
        // bytes that are not UTF-8 are escaped, not replaced by U+FFFD: two keys, two texts
        assert_eq!(quoted(b"\xff\xe9 k"), r#""\xff\xe9 k""#);
        assert_ne!(quoted(b"\xff k"), quoted(b"\xfe k"));
        // an ASCII control byte is written as the byte it is, as a byte that is not UTF-8 is
        // (tester finding retest40 7: it was `\u{1}`); tab, newline and return keep their names
        assert_eq!(quoted("é\u{7f}".as_bytes()), r#""é\x7f""#);
        assert_eq!(quoted(b"k\x01\x00\x1b"), r#""k\x01\x00\x1b""#);
        assert_eq!(quoted(b"a\tb\rc"), r#""a\tb\rc""#);
        assert_eq!(quoted("\u{85}".as_bytes()), r#""\u{85}""#);
        // the error a refused key gives names it so
        let e = validate(b"\xff k").unwrap_err().to_string();
        assert_eq!(
            e,
            r#"invalid key "\xff k": key contains a space or control byte"#
        );
        // cut after 300 bytes of text
        let long = quoted(&[b'a'; 400]);
        assert!(long.ends_with("…\"") && long.len() < 310, "{long}");
        assert_eq!(quoted(&[b'a'; 300]), format!("\"{}\"", "a".repeat(300)));
    }

    #[test]
    fn validation() {
        assert!(validate(b"abc").is_ok());
        assert!(validate(&[b'k'; 250]).is_ok());
        for bad in [
            &b""[..],
            &[b'k'; 251],
            b"a b",
            b"a\nb",
            b"a\0b",
            b"a\rb",
            b"\x7f",
        ] {
            assert!(
                matches!(validate(bad), Err(Error::InvalidKey { .. })),
                "{bad:?}"
            );
        }
        assert!(validate("ключ".as_bytes()).is_ok());
        // Every byte value at every position of a long key: the word-at-a-time check
        // agrees with the byte-by-byte rule.
        for bad_at in 0..17 {
            for b in 0..=255u8 {
                let mut k = vec![b'k'; 17];
                k[bad_at] = b;
                let refused = b <= b' ' || b == 0x7f;
                assert_eq!(validate(&k).is_err(), refused, "byte {b:#x} at {bad_at}");
            }
        }
    }

    /// keys2 3: a sanitized key's length refusal names the encoded length and the given one.
    #[test]
    fn a_sanitized_keys_length_refusal_says_it_was_url_encoded() {
        let r = KeyRules {
            sanitize: true,
            ..rules(b"", Protocol::Text, LongKeys::Refuse)
        };
        let key = "é".repeat(100);
        let e = r.wire_key(key.as_bytes()).unwrap_err().to_string();
        assert!(
            e.contains("600 bytes once URL-encoded by sanitize_keys") && e.contains("200 as given"),
            "{e}"
        );
        let mut arena = Vec::new();
        let e = r
            .wire_key_into(key.as_bytes(), &mut arena)
            .unwrap_err()
            .to_string();
        assert!(e.contains("600 bytes once URL-encoded"), "{e}");
        assert!(arena.is_empty());
        // Without sanitizing, the plain form.
        let e = rules(b"", Protocol::Text, LongKeys::Refuse)
            .wire_key(&[b'a'; 251])
            .unwrap_err()
            .to_string();
        assert!(e.contains("<251 bytes>"), "{e}");
    }

    fn rules(prefix: &[u8], protocol: Protocol, long_keys: LongKeys) -> KeyRules {
        KeyRules {
            prefix: prefix.to_vec(),
            sanitize: false,
            keep_slash: false,
            protocol,
            long_keys,
        }
    }

    /// Issue 21 item 3: Dalli's truncated keys (lib/dalli/key_manager.rb `truncated_key`:
    /// `key[0, 249 - 37]` or, with a namespace, `key[0, 250 - 37]`, then `:md5:` and
    /// `Digest::MD5.hexdigest` of the whole namespaced key). The digests below were computed
    /// independently (Python's hashlib.md5 of the same strings).
    #[test]
    fn item3_long_keys_hash_to_dalli_form() {
        let hash = rules(b"", Protocol::Text, LongKeys::Hash);
        // 1. No namespace: 212 bytes kept + ":md5:" + 32 hex = 249.
        let k = vec![b'a'; 300];
        let want = format!("{}:md5:4e5475d125a33c6190718e75adc1b704", "a".repeat(212));
        let got = hash.wire_key(&k).unwrap();
        assert_eq!(std::str::from_utf8(&got).unwrap(), want);
        assert_eq!(got.len(), 249);
        // 2. A namespace (Dalli `namespace: "ns"` = our key_prefix "ns:"): the digest is of
        // the namespaced key, 213 bytes kept, 250 in all.
        let ns = rules(b"ns:", Protocol::Text, LongKeys::Hash);
        let want = format!(
            "ns:{}:md5:69bbb6e0eaee78ab36a4c902f2dd0963",
            "b".repeat(210)
        );
        let got = ns.wire_key(&[b'b'; 300]).unwrap();
        assert_eq!(std::str::from_utf8(&got).unwrap(), want);
        assert_eq!(got.len(), 250);
        // 3. One byte over: 251 bytes hash; 250 stay as they are.
        let k251 = format!("{}x", "0123456789".repeat(25));
        let want = format!(
            "{}:md5:2246897449a55479878925c76d832da5",
            &"0123456789".repeat(25)[..212]
        );
        assert_eq!(&*hash.wire_key(k251.as_bytes()).unwrap(), want.as_bytes());
        let k250 = "0123456789".repeat(25);
        assert!(matches!(
            hash.wire_key(k250.as_bytes()).unwrap(),
            Cow::Borrowed(_)
        ));
        // The arena path gives the same bytes.
        for (r, k) in [(&hash, k251.as_bytes()), (&ns, &[b'b'; 300][..])] {
            let mut arena = b"xx".to_vec();
            let (start, len) = r.wire_key_into(k, &mut arena).unwrap().unwrap();
            assert_eq!(
                &arena[start as usize..(start + len) as usize],
                &*r.wire_key(k).unwrap()
            );
        }
        // 3b. Non-ASCII keys, as Dalli cuts them: at characters (Ruby's `key[0, 212]`),
        // the digest of the bytes. "é" + "a" × 260: 261 characters, 262 bytes; Dalli keeps
        // "é" + 211 "a" (213 bytes), 250 bytes in all. md5 from Python's hashlib.
        let e = format!("é{}", "a".repeat(260));
        let want = format!("é{}:md5:5b2bd7d828bf6bf7e81e3f3d7e8f07c1", "a".repeat(211));
        let got = hash.wire_key(e.as_bytes()).unwrap();
        assert_eq!(got.len(), 250);
        assert_eq!(std::str::from_utf8(&got).unwrap(), want);
        // Two 2-byte characters in the first 212: Dalli's form is 251 bytes, refused.
        let ee = format!("éé{}", "a".repeat(260));
        assert!(matches!(
            hash.wire_key(ee.as_bytes()),
            Err(Error::InvalidKey { reason, .. }) if reason.contains("Dalli's truncated form")
        ));
        // 251 bytes in 250 characters: Dalli sends it whole, memcached refuses: refused.
        let short = format!("é{}", "a".repeat(249));
        assert_eq!((short.len(), short.chars().count()), (251, 250));
        assert!(matches!(
            hash.wire_key(short.as_bytes()),
            Err(Error::InvalidKey { reason, .. }) if reason.contains("250 characters or fewer")
        ));
        // Not UTF-8: Ruby counts a binary string's bytes.
        let bin = [&[0xffu8][..], &[b'a'; 260]].concat();
        let got = hash.wire_key(&bin).unwrap();
        assert_eq!(got.len(), 249);
        assert_eq!(&got[..212], &bin[..212]);
        // 4. Meta, a key that goes base64-encoded (it has spaces): hashed down to 186 (not
        // Dalli's length: Dalli has no such key that memcached would take).
        let meta = rules(b"user:", Protocol::Meta, LongKeys::Hash);
        let k = "q r".repeat(100);
        let got = meta.wire_key(k.as_bytes()).unwrap();
        let want = format!(
            "{}:md5:c5436c2c6cd51f3ee3a3bd81eb08295e",
            &format!("user:{k}")[..186 - 37]
        );
        assert_eq!(std::str::from_utf8(&got).unwrap(), want);
        // ... and binary gives such a key the same name, at any length over 186 (tester
        // finding keys 1: binary sent 187..=250 bytes whole, meta hashed them), a wire key
        // wherever the key is given (wire_key, wire_key_into); at most 186 both send it whole.
        let binary = rules(b"user:", Protocol::Binary, LongKeys::Hash);
        for n in [181, 182, 200, 245, 300] {
            let k: String = "q r".repeat(100)[..n].to_owned();
            let m = meta.wire_key(k.as_bytes()).unwrap();
            assert_eq!(binary.wire_key(k.as_bytes()).unwrap(), m, "{n}");
            let mut arena = Vec::new();
            let b = match binary.wire_key_into(k.as_bytes(), &mut arena).unwrap() {
                Some((s, l)) => arena[s as usize..(s + l) as usize].to_vec(),
                None => k.as_bytes().to_vec(),
            };
            assert_eq!(b, &m[..], "{n}");
            assert_eq!(m.len(), (n + 5).min(186), "{n}");
            assert_eq!(
                m.ends_with(b"r") || m.ends_with(b" ") || m.ends_with(b"q"),
                n <= 181
            );
        }
        // without a space binary keeps a key whole up to 250, as before
        let plain = "q".repeat(240);
        assert_eq!(binary.wire_key(plain.as_bytes()).unwrap().len(), 245);
        // Refusal stays the default, and hashing does not make a text key with a space valid.
        let refuse = rules(b"", Protocol::Text, LongKeys::default());
        assert!(matches!(
            refuse.wire_key(&[b'a'; 251]),
            Err(Error::InvalidKey { .. })
        ));
        assert!(matches!(
            hash.wire_key(&[b' '; 300]),
            Err(Error::InvalidKey { .. })
        ));
        assert!(matches!(hash.wire_key(b""), Err(Error::InvalidKey { .. })));
        assert_eq!("hash".parse::<LongKeys>().unwrap(), LongKeys::Hash);
        assert!("truncate".parse::<LongKeys>().is_err());
    }

    #[test]
    fn url_encoding_matches_java() {
        assert_eq!(&*url_encode(b"plain.key-1*_"), b"plain.key-1*_");
        assert_eq!(&*url_encode(b"a b/c"), b"a+b%2Fc");
        assert_eq!(&*url_encode("é".as_bytes()), b"%C3%A9");
        assert_eq!(&*url_encode(b"a\r\n"), b"a%0D%0A");
    }

    /// Issue 19 item 5: routing prefixes survive sanitizing in proxy-pool mode; Whalin's own
    /// encoding (the `whalin-*` profiles) still rewrites `/` exactly as Java does.
    #[test]
    fn item5_slash_survives_sanitizing_for_proxies_but_not_whalins_encoding() {
        assert_eq!(
            &*url_encode_keeping_slash(b"/region/cluster/a b"),
            b"/region/cluster/a+b"
        );
        assert!(matches!(
            url_encode_keeping_slash(b"/r/c/key"),
            Cow::Borrowed(_)
        ));
        assert_eq!(&*url_encode_keeping_slash("é/x".as_bytes()), b"%C3%A9/x");
        assert_eq!(
            &*url_encode(b"/region/cluster/key"),
            b"%2Fregion%2Fcluster%2Fkey"
        );
    }
}

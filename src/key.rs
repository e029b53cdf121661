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
        key: format!("<{len} bytes>"),
        reason: "key is longer than 250 bytes",
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

    /// [`KeyRules::wire_key`] without an allocation: `Ok(None)` when the key goes on the
    /// wire as given, `Ok(Some((start, len)))` when it was written (prefixed, sanitized) at
    /// the end of `arena`. On an error `arena` is left as it was.
    pub(crate) fn wire_key_into(
        &self,
        key: &[u8],
        arena: &mut Vec<u8>,
    ) -> Result<Option<(u32, u32)>> {
        let prefix = &self.prefix;
        if key.is_empty() || (prefix.is_empty() && !self.sanitize) {
            // Empty keys are refused even when a prefix would make them non-empty.
            return self.validate_wire(key).map(|()| None);
        }
        let start = arena.len();
        arena.extend_from_slice(prefix);
        if self.sanitize {
            arena.extend_from_slice(&self.sanitized(key));
        } else {
            arena.extend_from_slice(key);
        }
        if let Err(e) = self.validate_wire(&arena[start..]) {
            arena.truncate(start);
            return Err(e);
        }
        Ok(Some((start as u32, (arena.len() - start) as u32)))
    }

    /// The key as the server stores it: sanitized if configured, prefixed, validated.
    pub(crate) fn wire_key<'a>(&self, key: &'a [u8]) -> Result<Cow<'a, [u8]>> {
        if key.is_empty() {
            // Refused even when a prefix would make the wire key non-empty: always a bug.
            return validate(key).map(|_| Cow::Borrowed(key));
        }
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
        self.validate_wire(&wire)?;
        Ok(wire)
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
    Err(Error::InvalidKey {
        key: display(key),
        reason,
    })
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
    Err(Error::InvalidKey {
        key: display(key),
        reason,
    })
}

/// Checks a key for the meta protocol: up to 250 bytes sent as they are (any byte but a
/// space, a control byte or DEL: UTF-8 keys included, as on the text protocol); a key with
/// any of those is sent base64-encoded, up to [`MAX_META_BASE64_KEY_LEN`] (186) bytes.
pub fn validate_meta(key: &[u8]) -> Result<()> {
    validate_length(key)?;
    if key.len() > MAX_META_BASE64_KEY_LEN && has_space_or_control(key) {
        return Err(Error::InvalidKey {
            key: display(key),
            reason: "key with a space or control byte longer than 186 bytes (meta sends \
                     such keys base64-encoded, and memcached takes at most 250 characters)",
        });
    }
    Ok(())
}

/// The key for error messages: lossy UTF-8, cut to 300 characters.
pub(crate) fn display(key: &[u8]) -> String {
    let mut s = String::from_utf8_lossy(key).into_owned();
    if s.len() > 300 {
        let mut cut = 300;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
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

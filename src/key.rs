//! Key checks and key sanitizing, done before any byte is sent.

use crate::error::{Error, Result};
use std::borrow::Cow;

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

/// Whether any byte of `key` is a space, a control byte or DEL (bytes of 0x80 and above are
/// allowed). Eight bytes at a time: this runs for every key of every multi-get.
#[inline]
pub(crate) fn has_space_or_control(key: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const SPACE_PLUS_ONE: u64 = u64::from_ne_bytes([0x21; 8]);
    const DEL: u64 = u64::from_ne_bytes([0x7f; 8]);
    // The classic word tests: a byte below 0x21 sets its high bit in `(w - 0x21..) & !w`
    // (exact for a bound up to 0x80), and a DEL is a zero byte of `w ^ 0x7f..`.
    let below_0x21 = |w: u64| w.wrapping_sub(SPACE_PLUS_ONE) & !w & HIGHS != 0;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS != 0;
    let bad = |w: u64| below_0x21(w) || has_zero(w ^ DEL);
    let n = key.len();
    if n < 8 {
        return key.iter().any(|&b| b <= b' ' || b == 0x7f);
    }
    let word = |i: usize| u64::from_ne_bytes(key[i..i + 8].try_into().expect("8 bytes"));
    // Whole words, then the last eight bytes (which may overlap the words before).
    let mut i = 0;
    while i + 8 < n {
        if bad(word(i)) {
            return true;
        }
        i += 8;
    }
    bad(word(n - 8))
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

//! Key checks and key sanitizing, done before any byte is sent.

use crate::error::{Error, Result};
use std::borrow::Cow;

/// memcached's limit on a key's length, in bytes.
pub const MAX_KEY_LEN: usize = 250;

/// Checks a full wire key (prefix included) for the text protocols: 1..=250 bytes, no
/// space, no control byte (which covers `\r`, `\n`, `\0`), no DEL.
pub fn validate(key: &[u8]) -> Result<()> {
    let reason = if key.is_empty() {
        "key is empty"
    } else if key.len() > MAX_KEY_LEN {
        "key is longer than 250 bytes"
    } else if key.iter().any(|&b| b <= b' ' || b == 0x7f) {
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

/// Checks a key for the meta protocol: plain keys up to 250 bytes; keys that must be sent
/// base64-encoded (spaces, control or non-ASCII bytes) up to 187 bytes, since memcached
/// limits the encoded form to 250.
pub fn validate_meta(key: &[u8]) -> Result<()> {
    validate_length(key)?;
    let plain = key.iter().all(|&b| b > b' ' && b < 0x7f);
    if !plain && key.len().div_ceil(3) * 4 > MAX_KEY_LEN {
        return Err(Error::InvalidKey {
            key: display(key),
            reason: "binary key longer than 187 bytes (250 once base64-encoded for meta)",
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
pub fn url_encode(key: &[u8]) -> Cow<'_, [u8]> {
    let keep = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'*' | b'_');
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
    }

    #[test]
    fn url_encoding_matches_java() {
        assert_eq!(&*url_encode(b"plain.key-1*_"), b"plain.key-1*_");
        assert_eq!(&*url_encode(b"a b/c"), b"a+b%2Fc");
        assert_eq!(&*url_encode("é".as_bytes()), b"%C3%A9");
        assert_eq!(&*url_encode(b"a\r\n"), b"a%0D%0A");
    }
}

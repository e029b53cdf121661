//! memcached's binary protocol: a 24-byte header, extras, key, value. Encoders append one
//! request packet; the parser reads one response packet.

use super::{ParseError, Status};
use byteorder::{BigEndian, ByteOrder};

/// Request packet magic.
pub const REQUEST: u8 = 0x80;
/// Response packet magic.
pub const RESPONSE: u8 = 0x81;
/// Header length.
pub const HEADER: usize = 24;

/// Opcodes used by this client.
#[allow(missing_docs)]
pub mod op {
    pub const GET: u8 = 0x00;
    pub const SET: u8 = 0x01;
    pub const ADD: u8 = 0x02;
    pub const REPLACE: u8 = 0x03;
    pub const DELETE: u8 = 0x04;
    pub const INCREMENT: u8 = 0x05;
    pub const DECREMENT: u8 = 0x06;
    pub const FLUSH: u8 = 0x08;
    pub const NOOP: u8 = 0x0a;
    pub const VERSION: u8 = 0x0b;
    pub const GETK: u8 = 0x0c;
    pub const GETKQ: u8 = 0x0d;
    pub const APPEND: u8 = 0x0e;
    pub const PREPEND: u8 = 0x0f;
    pub const STAT: u8 = 0x10;
    pub const SETQ: u8 = 0x11;
    pub const ADDQ: u8 = 0x12;
    pub const REPLACEQ: u8 = 0x13;
    pub const DELETEQ: u8 = 0x14;
    pub const APPENDQ: u8 = 0x19;
    pub const PREPENDQ: u8 = 0x1a;
    pub const TOUCH: u8 = 0x1c;
    pub const GAT: u8 = 0x1d;
    pub const GATKQ: u8 = 0x24;
    pub const GATK: u8 = 0x23;
    pub const SASL_LIST_MECHS: u8 = 0x20;
    pub const SASL_AUTH: u8 = 0x21;
    pub const SASL_STEP: u8 = 0x22;
}

/// Response status codes.
#[allow(missing_docs)]
pub mod status {
    pub const OK: u16 = 0x00;
    pub const KEY_NOT_FOUND: u16 = 0x01;
    pub const KEY_EXISTS: u16 = 0x02;
    pub const VALUE_TOO_LARGE: u16 = 0x03;
    pub const INVALID_ARGUMENTS: u16 = 0x04;
    pub const NOT_STORED: u16 = 0x05;
    pub const NON_NUMERIC: u16 = 0x06;
    pub const AUTH_ERROR: u16 = 0x20;
    pub const AUTH_CONTINUE: u16 = 0x21;
    pub const UNKNOWN_COMMAND: u16 = 0x81;
    pub const OUT_OF_MEMORY: u16 = 0x82;
}

/// Appends one request packet.
pub fn encode(
    buf: &mut Vec<u8>,
    opcode: u8,
    key: &[u8],
    extras: &[u8],
    value: &[u8],
    opaque: u32,
    cas: u64,
) {
    let mut h = [0u8; HEADER];
    h[0] = REQUEST;
    h[1] = opcode;
    BigEndian::write_u16(&mut h[2..4], key.len() as u16);
    h[4] = extras.len() as u8;
    BigEndian::write_u32(
        &mut h[8..12],
        (extras.len() + key.len() + value.len()) as u32,
    );
    BigEndian::write_u32(&mut h[12..16], opaque);
    BigEndian::write_u64(&mut h[16..24], cas);
    buf.reserve(HEADER + extras.len() + key.len() + value.len());
    buf.extend_from_slice(&h);
    buf.extend_from_slice(extras);
    buf.extend_from_slice(key);
    buf.extend_from_slice(value);
}

/// Extras of a store command: flags and expiry.
pub fn store_extras(flags: u32, ttl: u32) -> [u8; 8] {
    let mut e = [0u8; 8];
    BigEndian::write_u32(&mut e[..4], flags);
    BigEndian::write_u32(&mut e[4..], ttl);
    e
}

/// Extras of incr/decr: delta, initial value, expiry (`0xffffffff` = fail if missing).
pub fn arith_extras(delta: u64, initial: u64, ttl: u32) -> [u8; 20] {
    let mut e = [0u8; 20];
    BigEndian::write_u64(&mut e[..8], delta);
    BigEndian::write_u64(&mut e[8..16], initial);
    BigEndian::write_u32(&mut e[16..], ttl);
    e
}

/// Extras holding one 32-bit number (touch/gat expiry, flush delay).
pub fn u32_extras(n: u32) -> [u8; 4] {
    n.to_be_bytes()
}

/// One response packet, borrowing its parts from the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response<'a> {
    /// The opcode it answers.
    pub opcode: u8,
    /// Status code (see [`status`]).
    pub status: u16,
    /// The request's opaque, echoed.
    pub opaque: u32,
    /// CAS value.
    pub cas: u64,
    /// Extras (flags for gets).
    pub extras: &'a [u8],
    /// Key (for GETK/GETKQ).
    pub key: &'a [u8],
    /// Value, or the error text when the status is not OK.
    pub value: &'a [u8],
}

impl Response<'_> {
    /// The flags word of a get response that found its item: its extras, which are exactly
    /// those 4 bytes (protocol_binary.xml: a Get response "MUST have extras"); `None` for
    /// extras of any other length (a malformed response).
    pub fn flags(&self) -> Option<u32> {
        (self.extras.len() == 4).then(|| BigEndian::read_u32(self.extras))
    }
}

/// Parses one response packet; `max_body` bounds the body length (a hostile 4 GiB length is
/// an error, not an allocation).
pub fn parse(buf: &[u8], max_body: usize) -> Result<Status<Response<'_>>, ParseError> {
    if buf.is_empty() {
        return Ok(Status::Partial(None));
    }
    if buf[0] != RESPONSE {
        return Err(ParseError::UnknownReply);
    }
    if buf.len() < HEADER {
        return Ok(Status::Partial(Some(HEADER)));
    }
    let key_len = BigEndian::read_u16(&buf[2..4]) as usize;
    let extras_len = buf[4] as usize;
    let body = BigEndian::read_u32(&buf[8..12]) as usize;
    if body > max_body.saturating_add(512) {
        return Err(ParseError::ValueTooLarge);
    }
    if key_len + extras_len > body {
        return Err(ParseError::BadLine);
    }
    let total = HEADER + body;
    if buf.len() < total {
        return Ok(Status::Partial(Some(total)));
    }
    let e_end = HEADER + extras_len;
    let k_end = e_end + key_len;
    Ok(Status::Complete(
        Response {
            opcode: buf[1],
            status: BigEndian::read_u16(&buf[6..8]),
            opaque: BigEndian::read_u32(&buf[12..16]),
            cas: BigEndian::read_u64(&buf[16..24]),
            extras: &buf[HEADER..e_end],
            key: &buf[e_end..k_end],
            value: &buf[k_end..total],
        },
        total,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(
        opcode: u8,
        status: u16,
        opaque: u32,
        extras: &[u8],
        key: &[u8],
        value: &[u8],
    ) -> Vec<u8> {
        let mut b = Vec::new();
        encode(&mut b, opcode, key, extras, value, opaque, 7);
        b[0] = RESPONSE;
        b[6..8].copy_from_slice(&status.to_be_bytes());
        b
    }

    #[test]
    fn exact_request_bytes() {
        let mut b = Vec::new();
        encode(
            &mut b,
            op::SET,
            b"key",
            &store_extras(5, 10),
            b"val",
            0x01020304,
            9,
        );
        let want: Vec<u8> = [
            &[
                0x80, 0x01, 0, 3, 8, 0, 0, 0, 0, 0, 0, 14, 1, 2, 3, 4, 0, 0, 0, 0, 0, 0, 0, 9,
            ][..],
            &[0, 0, 0, 5, 0, 0, 0, 10],
            b"key",
            b"val",
        ]
        .concat();
        assert_eq!(b, want);
        let mut b = Vec::new();
        encode(&mut b, op::NOOP, b"", &[], b"", 0, 0);
        assert_eq!(b, [&[0x80, 0x0a][..], &[0; 22]].concat());
        let e = arith_extras(1, 2, 0xffff_ffff);
        assert_eq!(
            e,
            [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 255, 255, 255, 255]
        );
    }

    #[test]
    fn parses_and_every_prefix_is_partial() {
        let pkt = response(op::GETKQ, 0, 42, &[0, 0, 0, 9], b"k", b"value");
        let Ok(Status::Complete(r, n)) = parse(&pkt, 1 << 20) else {
            panic!()
        };
        assert_eq!(n, pkt.len());
        assert_eq!((r.opcode, r.status, r.opaque, r.cas), (op::GETKQ, 0, 42, 7));
        assert_eq!(
            (r.flags(), r.key, r.value),
            (Some(9), &b"k"[..], &b"value"[..])
        );
        // A get response without its 4-byte flags, or with more: no flags.
        for extras in [&[][..], &[0, 9], &[0, 0, 0, 9, 0]] {
            let pkt = response(op::GET, 0, 42, extras, b"", b"value");
            let Ok(Status::Complete(r, _)) = parse(&pkt, 1 << 20) else {
                panic!()
            };
            assert_eq!(r.flags(), None, "{extras:?}");
        }
        for n in 0..pkt.len() {
            assert!(
                matches!(parse(&pkt[..n], 1 << 20), Ok(Status::Partial(_))),
                "prefix {n}"
            );
        }
    }

    #[test]
    fn hostile_headers_are_errors() {
        let mut pkt = response(op::GET, 0, 0, &[], b"", b"");
        pkt[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(parse(&pkt, 1 << 20), Err(ParseError::ValueTooLarge));
        let mut pkt = response(op::GET, 0, 0, &[], b"kk", b"");
        pkt[4] = 200;
        assert_eq!(parse(&pkt, 1 << 20), Err(ParseError::BadLine));
        assert_eq!(parse(b"VALUE", 1 << 20), Err(ParseError::UnknownReply));
    }
}

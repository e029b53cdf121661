//! Wire protocol codecs. They never touch a socket: encoders append to a caller's buffer,
//! parsers read a slice and say `Partial` (need more bytes) or `Complete(reply, consumed)`.

pub mod ascii;

/// The result of parsing a buffer that may hold only part of a reply.
#[derive(Debug, PartialEq, Eq)]
pub enum Status<T> {
    /// More bytes are needed. When the parser knows how long the whole reply is
    /// (a value whose header has arrived), it says so, so the caller can size its buffer once.
    Partial(Option<usize>),
    /// A whole reply, and how many bytes of the input it used.
    Complete(T, usize),
}

/// Why a buffer cannot be the start of a valid reply. Small and `Copy`, as in httparse.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// A reply line longer than any valid reply line, without its end.
    LineTooLong,
    /// A reply line that is not any reply the protocol defines.
    UnknownReply,
    /// A reply line of a known kind with malformed fields.
    BadLine,
    /// A value header announcing more bytes than the configured maximum.
    ValueTooLarge,
    /// A value's data not followed by `\r\n`.
    BadTerminator,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ParseError::LineTooLong => "reply line too long",
            ParseError::UnknownReply => "unknown reply",
            ParseError::BadLine => "malformed reply line",
            ParseError::ValueTooLarge => "value length above the limit",
            ParseError::BadTerminator => "value data not followed by \\r\\n",
        })
    }
}

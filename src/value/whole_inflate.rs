//! Whole-buffer inflation with libdeflate: a zlib, gzip or raw deflate stream inflated in
//! one call straight into a vector's spare capacity. About twice the speed of a streaming
//! zlib inflater on seed 001's value and three times on the 160:1 one (docs/performance.md).
//! It needs its output room up front; [`super::codec`] decides the room and retries.

use libdeflate_sys::{
    libdeflate_alloc_decompressor, libdeflate_decompressor, libdeflate_deflate_decompress_ex,
    libdeflate_free_decompressor, libdeflate_gzip_decompress_ex, libdeflate_result,
    libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE as NO_ROOM,
    libdeflate_result_LIBDEFLATE_SUCCESS as SUCCESS, libdeflate_zlib_decompress_ex,
};
use std::ptr::NonNull;

/// The wrapper around the deflate data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Wrapper {
    /// RFC 1950: header and Adler-32, checked.
    Zlib,
    /// RFC 1952: header, CRC-32 and length, checked; the first member only.
    Gzip,
    /// RFC 1951 with no wrapper.
    Raw,
}

/// What one inflation did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The stream inflated: `read` bytes of the input (bytes after the stream are not
    /// read), `written` bytes appended to the vector.
    Done {
        /// Input bytes the stream took.
        read: usize,
        /// Bytes appended.
        written: usize,
    },
    /// The stream inflates to more than the room given; the vector is as it was.
    NoRoom,
    /// Not a valid stream (corrupt, truncated, a checksum that does not match); the vector
    /// is as it was.
    Bad,
}

/// One libdeflate decompressor (about 11 KB of tables, reused from value to value).
pub(crate) struct Inflater(NonNull<libdeflate_decompressor>);

impl Inflater {
    /// A new decompressor, or `None` when its memory cannot be had.
    pub(crate) fn new() -> Option<Inflater> {
        #[allow(unsafe_code)]
        // SAFETY: no arguments; the result is null or a decompressor we own until `drop`.
        let raw = unsafe { libdeflate_alloc_decompressor() };
        NonNull::new(raw).map(Inflater)
    }

    /// Inflates `data` (a `wrapper` stream) onto the end of `out`, into at most `room`
    /// bytes of its spare capacity (the caller reserves them: nothing is zeroed first).
    pub(crate) fn inflate(
        &mut self,
        wrapper: Wrapper,
        data: &[u8],
        out: &mut Vec<u8>,
        room: usize,
    ) -> Outcome {
        let spare = out.spare_capacity_mut();
        let avail = room.min(spare.len());
        let (mut read, mut written) = (0usize, 0usize);
        let call = match wrapper {
            Wrapper::Zlib => libdeflate_zlib_decompress_ex,
            Wrapper::Gzip => libdeflate_gzip_decompress_ex,
            Wrapper::Raw => libdeflate_deflate_decompress_ex,
        };
        #[allow(unsafe_code)]
        // SAFETY: the decompressor is ours and used by this thread only (`&mut self`);
        // libdeflate reads at most `data.len()` bytes from `data` and writes at most `avail`
        // bytes into the spare capacity, which has at least that many; both lengths are
        // written through pointers to locals.
        let result: libdeflate_result = unsafe {
            call(
                self.0.as_ptr(),
                data.as_ptr().cast(),
                data.len(),
                spare.as_mut_ptr().cast(),
                avail,
                &mut read,
                &mut written,
            )
        };
        match result {
            SUCCESS if written <= avail && read <= data.len() => {
                let len = out.len() + written;
                #[allow(unsafe_code)]
                // SAFETY: libdeflate reported success and initialised the first `written`
                // bytes of the spare capacity (checked against `avail` above).
                unsafe {
                    out.set_len(len);
                }
                Outcome::Done { read, written }
            }
            NO_ROOM => Outcome::NoRoom,
            _ => Outcome::Bad,
        }
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        #[allow(unsafe_code)]
        // SAFETY: allocated by `libdeflate_alloc_decompressor` and freed once, here.
        unsafe {
            libdeflate_free_decompressor(self.0.as_ptr())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    #[test]
    fn appends_in_place_or_leaves_the_vector_as_it_was() {
        let text = b"0 1 2 3 4 5 6 7 8 9 ".repeat(500);
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(&text).unwrap();
        let zlib = z.finish().unwrap();
        let mut inflater = Inflater::new().unwrap();
        let mut out = b"kept".to_vec();
        out.reserve(text.len());
        let short = text.len() - 1;
        assert_eq!(
            inflater.inflate(Wrapper::Zlib, &zlib, &mut out, short),
            Outcome::NoRoom
        );
        assert_eq!(out, b"kept");
        let done = inflater.inflate(Wrapper::Zlib, &zlib, &mut out, text.len());
        assert_eq!(
            done,
            Outcome::Done {
                read: zlib.len(),
                written: text.len()
            }
        );
        assert_eq!((&out[..4], &out[4..]), (&b"kept"[..], &text[..]));
        // A room smaller than the spare capacity is kept to.
        let mut out = Vec::with_capacity(text.len() * 2);
        assert_eq!(
            inflater.inflate(Wrapper::Zlib, &zlib, &mut out, 100),
            Outcome::NoRoom
        );
        let mut bad = zlib.clone();
        bad[zlib.len() - 1] ^= 1; // the Adler-32
        assert_eq!(
            inflater.inflate(Wrapper::Zlib, &bad, &mut out, usize::MAX),
            Outcome::Bad
        );
        assert!(out.is_empty());
        // Raw deflate tells how much of the input it read.
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        raw.write_all(&text).unwrap();
        let mut raw = raw.finish().unwrap();
        let n = raw.len();
        raw.extend_from_slice(b"after");
        let done = inflater.inflate(Wrapper::Raw, &raw, &mut out, usize::MAX);
        assert_eq!(
            done,
            Outcome::Done {
                read: n,
                written: text.len()
            }
        );
    }
}

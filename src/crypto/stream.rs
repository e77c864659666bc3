//! Content encryption: the STREAM construction (big-endian 32-bit counter
//! plus last-chunk flag, `aead::stream::StreamBE32`) over ChaCha20-Poly1305.
//! A file of any size is encrypted and decrypted in constant memory.
//!
//! Format: `"STV1"` ‖ 7-byte random nonce prefix ‖ chunks, each chunk
//! [`CHUNK`] plaintext bytes plus a 16-byte tag; the last chunk (possibly
//! empty) carries the last flag, so truncation, reordering and dropped
//! chunks all fail to authenticate.
//!
//! ```
//! use stave::crypto::{generate_dek, stream};
//! let dek = generate_dek();
//! let mut sealed = Vec::new();
//! stream::encrypt(&dek, &b"hello"[..], &mut sealed).unwrap();
//! assert_eq!(sealed.len() as u64, stream::encrypted_len(5));
//! let mut plain = Vec::new();
//! stream::decrypt(&dek, &sealed[..], &mut plain).unwrap();
//! assert_eq!(plain, b"hello");
//! ```

use std::io::{Read, Write};

use chacha20poly1305::aead::stream::{DecryptorBE32, EncryptorBE32};
use chacha20poly1305::aead::KeyInit;
use chacha20poly1305::{ChaCha20Poly1305, Key};

use zeroize::Zeroize;

use super::{CryptoError, Dek};

/// Plaintext bytes per chunk.
pub const CHUNK: usize = 64 * 1024;
pub(crate) const TAG: usize = 16;
pub(crate) const MAGIC: &[u8; 4] = b"STV1";
pub(crate) const PREFIX: usize = 7;
/// Bytes before the first chunk.
pub const HEADER_LEN: usize = MAGIC.len() + PREFIX;

/// The encrypted size of `plain` bytes.
pub fn encrypted_len(plain: u64) -> u64 {
    let chunks = plain.div_ceil(CHUNK as u64).max(1);
    HEADER_LEN as u64 + plain + TAG as u64 * chunks
}

fn aead(dek: &Dek) -> ChaCha20Poly1305 {
    ChaCha20Poly1305::new(Key::from_slice(dek.as_ref()))
}

/// Reads up to `n` bytes into `buf` (cleared first).
fn read_up_to<R: Read>(r: &mut R, buf: &mut Vec<u8>, n: usize) -> std::io::Result<()> {
    buf.clear();
    r.by_ref().take(n as u64).read_to_end(buf)?;
    Ok(())
}

/// `input` cut into frames of `size` bytes, read straight into the frame
/// buffers with one frame of lookahead, so the caller learns which frame
/// is the last without a buffered reader's extra copy.
struct Frames<R> {
    input: R,
    size: usize,
    next: Vec<u8>,
}

impl<R: Read> Frames<R> {
    fn new(mut input: R, size: usize) -> std::io::Result<Self> {
        let mut next = Vec::with_capacity(size);
        read_up_to(&mut input, &mut next, size)?;
        Ok(Self { input, size, next })
    }

    /// Moves the next frame into `buf`; true when it is the last one (short,
    /// or followed by end of input).
    fn take(&mut self, buf: &mut Vec<u8>) -> std::io::Result<bool> {
        std::mem::swap(buf, &mut self.next);
        if buf.len() < self.size {
            self.next.clear();
            return Ok(true);
        }
        read_up_to(&mut self.input, &mut self.next, self.size)?;
        Ok(self.next.is_empty())
    }
}

/// Encrypts `input` into `out` under `dek`; returns the bytes written.
pub fn encrypt<R: Read, W: Write>(dek: &Dek, input: R, out: W) -> Result<u64, CryptoError> {
    use rand::RngCore;
    let mut prefix = [0u8; PREFIX];
    rand::rngs::OsRng.fill_bytes(&mut prefix);
    encrypt_with_prefix(dek, &prefix, input, out)
}

/// [`encrypt`] with a given nonce prefix (test vectors only: never reuse a
/// prefix under one DEK).
pub fn encrypt_with_prefix<R: Read, W: Write>(
    dek: &Dek,
    prefix: &[u8; PREFIX],
    input: R,
    mut out: W,
) -> Result<u64, CryptoError> {
    let mut frames = Frames::new(input, CHUNK)?;
    let mut enc = EncryptorBE32::from_aead(aead(dek), prefix.into());
    out.write_all(MAGIC)?;
    out.write_all(prefix)?;
    let mut written = HEADER_LEN as u64;
    let mut buf = Vec::with_capacity(CHUNK + TAG);
    let mut chunk = 0u64;
    loop {
        if frames.take(&mut buf)? {
            enc.encrypt_last_in_place(b"", &mut buf)
                .map_err(|_| CryptoError::Chunk { chunk })?;
            out.write_all(&buf)?;
            written += buf.len() as u64;
            out.flush()?;
            return Ok(written);
        }
        enc.encrypt_next_in_place(b"", &mut buf)
            .map_err(|_| CryptoError::Chunk { chunk })?;
        out.write_all(&buf)?;
        written += buf.len() as u64;
        chunk += 1;
    }
}

/// Decrypts `input` into `out`; returns the plaintext bytes written. Bytes
/// of a chunk are written only after that chunk authenticates, but a
/// failure can leave earlier chunks in `out`: write to a temporary place.
///
/// # Errors
/// A bad header, or any chunk that does not authenticate (wrong key,
/// tampered, reordered, dropped, truncated).
pub fn decrypt<R: Read, W: Write>(dek: &Dek, mut input: R, mut out: W) -> Result<u64, CryptoError> {
    let mut header = [0u8; HEADER_LEN];
    input.read_exact(&mut header).map_err(|e| {
        CryptoError::Format(format!("header of {HEADER_LEN} bytes unreadable: {e}"))
    })?;
    if &header[..MAGIC.len()] != MAGIC {
        return Err(CryptoError::Format(format!(
            "magic {} is not {}",
            hex::encode(&header[..MAGIC.len()]),
            hex::encode(MAGIC)
        )));
    }
    let mut prefix = [0u8; PREFIX];
    prefix.copy_from_slice(&header[MAGIC.len()..]);
    let mut dec = DecryptorBE32::from_aead(aead(dek), (&prefix).into());
    let mut buf = Vec::with_capacity(CHUNK + TAG);
    let mut chunk = 0u64;
    let mut written = 0u64;
    let mut frames = Frames::new(input, CHUNK + TAG)?;
    loop {
        let last = frames.take(&mut buf)?;
        if buf.len() < TAG {
            return Err(CryptoError::Chunk { chunk });
        }
        if last {
            dec.decrypt_last_in_place(b"", &mut buf)
                .map_err(|_| CryptoError::Chunk { chunk })?;
            out.write_all(&buf)?;
            out.flush()?;
            return Ok(written + buf.len() as u64);
        }
        dec.decrypt_next_in_place(b"", &mut buf)
            .map_err(|_| CryptoError::Chunk { chunk })?;
        out.write_all(&buf)?;
        written += buf.len() as u64;
        chunk += 1;
    }
}

/// The bytes of a blob of `total` encrypted bytes that [`check_head`]
/// needs: the header and the first chunk.
pub fn head_len(total: u64) -> u64 {
    total.min((HEADER_LEN + CHUNK + TAG) as u64)
}

/// Checks that `dek` is the key of a blob of `total` encrypted bytes whose
/// first [`head_len`] bytes are `head`: the first chunk must authenticate
/// (as the last chunk when it is the only one). It reads no further, so it
/// proves the key without the whole blob.
///
/// # Errors
/// A short head, a bad header, or a first chunk that does not authenticate.
pub fn check_head(dek: &Dek, head: &[u8], total: u64) -> Result<(), CryptoError> {
    if head.len() as u64 != head_len(total) || head.len() < HEADER_LEN + TAG {
        return Err(CryptoError::Format(format!(
            "head of {} bytes for a blob of {total}",
            head.len()
        )));
    }
    let (header, first) = head.split_at(HEADER_LEN);
    if &header[..MAGIC.len()] != MAGIC {
        return Err(CryptoError::Format("bad magic".into()));
    }
    let mut prefix = [0u8; PREFIX];
    prefix.copy_from_slice(&header[MAGIC.len()..]);
    let dec = DecryptorBE32::from_aead(aead(dek), (&prefix).into());
    let mut buf = first.to_vec();
    let only = HEADER_LEN as u64 + first.len() as u64 == total;
    let ok = if only {
        dec.decrypt_last_in_place(b"", &mut buf).is_ok()
    } else {
        let mut dec = dec;
        dec.decrypt_next_in_place(b"", &mut buf).is_ok()
    };
    buf.zeroize();
    if ok {
        Ok(())
    } else {
        Err(CryptoError::Chunk { chunk: 0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use zeroize::Zeroizing;

    fn dek(b: u8) -> Dek {
        Zeroizing::new([b; 32])
    }

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i % 251) as u8).collect()
    }

    fn seal(d: &Dek, plain: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        encrypt_with_prefix(d, &[3; PREFIX], plain, &mut out).unwrap();
        out
    }

    fn open(d: &Dek, sealed: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let mut out = Vec::new();
        decrypt(d, sealed, &mut out)?;
        Ok(out)
    }

    /// Cross-checked with Python `cryptography` (ChaCha20Poly1305 with the
    /// STREAM BE32 nonce `prefix ‖ counter_be32 ‖ last_flag`).
    #[test]
    fn stream_vector_is_stable() {
        let sealed = seal(&dek(5), &pattern(CHUNK + 5));
        assert_eq!(sealed.len() as u64, encrypted_len(CHUNK as u64 + 5));
        assert_eq!(
            hex::encode(Sha256::digest(&sealed)),
            include_str!("stream_vector.hex")
        );
    }

    #[test]
    fn check_head_proves_the_key_from_the_first_chunk() {
        for n in [0, 5, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK] {
            let sealed = seal(&dek(1), &pattern(n));
            let total = sealed.len() as u64;
            let head = &sealed[..head_len(total) as usize];
            assert!(check_head(&dek(1), head, total).is_ok(), "len {n}");
            assert!(check_head(&dek(2), head, total).is_err(), "len {n}");
            let mut t = head.to_vec();
            t[HEADER_LEN] ^= 1;
            assert!(check_head(&dek(1), &t, total).is_err(), "len {n}");
            assert!(check_head(&dek(1), &head[..head.len() - 1], total).is_err());
            // claiming a one-chunk blob is longer (or the reverse) fails
            assert!(
                check_head(&dek(1), head, total + 1).is_err() || n >= CHUNK,
                "len {n}"
            );
        }
        assert!(check_head(&dek(1), b"", 0).is_err());
    }

    #[test]
    fn round_trips_at_chunk_boundaries() {
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK, 3 * CHUNK + 17] {
            let plain = pattern(n);
            let sealed = seal(&dek(1), &plain);
            assert_eq!(sealed.len() as u64, encrypted_len(n as u64), "len {n}");
            assert_eq!(open(&dek(1), &sealed).unwrap(), plain, "len {n}");
        }
    }

    #[test]
    fn wrong_key_and_tampering_fail() {
        let sealed = seal(&dek(1), &pattern(2 * CHUNK + 9));
        assert!(matches!(
            open(&dek(2), &sealed),
            Err(CryptoError::Chunk { chunk: 0 })
        ));
        for i in [0, 4, HEADER_LEN, HEADER_LEN + CHUNK + 3, sealed.len() - 1] {
            let mut t = sealed.clone();
            t[i] ^= 0x80;
            assert!(open(&dek(1), &t).is_err(), "flipped byte {i}");
        }
    }

    #[test]
    fn truncated_reordered_and_dropped_chunks_fail() {
        let plain = pattern(3 * CHUNK + 100);
        let sealed = seal(&dek(1), &plain);
        let c = CHUNK + TAG;
        let chunks: Vec<&[u8]> = sealed[HEADER_LEN..].chunks(c).collect();
        assert_eq!(chunks.len(), 4);
        let join = |order: &[usize]| {
            let mut v = sealed[..HEADER_LEN].to_vec();
            for &i in order {
                v.extend_from_slice(chunks[i]);
            }
            v
        };
        assert!(open(&dek(1), &join(&[0, 1, 2, 3])).is_ok());
        // truncated at a chunk boundary: the last chunk is missing its flag
        assert!(open(&dek(1), &join(&[0, 1, 2])).is_err());
        assert!(open(&dek(1), &sealed[..sealed.len() - 1]).is_err());
        assert!(open(&dek(1), &sealed[..HEADER_LEN]).is_err());
        assert!(open(&dek(1), &sealed[..3]).is_err());
        assert!(open(&dek(1), &join(&[1, 0, 2, 3])).is_err(), "reordered");
        assert!(open(&dek(1), &join(&[0, 2, 3])).is_err(), "dropped");
        assert!(open(&dek(1), &join(&[0, 1, 2, 3, 3])).is_err(), "appended");
    }
}

//! Random access to a [`stream`](super::stream) blob: where each sealed
//! chunk lies, and opening any one chunk with the header's nonce prefix. A
//! download verifies chunk by chunk as it arrives, and resumes at any
//! chunk.
//!
//! ```
//! use stave::crypto::{chunks, generate_dek, stream};
//! let dek = generate_dek();
//! let plain = vec![7u8; stream::CHUNK + 10];
//! let mut sealed = Vec::new();
//! stream::encrypt(&dek, &plain[..], &mut sealed).unwrap();
//! let total = sealed.len() as u64;
//! assert_eq!(chunks::count(total), 2);
//! let opener = chunks::Opener::new(&dek, &sealed[..stream::HEADER_LEN]).unwrap();
//! let (start, end) = chunks::span(1, total);
//! let last = opener.open(1, true, &sealed[start as usize..end as usize]).unwrap();
//! assert_eq!(last, vec![7u8; 10]);
//! ```

use chacha20poly1305::aead::stream::{NewStream, StreamBE32, StreamPrimitive};
use chacha20poly1305::aead::KeyInit;
use chacha20poly1305::{ChaCha20Poly1305, Key};

use super::stream::{HEADER_LEN, MAGIC, PREFIX, TAG};
use super::{CryptoError, Dek};

/// Bytes of a sealed chunk (the last may be shorter).
pub const SEALED_CHUNK: u64 = (super::stream::CHUNK + TAG) as u64;

/// How many sealed chunks a blob of `total` bytes has (at least one).
pub fn count(total: u64) -> u64 {
    total
        .saturating_sub(HEADER_LEN as u64)
        .div_ceil(SEALED_CHUNK)
        .max(1)
}

/// Where chunk `i` of a blob of `total` bytes starts and ends.
pub fn span(i: u64, total: u64) -> (u64, u64) {
    let start = (HEADER_LEN as u64).saturating_add(i.saturating_mul(SEALED_CHUNK));
    (
        start.min(total),
        start.saturating_add(SEALED_CHUNK).min(total),
    )
}

/// The chunk that starts at `offset`, if one does (`None` for the header
/// at 0 and any offset inside a chunk).
pub fn starting_at(offset: u64, total: u64) -> Option<u64> {
    let rel = offset.checked_sub(HEADER_LEN as u64)?;
    (rel.is_multiple_of(SEALED_CHUNK) && offset < total).then_some(rel / SEALED_CHUNK)
}

/// Opens single chunks of one blob.
pub struct Opener {
    stream: StreamBE32<ChaCha20Poly1305>,
}

impl Opener {
    /// The opener of the blob whose first [`HEADER_LEN`] bytes are
    /// `header`.
    ///
    /// # Errors
    /// A header of the wrong length or magic.
    pub fn new(dek: &Dek, header: &[u8]) -> Result<Self, CryptoError> {
        let bad = || CryptoError::Format(format!("header {} is not STV1", hex::encode(header)));
        if header.len() != HEADER_LEN {
            return Err(bad());
        }
        let (magic, prefix) = header.split_at(MAGIC.len());
        if magic != MAGIC || prefix.len() != PREFIX {
            return Err(bad());
        }
        let aead = ChaCha20Poly1305::new(Key::from_slice(dek.as_ref()));
        Ok(Opener {
            stream: StreamBE32::from_aead(aead, prefix.into()),
        })
    }

    /// The plaintext of chunk `index`, `last` when it is the blob's last.
    ///
    /// # Errors
    /// [`CryptoError::Chunk`] when it does not authenticate at that
    /// position (wrong key, tampered, moved, or the last flag wrong).
    pub fn open(&self, index: u64, last: bool, sealed: &[u8]) -> Result<Vec<u8>, CryptoError> {
        let position = u32::try_from(index).map_err(|_| CryptoError::Chunk { chunk: index })?;
        let mut buf = sealed.to_vec();
        self.stream
            .decrypt_in_place(position, last, b"", &mut buf)
            .map_err(|_| CryptoError::Chunk { chunk: index })?;
        Ok(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::stream;
    use proptest::prelude::*;
    use zeroize::Zeroizing;

    fn sealed(plain: &[u8]) -> (Dek, Vec<u8>) {
        let dek = Zeroizing::new([4u8; 32]);
        let mut out = Vec::new();
        stream::encrypt(&dek, plain, &mut out).unwrap();
        (dek, out)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Opening every chunk at its span gives the plaintext back, for
        /// any length around chunk boundaries; a chunk at the wrong index,
        /// with the wrong last flag or one bit flipped does not open.
        #[test]
        fn every_chunk_opens_alone_and_only_in_its_place(
            chunks in 0usize..4, extra in 0usize..3, flip in any::<prop::sample::Index>())
        {
            let n = chunks * stream::CHUNK + [0, 1, stream::CHUNK - 1][extra];
            let plain: Vec<u8> = (0..n).map(|i| (i % 253) as u8).collect();
            let (dek, blob) = sealed(&plain);
            let total = blob.len() as u64;
            let opener = Opener::new(&dek, &blob[..HEADER_LEN]).unwrap();
            let k = count(total);
            let mut back = Vec::new();
            for i in 0..k {
                let (s, e) = span(i, total);
                prop_assert_eq!(starting_at(s, total), Some(i));
                let piece = &blob[s as usize..e as usize];
                back.extend(opener.open(i, i + 1 == k, piece).unwrap());
                prop_assert!(opener.open(i, i + 1 != k, piece).is_err(), "wrong last flag");
                prop_assert!(opener.open(i + 1, i + 1 == k, piece).is_err(), "wrong place");
                let mut bad = piece.to_vec();
                let at = flip.index(bad.len());
                bad[at] ^= 1;
                prop_assert!(opener.open(i, i + 1 == k, &bad).is_err(), "tampered");
            }
            prop_assert_eq!(back, plain);
            prop_assert_eq!(span(k, total), (total, total));
            prop_assert_eq!(starting_at(0, total), None);
            prop_assert_eq!(starting_at(HEADER_LEN as u64 + 1, total), None);
        }
    }

    #[test]
    fn another_key_or_header_does_not_open() {
        let (dek, blob) = sealed(b"short");
        let other = Zeroizing::new([5u8; 32]);
        let total = blob.len() as u64;
        let (s, e) = span(0, total);
        let piece = &blob[s as usize..e as usize];
        let o = Opener::new(&other, &blob[..HEADER_LEN]).unwrap();
        assert!(o.open(0, true, piece).is_err());
        let mut header = blob[..HEADER_LEN].to_vec();
        header[5] ^= 1;
        assert!(Opener::new(&dek, &header)
            .unwrap()
            .open(0, true, piece)
            .is_err());
        assert!(Opener::new(&dek, &header[..4]).is_err());
        header[0] = b'X';
        assert!(Opener::new(&dek, &header).is_err());
    }
}

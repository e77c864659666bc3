//! `local/deks/{cid}`: this validator's wrapped DEKs (ciphertext only; the
//! X25519 private key that unwraps them lives in a 0600 file).

use prost::Message;

use super::{decode, decode_rows, keys, LocalError, LocalRaw};
use crate::crypto::wrap::WrappedDek;
use crate::proto::local::StoredDek;

/// The wrapped DEK of a stored record, checked for shape.
pub fn wrapped_of(d: &StoredDek) -> Result<WrappedDek, LocalError> {
    let eph: [u8; 32] =
        d.ephemeral_pubkey.as_slice().try_into().map_err(|_| {
            LocalError::corrupt(&keys::dek(&d.cid), "ephemeral key is not 32 bytes")
        })?;
    Ok(WrappedDek {
        ephemeral_pubkey: eph,
        ciphertext: d.wrapped_dek.clone(),
    })
}

/// Typed access to `local/deks/`.
pub trait DeksExt: LocalRaw {
    fn dek(&self, cid: &[u8]) -> Result<Option<StoredDek>, LocalError> {
        let key = keys::dek(cid);
        self.get_raw(&key)?
            .map(|raw| decode(&key, &raw))
            .transpose()
    }
    fn put_dek(&self, d: &StoredDek) -> Result<(), LocalError> {
        self.put_raw(&keys::dek(&d.cid), &d.encode_to_vec())
    }
    /// Whether a row exists under `local/deks/{cid}`, whether it decodes
    /// or not.
    fn holds_dek_row(&self, cid: &[u8]) -> Result<bool, LocalError> {
        Ok(self.get_raw(&keys::dek(cid))?.is_some())
    }
    /// Forgets the wrapped DEK of `cid` (an upload that never reached the
    /// chain).
    fn delete_dek(&self, cid: &[u8]) -> Result<(), LocalError> {
        self.delete_raw(&keys::dek(cid))
    }
    /// The cids of every wrapped DEK held, in key order. A record that
    /// does not decode, or is not shaped as a wrapped DEK, is not held: it
    /// is skipped (and counted), so the reconciler fetches it again.
    fn dek_cids(&self) -> Result<Vec<Vec<u8>>, LocalError> {
        Ok(self.deks()?.into_iter().map(|(cid, _)| cid).collect())
    }
    /// Every wrapped DEK held, with its cid, in key order (as
    /// [`Self::dek_cids`]).
    fn deks(&self) -> Result<Vec<(Vec<u8>, StoredDek)>, LocalError> {
        let prefix = keys::deks_prefix();
        Ok(decode_rows::<StoredDek>(&prefix, self.scan_raw(&prefix)?)
            .into_iter()
            .filter(|(_, d)| wrapped_of(d).is_ok())
            .collect())
    }
}
impl<T: LocalRaw + ?Sized> DeksExt for T {}

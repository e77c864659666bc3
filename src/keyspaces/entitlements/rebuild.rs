//! `entitlements_by_key/` rebuilt from `entitlements/` (same value).

use crate::keyspaces::index_rows::{all_under, IndexRows};
use crate::store::{StateRead, StoreError};

use super::keys::{entitlement_by_key_key, entitlements_prefix, split_entitlement_key};

pub fn rebuild_index<S: StateRead + ?Sized>(s: &S, out: &mut IndexRows) -> Result<(), StoreError> {
    for (k, v) in all_under(s, &entitlements_prefix())? {
        let (cid, pubkey) = split_entitlement_key(&k)
            .ok_or_else(|| StoreError::corrupt(&k, "not an entitlement key"))?;
        out.insert(entitlement_by_key_key(&pubkey, cid), v);
    }
    Ok(())
}

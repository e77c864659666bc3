//! `grants_by_key/` rebuilt from `grants/` (same value).

use crate::keyspaces::index_rows::{all_under, IndexRows};
use crate::store::{StateRead, StoreError};

use super::keys::{grant_by_key_key, grants_root, split_grant_key};

pub fn rebuild_index<S: StateRead + ?Sized>(s: &S, out: &mut IndexRows) -> Result<(), StoreError> {
    for (k, v) in all_under(s, grants_root())? {
        let (cid, consumer, period) =
            split_grant_key(&k).ok_or_else(|| StoreError::corrupt(&k, "not a grant key"))?;
        out.insert(grant_by_key_key(&consumer, cid, period), v);
    }
    Ok(())
}

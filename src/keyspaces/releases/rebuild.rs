//! `releases_by_party/` rebuilt from the current versions under
//! `releases/` (a retired version's parties are not indexed).

use prost::Message;

use crate::keyspaces::index_rows::{all_under, IndexRows};
use crate::proto::ddex as pb;
use crate::store::{StateRead, StoreError};

use super::keys::{by_party_key, releases_root};

pub fn rebuild_index<S: StateRead + ?Sized>(s: &S, out: &mut IndexRows) -> Result<(), StoreError> {
    for (k, v) in all_under(s, releases_root())? {
        let r = pb::ReleaseRecord::decode(v.as_slice())
            .map_err(|e| StoreError::corrupt(&k, e.to_string()))?;
        for party in &r.parties {
            out.insert(by_party_key(party, &r.release_id), Vec::new());
        }
    }
    Ok(())
}

//! The score order of live sorted sets (`kvdbz/`) rebuilt from the kvdb
//! entries and their members. Rows of deleted sets that the source node
//! still has queued for collection (`kvdbzgc/`) are garbage, and are not
//! rebuilt.

use std::collections::BTreeSet;

use prost::Message;

use crate::keyspaces::index_rows::{all_under, IndexRows};
use crate::keyspaces::kv::keys;
use crate::proto::kv as pb;
use crate::store::{StateRead, StoreError};

pub fn rebuild_index<S: StateRead + ?Sized>(s: &S, out: &mut IndexRows) -> Result<(), StoreError> {
    let mut live = BTreeSet::new();
    for (k, v) in all_under(s, keys::kvdb_root())? {
        let bad = |why: String| StoreError::corrupt(&k, why);
        let e = pb::KvEntry::decode(v.as_slice()).map_err(|e| bad(e.to_string()))?;
        let (owner, db, key) =
            keys::split_kvdb_key(&k).ok_or_else(|| bad("not a kvdb key".into()))?;
        live.insert(keys::member_prefix(&owner, db, key, e.incarnation));
    }
    for (k, v) in all_under(s, keys::members_root())? {
        let bad = |why: &str| StoreError::corrupt(&k, why);
        let (plen, tag) = keys::split_member_key(&k).ok_or_else(|| bad("not a member key"))?;
        let (prefix, rest) = k.split_at_checked(plen).ok_or_else(|| bad("short"))?;
        if tag != b'z' || !live.contains(prefix) {
            continue;
        }
        let score = i128::from_be_bytes(
            v.as_slice()
                .try_into()
                .map_err(|_| bad("score is not 16 bytes"))?,
        );
        let member = rest.get(1..).unwrap_or_default();
        out.insert(keys::zorder_key(prefix, score, member), Vec::new());
    }
    Ok(())
}

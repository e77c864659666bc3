//! The token indexes rebuilt from `kvtok/` records: postings and their
//! counts for each tuple's live token, and every tuple's history (its
//! tokens in creation order).

use std::collections::BTreeMap;

use crate::keyspaces::index_rows::{all_under, IndexRows};
use crate::keyspaces::kv::{keys, KvTokenParams};
use crate::keyspaces::params::ParamsRead;
use crate::store::{StateRead, StoreError};

use super::{postings, tuple_hash, TokenRead};

pub fn rebuild_index<S: StateRead + ?Sized>(s: &S, out: &mut IndexRows) -> Result<(), StoreError> {
    let p: KvTokenParams = s.params()?.map(|p| p.kv_tokens).unwrap_or_default();
    let mut counts: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut by_tuple: BTreeMap<[u8; 32], Vec<(u64, [u8; 32])>> = BTreeMap::new();
    for (k, _) in all_under(s, keys::tokens_root())? {
        let id: [u8; 32] = k
            .get(keys::tokens_root().len()..)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| StoreError::corrupt(&k, "not a token key"))?;
        let t = s
            .stored_token(&id)?
            .ok_or_else(|| StoreError::corrupt(&k, "token vanished"))?;
        let tuple = tuple_hash(&t.token.protocol_id, &t.token.key, &t.token.controller);
        if s.tuple(&tuple)?.live == Some(t.id) {
            for (sel, h) in postings(&t.token, &p) {
                out.insert(keys::ix_key(sel, &h, t.seq, &t.id), Vec::new());
                *counts.entry(keys::ix_count_key(sel, &h)).or_default() += 1;
            }
        }
        by_tuple.entry(tuple).or_default().push((t.seq, t.id));
    }
    for (k, n) in counts {
        out.insert(k, n.to_be_bytes().to_vec());
    }
    for (tuple, mut tokens) in by_tuple {
        tokens.sort_unstable();
        for (n, (_, id)) in tokens.iter().enumerate() {
            out.insert(keys::history_key(&tuple, n as u64), id.to_vec());
        }
    }
    Ok(())
}

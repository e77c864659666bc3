//! Client side: the state a checked proof vouches for, readable by the
//! same query code the node ran.

use std::collections::BTreeMap;
use std::ops::Bound;

use crate::proto::proof as pb;
use crate::store::{QueryRead, Rows, Space, StateRead, StoreError};

type Map = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// Proven state values (and the unprovable index rows a listing walked).
/// A read of a key the proof does not cover fails with
/// [`StoreError::Unproven`]; scans see only covered rows.
#[derive(Debug, Clone, Default)]
pub struct Proven {
    state: Map,
    index: Map,
    block_time_ns: Option<i64>,
}

impl Proven {
    /// Built only by [`super::check_entries`], after every proof held.
    pub(super) fn new(proof: &pb::ReadProof, block_time_ns: Option<i64>) -> Self {
        let state = proof
            .entries
            .iter()
            .map(|e| (e.key.clone(), e.exists.then(|| e.value.clone())))
            .collect();
        let index = proof
            .index_rows
            .iter()
            .map(|r| (r.key.clone(), r.exists.then(|| r.value.clone())))
            .collect();
        Proven {
            state,
            index,
            block_time_ns,
        }
    }

    fn map(&self, space: Space) -> &Map {
        match space {
            Space::State => &self.state,
            Space::Index => &self.index,
        }
    }

    fn point(&self, space: Space, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.map(space)
            .get(key)
            .cloned()
            .ok_or_else(|| StoreError::Unproven {
                space: space_name(space),
                key: hex::encode(key),
            })
    }
}

fn space_name(space: Space) -> &'static str {
    match space {
        Space::State => "state",
        Space::Index => "index",
    }
}

/// Live rows of `it` under `prefix`, at most `limit`.
fn collect<'a>(
    it: impl Iterator<Item = (&'a Vec<u8>, &'a Option<Vec<u8>>)>,
    prefix: &[u8],
    limit: usize,
) -> Rows {
    it.take_while(|(k, _)| k.starts_with(prefix))
        .filter_map(|(k, v)| v.as_ref().map(|v| (k.clone(), v.clone())))
        .take(limit)
        .collect()
}

impl StateRead for Proven {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.point(Space::State, key)
    }
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        self.point(Space::Index, key)
    }
    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        // As the store does: an `after` outside the prefix starts at it.
        let lower = match after {
            Some(a) if a.starts_with(prefix) => Bound::Excluded(a.to_vec()),
            _ => Bound::Included(prefix.to_vec()),
        };
        let it = self.map(space).range((lower, Bound::Unbounded));
        Ok(collect(it, prefix, limit))
    }
}

impl QueryRead for Proven {
    fn block_time_ns(&self) -> Result<i64, StoreError> {
        self.block_time_ns
            .ok_or(StoreError::NoBlockTime { height: None })
    }
    fn prefix_raw_rev(
        &self,
        space: Space,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        // As the store does: from `before` when it is under the prefix,
        // else from the prefix's top (`prefix ‖ 0xff × 64`); rows at or
        // past `before` are skipped either way.
        let upper = match before {
            Some(b) if b.starts_with(prefix) => Bound::Excluded(b.to_vec()),
            _ => {
                let mut top = prefix.to_vec();
                top.extend_from_slice(&[0xff; 64]);
                Bound::Included(top)
            }
        };
        let it = self
            .map(space)
            .range((Bound::Included(prefix.to_vec()), upper))
            .rev()
            .filter(|(k, _)| before.is_none_or(|b| k.as_slice() < b));
        Ok(collect(it, prefix, limit))
    }
}

//! Server side: record what a query reads, then prove it.

use std::collections::BTreeMap;

use parking_lot::Mutex;
use prost::Message;

use crate::proto::proof as pb;
use crate::store::{ChainStore, QueryRead, Rows, Space, StateRead, StoreError, View};

type Seen = Mutex<BTreeMap<Vec<u8>, Option<Vec<u8>>>>;

/// A [`QueryRead`] that passes every read through to a committed view and
/// remembers what it saw.
pub struct Recorder<'r> {
    inner: &'r dyn QueryRead,
    state: Seen,
    index: Seen,
}

impl<'r> Recorder<'r> {
    pub fn new(inner: &'r dyn QueryRead) -> Self {
        Recorder {
            inner,
            state: Mutex::default(),
            index: Mutex::default(),
        }
    }

    fn note(&self, space: Space, rows: &Rows) {
        let mut seen = self.seen(space).lock();
        for (k, v) in rows {
            seen.insert(k.clone(), Some(v.clone()));
        }
    }

    fn seen(&self, space: Space) -> &Seen {
        match space {
            Space::State => &self.state,
            Space::Index => &self.index,
        }
    }
}

impl StateRead for Recorder<'_> {
    fn get_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let v = self.inner.get_raw(key)?;
        self.state.lock().insert(key.to_vec(), v.clone());
        Ok(v)
    }
    fn get_index_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let v = self.inner.get_index_raw(key)?;
        self.index.lock().insert(key.to_vec(), v.clone());
        Ok(v)
    }
    fn prefix_raw(
        &self,
        space: Space,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        let rows = self.inner.prefix_raw(space, prefix, after, limit)?;
        self.note(space, &rows);
        Ok(rows)
    }
}

impl QueryRead for Recorder<'_> {
    fn block_time_ns(&self) -> Result<i64, StoreError> {
        self.inner.block_time_ns()
    }
    fn prefix_raw_rev(
        &self,
        space: Space,
        prefix: &[u8],
        before: Option<&[u8]>,
        limit: usize,
    ) -> Result<Rows, StoreError> {
        let rows = self.inner.prefix_raw_rev(space, prefix, before, limit)?;
        self.note(space, &rows);
        Ok(rows)
    }
}

/// The most state keys one proven read may prove (each costs a tree walk
/// and about 1–3 KB on the wire).
pub const MAX_PROVEN_KEYS: usize = 4096;
/// The most index rows one proven read may ship.
pub const MAX_INDEX_ROWS: usize = 20_000;

/// Why a read could not be proven.
#[derive(Debug, thiserror::Error)]
pub enum ProveError {
    #[error(
        "the read touched {keys} state keys and {index_rows} index rows; a proven read may \
         prove at most {MAX_PROVEN_KEYS} keys and ship {MAX_INDEX_ROWS} index rows: ask for \
         a smaller page or a narrower selector"
    )]
    TooLarge { keys: usize, index_rows: usize },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The proof of everything `rec` saw, at `height` (the view's committed
/// height), read through the same snapshot as the query.
///
/// # Errors
/// A store error, or [`StoreError::Tree`] when the tree's value under a key
/// differs from the one the query read (a node fault).
pub fn prove(
    store: &ChainStore,
    view: &View<'_>,
    height: u64,
    rec: Recorder<'_>,
) -> Result<pb::ReadProof, ProveError> {
    let state = rec.state.into_inner();
    let index = rec.index.into_inner();
    if state.len() > MAX_PROVEN_KEYS || index.len() > MAX_INDEX_ROWS {
        return Err(ProveError::TooLarge {
            keys: state.len(),
            index_rows: index.len(),
        });
    }
    let mut entries = Vec::with_capacity(state.len());
    for (key, read) in state {
        let super::Chosen { value, proof } = super::choose(store, view, &key, height)?;
        let (proof, jmt_proof) = match proof {
            super::ChosenProof::Ics23(cp) => (cp.encode_to_vec(), Vec::new()),
            super::ChosenProof::Jmt(data) => (Vec::new(), data),
        };
        if value != read {
            return Err(StoreError::Tree(format!(
                "key {} reads differently from the tree at {height}",
                hex::encode(&key)
            ))
            .into());
        }
        entries.push(pb::ProvenEntry {
            exists: value.is_some(),
            value: value.unwrap_or_default(),
            proof,
            jmt_proof,
            key,
        });
    }
    let index_rows = index
        .into_iter()
        .map(|(key, v)| pb::IndexRow {
            key,
            exists: v.is_some(),
            value: v.unwrap_or_default(),
        })
        .collect();
    Ok(pb::ReadProof {
        height,
        entries,
        index_rows,
    })
}

//! Typed access to tokens, tuples, history, controller counts and the
//! token indexes.

use prost::Message;

use super::{parse_tags, KvToken};
use crate::keyspaces::kv::keys::{self, Sel};
use crate::keyspaces::kv::{u64_of, KvError, KvTokenParams};
use crate::proto::kv as pb;
use crate::store::{StateRead, StateWrite, StoreError};

/// A token as stored, with where it stands in its tuple's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredToken {
    pub token: KvToken,
    pub id: [u8; 32],
    pub generation: u64,
    pub created_height: u64,
    pub seq: u64,
    /// 0 while live. Stored only by a delete: a token replaced by an update
    /// is never rewritten, and [`super::query::history`] fills its marks in
    /// from its successor.
    pub spent_height: u64,
    pub spent_by: Option<[u8; 32]>,
    pub op: u32,
    pub index_bytes: u64,
    /// On an update: the token it replaced (its sign bytes name it).
    pub replaces: Option<[u8; 32]>,
}

impl StoredToken {
    /// Spent by a delete, for a token as stored. Whether a token is live is
    /// what its tuple record names: a stored token replaced by an update is
    /// neither deleted nor live. A [`super::query::history`] entry has its
    /// marks filled in from its successor, so there this is true for a
    /// replaced token too: read `spent_by` and `op` to tell them apart.
    pub fn deleted(&self) -> bool {
        self.spent_height != 0
    }
}

fn id32(field: &str, b: &[u8]) -> Result<[u8; 32], KvError> {
    b.try_into()
        .map_err(|_| KvError::BadField(format!("{field} is {} bytes, not 32", b.len())))
}

impl TryFrom<pb::StoredToken> for StoredToken {
    type Error = KvError;
    fn try_from(s: pb::StoredToken) -> Result<Self, KvError> {
        let token = s
            .token
            .ok_or_else(|| KvError::BadField("stored token without token".into()))?;
        Ok(StoredToken {
            token: token.try_into()?,
            id: id32("token_id", &s.token_id)?,
            generation: s.generation,
            created_height: s.created_height,
            seq: s.seq,
            spent_height: s.spent_height,
            spent_by: match s.spent_by.len() {
                0 => None,
                _ => Some(id32("spent_by", &s.spent_by)?),
            },
            op: s.op,
            index_bytes: s.index_bytes,
            replaces: match s.replaces.len() {
                0 => None,
                _ => Some(id32("replaces", &s.replaces)?),
            },
        })
    }
}

impl From<&StoredToken> for pb::StoredToken {
    fn from(s: &StoredToken) -> Self {
        pb::StoredToken {
            token: Some(s.token.clone().into()),
            token_id: s.id.to_vec(),
            generation: s.generation,
            created_height: s.created_height,
            seq: s.seq,
            spent_height: s.spent_height,
            spent_by: s.spent_by.map(|b| b.to_vec()).unwrap_or_default(),
            op: s.op,
            index_bytes: s.index_bytes,
            replaces: s.replaces.map(|b| b.to_vec()).unwrap_or_default(),
        }
    }
}

/// The record of one tuple.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tuple {
    pub generation: u64,
    pub live: Option<[u8; 32]>,
    pub history_len: u64,
}

fn decode<M: Message + Default>(key: &[u8], raw: &[u8]) -> Result<M, StoreError> {
    M::decode(raw).map_err(|e| StoreError::corrupt(key, e))
}

/// One index posting: (selector, hashed value).
pub type Posting = (Sel, [u8; 32]);

/// The index postings of a token. Computed once per action and passed to
/// [`TokenWrite::reindex`]; their number sets the quota a token holds.
pub fn postings(t: &KvToken, p: &KvTokenParams) -> Vec<Posting> {
    let mut out = vec![
        (Sel::Key, keys::sel_hash(t.key.as_bytes())),
        (Sel::Controller, keys::sel_hash(t.controller.as_bytes())),
        (Sel::Protocol, keys::sel_hash(t.protocol_id.as_bytes())),
    ];
    // Stored tokens passed `parse_tags`; a failure here cannot happen.
    for tag in parse_tags(&t.tags, p).unwrap_or_default() {
        out.push((Sel::Tag, keys::sel_hash(tag.as_bytes())));
    }
    out
}

/// Bytes one posting costs (key plus the count entry share).
pub const POSTING_BYTES: u64 = 8 + 1 + 32 + 8 + 32;

pub trait TokenRead: StateRead {
    fn stored_token(&self, id: &[u8; 32]) -> Result<Option<StoredToken>, StoreError> {
        let k = keys::token_key(id);
        match self.get_raw(&k)? {
            None => Ok(None),
            Some(raw) => {
                let s: pb::StoredToken = decode(&k, &raw)?;
                StoredToken::try_from(s)
                    .map(Some)
                    .map_err(|e| StoreError::corrupt(&k, e))
            }
        }
    }

    fn tuple(&self, tuple: &[u8; 32]) -> Result<Tuple, StoreError> {
        let k = keys::tuple_key(tuple);
        match self.get_raw(&k)? {
            None => Ok(Tuple::default()),
            Some(raw) => {
                let r: pb::TupleRecord = decode(&k, &raw)?;
                let live = match r.live.len() {
                    0 => None,
                    _ => Some(
                        r.live
                            .as_slice()
                            .try_into()
                            .map_err(|_| StoreError::corrupt(&k, "live id not 32 bytes"))?,
                    ),
                };
                Ok(Tuple {
                    generation: r.generation,
                    live,
                    history_len: r.history_len,
                })
            }
        }
    }

    fn live_tokens_of(&self, controller: &[u8; 32]) -> Result<u64, StoreError> {
        let k = keys::controller_key(controller);
        u64_of(&k, self.get_raw(&k)?)
    }

    fn posting_count(&self, sel: Sel, h: &[u8; 32]) -> Result<u64, StoreError> {
        let k = keys::ix_count_key(sel, h);
        u64_of(&k, self.get_index_raw(&k)?)
    }

    /// The id at position `n` of a tuple's history (index space: the
    /// history is the tuple's tokens in creation order, derived data).
    fn history_entry(&self, tuple: &[u8; 32], n: u64) -> Result<Option<[u8; 32]>, StoreError> {
        let k = keys::history_key(tuple, n);
        match self.get_index_raw(&k)? {
            None => Ok(None),
            Some(r) => r
                .as_slice()
                .try_into()
                .map(Some)
                .map_err(|_| StoreError::corrupt(&k, "not 32 bytes")),
        }
    }
}
impl<T: StateRead + ?Sized> TokenRead for T {}

pub trait TokenWrite: StateWrite {
    fn put_stored_token(&mut self, s: &StoredToken) {
        self.put_encoded_token(&s.id, pb::StoredToken::from(s).encode_to_vec());
    }

    /// Stores a token already encoded as `pb::StoredToken`.
    fn put_encoded_token(&mut self, id: &[u8; 32], encoded: Vec<u8>) {
        self.put_raw(keys::token_key(id), encoded);
    }

    fn put_tuple(&mut self, tuple: &[u8; 32], t: &Tuple) {
        let r = pb::TupleRecord {
            generation: t.generation,
            live: t.live.map(|b| b.to_vec()).unwrap_or_default(),
            history_len: t.history_len,
        };
        self.put_raw(keys::tuple_key(tuple), r.encode_to_vec());
    }

    fn put_history_entry(&mut self, tuple: &[u8; 32], n: u64, id: &[u8; 32]) {
        self.put_index_raw(keys::history_key(tuple, n), id.to_vec());
    }

    fn put_live_tokens_of(&mut self, controller: &[u8; 32], n: u64) {
        let k = keys::controller_key(controller);
        match n {
            0 => self.delete_raw(k),
            n => self.put_raw(k, n.to_be_bytes().to_vec()),
        }
    }

    /// The next global token sequence number (creation order).
    fn next_token_seq(&mut self) -> Result<u64, StoreError> {
        let k = keys::meta_key("tokseq");
        let next = u64_of(&k, self.get_raw(&k)?)? + 1;
        self.put_raw(k, next.to_be_bytes().to_vec());
        Ok(next)
    }

    /// Moves a tuple's postings from the token `old` to `new` (either may be
    /// absent: a create has no `old`, a delete no `new`). A selector both
    /// share keeps its count; an update always shares key, controller and
    /// protocol. Each side comes with its token's [`postings`].
    fn reindex(
        &mut self,
        old: Option<(&StoredToken, &[Posting])>,
        new: Option<(&StoredToken, &[Posting])>,
    ) {
        let before = old.map_or(&[][..], |(_, p)| p);
        let after = new.map_or(&[][..], |(_, p)| p);
        if let Some((s, _)) = old {
            for (sel, h) in before {
                self.delete_index_raw(keys::ix_key(*sel, h, s.seq, &s.id));
                if !after.contains(&(*sel, *h)) {
                    self.add_to_count(*sel, h, -1);
                }
            }
        }
        if let Some((s, _)) = new {
            for (sel, h) in after {
                self.put_index_raw(keys::ix_key(*sel, h, s.seq, &s.id), Vec::new());
                if !before.contains(&(*sel, *h)) {
                    self.add_to_count(*sel, h, 1);
                }
            }
        }
    }

    /// Adds ±1 to a posting list's count; a count of 0 is no row.
    fn add_to_count(&mut self, sel: Sel, h: &[u8; 32], delta: i64) {
        self.add_index_counter(keys::ix_count_key(sel, h), delta);
    }
}
impl<T: StateWrite + ?Sized> TokenWrite for T {}

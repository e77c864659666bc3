//! Lookup (BRC-35 §3.5) and history over committed state, served from the
//! token indexes: the smallest posting list drives, the other selectors
//! filter; `any` over tags alone is a k-way merge of the tag lists. No scans.
//! A lookup's cost is bounded (review m8): `skip` is at most [`MAX_SKIP`],
//! and one lookup reads at most [`MAX_SCANNED`] index rows, tokens and
//! tuple records; past that it is refused (narrow the selectors, or page
//! with `skip`). Index rows only nominate tokens: each returned token is
//! checked against its tuple record (live) and the selectors, so a proven
//! lookup cannot be fed a stale or unmatched token.

use std::collections::VecDeque;

use super::state::{StoredToken, TokenRead};
use super::{tuple_hash, Op};
use crate::keyspaces::kv::keys::{self, Sel};
use crate::store::{QueryRead, Space, StateRead, StoreError};

/// Default and largest page of a lookup.
pub const DEFAULT_LIMIT: u32 = 50;
pub const MAX_LIMIT: u32 = 1000;
/// The largest `skip` of a lookup.
pub const MAX_SKIP: u64 = 10_000;
/// Index rows, tokens and tuple records one lookup may read.
pub const MAX_SCANNED: usize = 50_000;
/// Tags one lookup may name (a token carries at most 16).
pub const MAX_LOOKUP_TAGS: usize = 16;

/// A lookup query. Strings are compared exactly as stored (canonical forms).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lookup {
    pub key: Option<String>,
    pub controller: Option<String>,
    pub protocol_id: Option<String>,
    pub tags: Vec<String>,
    /// `any` instead of `all` (the default).
    pub any: bool,
    /// 0 means [`DEFAULT_LIMIT`]; more than [`MAX_LIMIT`] is refused.
    pub limit: u32,
    /// At most [`MAX_SKIP`].
    pub skip: u64,
    /// Newest first instead of oldest first (creation height and index).
    pub desc: bool,
}

/// Why a lookup is refused.
#[derive(Debug, thiserror::Error)]
pub enum LookupError {
    #[error("a lookup needs at least one of key, controller, protocol_id, tags")]
    NoSelector,
    #[error("limit {0} is over the maximum of {MAX_LIMIT}")]
    LimitTooLarge(u32),
    #[error("skip {0} is over the maximum of {MAX_SKIP}; narrow the selectors instead")]
    SkipTooLarge(u64),
    #[error("{0} tags are over the maximum of {MAX_LOOKUP_TAGS}")]
    TooManyTags(usize),
    #[error("the lookup read {read} index rows, tokens and tuple records, over the maximum of {MAX_SCANNED}; narrow the selectors")]
    ScanLimit { read: usize },
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// One posting list read in pages, in either direction.
struct Cursor<'v> {
    view: &'v dyn QueryRead,
    /// Rows read by every cursor of this lookup, with the tokens and tuple
    /// records read.
    read: &'v std::cell::Cell<usize>,
    prefix: Vec<u8>,
    desc: bool,
    buf: VecDeque<(u64, [u8; 32])>,
    last: Option<Vec<u8>>,
    done: bool,
}

const PAGE: usize = 256;

impl<'v> Cursor<'v> {
    fn new(
        view: &'v dyn QueryRead,
        read: &'v std::cell::Cell<usize>,
        sel: Sel,
        h: &[u8; 32],
        desc: bool,
    ) -> Self {
        Cursor {
            view,
            read,
            prefix: keys::ix_prefix(sel, h),
            desc,
            buf: VecDeque::new(),
            last: None,
            done: false,
        }
    }

    fn peek(&mut self) -> Result<Option<(u64, [u8; 32])>, LookupError> {
        if self.buf.is_empty() && !self.done {
            let rows = if self.desc {
                self.view
                    .prefix_raw_rev(Space::Index, &self.prefix, self.last.as_deref(), PAGE)?
            } else {
                self.view
                    .prefix_raw(Space::Index, &self.prefix, self.last.as_deref(), PAGE)?
            };
            // a seek costs a read even when it finds nothing
            charge(self.read, rows.len().max(1))?;
            self.done = rows.len() < PAGE;
            self.last = rows.last().map(|(k, _)| k.clone());
            for (k, _) in rows {
                if let Some(p) = keys::split_ix_key(self.prefix.len(), &k) {
                    self.buf.push_back(p);
                }
            }
        }
        Ok(self.buf.front().copied())
    }

    fn next(&mut self) -> Result<Option<(u64, [u8; 32])>, LookupError> {
        let p = self.peek()?;
        self.buf.pop_front();
        Ok(p)
    }

    /// Whether posting `p` comes before `target` in this cursor's order.
    fn before(&self, p: &(u64, [u8; 32]), target: &(u64, [u8; 32])) -> bool {
        if self.desc {
            p > target
        } else {
            p < target
        }
    }

    /// Moves to the first posting at or past `target` (in this cursor's
    /// order): within the page when it is there, else by seeking the index.
    fn seek(&mut self, target: (u64, [u8; 32])) -> Result<(), LookupError> {
        while let Some(p) = self.buf.front() {
            if !self.before(p, &target) {
                return Ok(());
            }
            self.buf.pop_front();
        }
        if self.done {
            return Ok(());
        }
        let mut key = self.prefix.clone();
        key.extend_from_slice(&target.0.to_be_bytes());
        key.extend_from_slice(&target.1);
        // Page reads continue strictly after (or before) `last`: a key just
        // before (or after) the target's own key.
        if self.desc {
            key.push(0);
        } else {
            key.pop();
        }
        self.last = Some(key);
        while let Some(p) = self.peek()? {
            if !self.before(&p, &target) {
                break;
            }
            self.buf.pop_front();
        }
        Ok(())
    }
}

/// Counts `n` reads against [`MAX_SCANNED`].
fn charge(read: &std::cell::Cell<usize>, n: usize) -> Result<(), LookupError> {
    let now = read.get().saturating_add(n);
    read.set(now);
    match now > MAX_SCANNED {
        true => Err(LookupError::ScanLimit { read: now }),
        false => Ok(()),
    }
}

fn matches(t: &StoredToken, q: &Lookup, tags: &[String]) -> bool {
    let tok = &t.token;
    if q.key.as_ref().is_some_and(|k| *k != tok.key)
        || q.controller.as_ref().is_some_and(|c| *c != tok.controller)
        || q.protocol_id
            .as_ref()
            .is_some_and(|p| *p != tok.protocol_id)
    {
        return false;
    }
    if q.tags.is_empty() {
        return true;
    }
    if q.any {
        q.tags.iter().any(|w| tags.contains(w))
    } else {
        q.tags.iter().all(|w| tags.contains(w))
    }
}

fn token_tags(t: &StoredToken) -> Vec<String> {
    match t.token.tags.as_str() {
        "" => Vec::new(),
        s => serde_json::from_str(s).unwrap_or_default(),
    }
}

/// Live tokens matching `q`, in creation order (or reverse), after `skip`.
///
/// # Errors
/// [`LookupError::NoSelector`] without a selector (an empty tag list is
/// none); [`LookupError::LimitTooLarge`] over 1,000;
/// [`LookupError::SkipTooLarge`] over [`MAX_SKIP`];
/// [`LookupError::ScanLimit`] past [`MAX_SCANNED`] reads.
pub fn lookup(view: &dyn QueryRead, q: &Lookup) -> Result<Vec<StoredToken>, LookupError> {
    let limit = match q.limit {
        0 => DEFAULT_LIMIT,
        n if n > MAX_LIMIT => return Err(LookupError::LimitTooLarge(n)),
        n => n,
    } as usize;
    if q.skip > MAX_SKIP {
        return Err(LookupError::SkipTooLarge(q.skip));
    }
    if q.tags.len() > MAX_LOOKUP_TAGS {
        return Err(LookupError::TooManyTags(q.tags.len()));
    }
    let read = std::cell::Cell::new(0usize);
    let mut fixed: Vec<(Sel, [u8; 32])> = Vec::new();
    for (sel, v) in [
        (Sel::Key, &q.key),
        (Sel::Controller, &q.controller),
        (Sel::Protocol, &q.protocol_id),
    ] {
        if let Some(v) = v {
            fixed.push((sel, keys::sel_hash(v.as_bytes())));
        }
    }
    let tag_sels: Vec<(Sel, [u8; 32])> = q
        .tags
        .iter()
        .map(|t| (Sel::Tag, keys::sel_hash(t.as_bytes())))
        .collect();
    if fixed.is_empty() && tag_sels.is_empty() {
        return Err(LookupError::NoSelector);
    }
    // `all`: the intersection of every selector's list, smallest first,
    // by leapfrogging (only matches are read). `any` over tags alone: the
    // union of the tag lists. `any` with other selectors: the smallest of
    // those drives and each candidate is filtered.
    let mut candidates = fixed.clone();
    if !q.any {
        candidates.extend(tag_sels.iter().copied());
    }
    let mut counted = Vec::with_capacity(candidates.len());
    for (s, h) in &candidates {
        counted.push((view.posting_count(*s, h)?, *s, *h));
    }
    counted.sort_by_key(|c| c.0);
    let (mut cursors, intersect): (Vec<Cursor<'_>>, bool) = if candidates.is_empty() {
        let union = tag_sels
            .iter()
            .map(|(s, h)| Cursor::new(view, &read, *s, h, q.desc))
            .collect();
        (union, false)
    } else if !q.any {
        let all = counted
            .iter()
            .map(|(_, s, h)| Cursor::new(view, &read, *s, h, q.desc))
            .collect();
        (all, true)
    } else {
        let driver = counted
            .iter()
            .take(1)
            .map(|(_, s, h)| Cursor::new(view, &read, *s, h, q.desc))
            .collect();
        (driver, false)
    };
    // Only `any` with other selectors can nominate non-matching candidates
    // (so only it checks them before skipping).
    let needs_filter = q.any && !fixed.is_empty() && fixed.len() + tag_sels.len() > 1;
    let mut skipped = 0u64;
    let mut out = Vec::with_capacity(limit);
    while out.len() < limit {
        let next = match intersect {
            true => next_intersection(&mut cursors)?,
            false => next_union(&mut cursors, q.desc)?,
        };
        let Some((_, id)) = next else {
            break;
        };
        if !needs_filter && skipped < q.skip {
            skipped += 1;
            continue;
        }
        charge(&read, 2)?;
        let Some(t) = view.stored_token(&id)? else {
            continue;
        };
        // Index rows only nominate: the token must match and its tuple's
        // record must name it live. Both are verifiable state, so a proven
        // lookup cannot be fed a stale or unmatched token by a forged index.
        let tuple = tuple_hash(&t.token.protocol_id, &t.token.key, &t.token.controller);
        let live = view.tuple(&tuple)?.live == Some(id);
        if t.deleted() || !live || !matches(&t, q, &token_tags(&t)) {
            continue;
        }
        if skipped < q.skip {
            skipped += 1;
            continue;
        }
        out.push(t);
    }
    Ok(out)
}

/// The next posting in every one of `cursors` (leapfrog intersection).
fn next_intersection(cursors: &mut [Cursor<'_>]) -> Result<Option<(u64, [u8; 32])>, LookupError> {
    let Some(first) = cursors.first_mut() else {
        return Ok(None);
    };
    let Some(mut target) = first.peek()? else {
        return Ok(None);
    };
    'round: loop {
        for c in cursors.iter_mut() {
            c.seek(target)?;
            match c.peek()? {
                None => return Ok(None),
                Some(p) if p != target => {
                    target = p;
                    continue 'round;
                }
                Some(_) => {}
            }
        }
        for c in cursors.iter_mut() {
            c.next()?;
        }
        return Ok(Some(target));
    }
}

/// The next posting of the union of `cursors`, in order, without repeats.
fn next_union(
    cursors: &mut [Cursor<'_>],
    desc: bool,
) -> Result<Option<(u64, [u8; 32])>, LookupError> {
    let mut best: Option<(u64, [u8; 32])> = None;
    for c in cursors.iter_mut() {
        if let Some(p) = c.peek()? {
            let better = match best {
                None => true,
                Some(b) => (p.0 < b.0) != desc && p.0 != b.0,
            };
            if better {
                best = Some(p);
            }
        }
    }
    if let Some(b) = best {
        for c in cursors.iter_mut() {
            if c.peek()?.is_some_and(|p| p.0 == b.0) {
                c.next()?;
            }
        }
    }
    Ok(best)
}

/// A tuple's history, oldest to newest: every token ever minted for it
/// (creates and updates, across deletes and re-creates), from position
/// `from`, at most `limit` (capped at [`MAX_LIMIT`]). Returns the tokens,
/// with their spent marks, and the position to continue from, if any.
pub fn history<S: StateRead>(
    state: &S,
    protocol_id: &str,
    key: &str,
    controller: &str,
    from: u64,
    limit: u32,
) -> Result<(Vec<StoredToken>, Option<u64>), StoreError> {
    let tuple = tuple_hash(protocol_id, key, controller);
    let rec = state.tuple(&tuple)?;
    let limit = match limit {
        0 => DEFAULT_LIMIT,
        n => n.min(MAX_LIMIT),
    } as u64;
    let end = rec.history_len.min(from.saturating_add(limit));
    let mut out = Vec::new();
    for n in from..end {
        out.push(history_token(state, &tuple, n)?);
    }
    let successor = match end < rec.history_len {
        true => Some(history_token(state, &tuple, end)?),
        false => None,
    };
    mark_replaced(&mut out, successor);
    let next = (end < rec.history_len).then_some(end);
    Ok((out, next))
}

/// The token at position `n` (< the tuple's `history_len`): a missing row
/// or token is corruption, never a gap to link across.
fn history_token<S: StateRead>(
    state: &S,
    tuple: &[u8; 32],
    n: u64,
) -> Result<StoredToken, StoreError> {
    let k = keys::history_key(tuple, n);
    let id = state
        .history_entry(tuple, n)?
        .ok_or_else(|| StoreError::corrupt(&k, "history entry missing"))?;
    state
        .stored_token(&id)?
        .ok_or_else(|| StoreError::corrupt(&k, "history names a missing token"))
}

/// An update does not rewrite the token it replaces, so its spent marks are
/// derived here: a token that was not deleted and whose successor in the
/// history is an update was replaced by it, at the successor's height. (A
/// successor after a delete is always a create.)
fn mark_replaced(page: &mut [StoredToken], successor: Option<StoredToken>) {
    let update = |t: &StoredToken| (t.op == Op::Update as u32).then_some((t.created_height, t.id));
    let mut next = successor.as_ref().and_then(update);
    for t in page.iter_mut().rev() {
        if let (Some((height, id)), 0) = (next, t.spent_height) {
            t.spent_height = height;
            t.spent_by = Some(id);
        }
        next = update(t);
    }
}

/// The live token of a tuple, if any.
pub fn live_token<S: StateRead>(
    state: &S,
    protocol_id: &str,
    key: &str,
    controller: &str,
) -> Result<Option<StoredToken>, StoreError> {
    let rec = state.tuple(&tuple_hash(protocol_id, key, controller))?;
    match rec.live {
        None => Ok(None),
        Some(id) => state.stored_token(&id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skip_over_the_cap_is_refused_before_any_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::ChainStore::open(dir.path()).unwrap();
        let view = store.view();
        let q = Lookup {
            controller: Some("c".into()),
            skip: u64::MAX,
            ..Lookup::default()
        };
        let e = lookup(&view, &q).unwrap_err();
        assert!(matches!(e, LookupError::SkipTooLarge(u64::MAX)), "{e}");
        assert!(e.to_string().contains(&u64::MAX.to_string()), "{e}");
        let at_cap = Lookup {
            skip: MAX_SKIP,
            ..q
        };
        assert!(lookup(&view, &at_cap).unwrap().is_empty());
    }

    #[test]
    fn reads_past_the_scan_cap_are_refused() {
        let read = std::cell::Cell::new(0);
        assert!(charge(&read, MAX_SCANNED).is_ok());
        let e = charge(&read, 1).unwrap_err();
        assert!(
            matches!(e, LookupError::ScanLimit { read } if read == MAX_SCANNED + 1),
            "{e}"
        );
    }
}

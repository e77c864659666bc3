//! The `snapshot_chunk` target: state-sync offers ([`check::offer`]) and
//! chunks ([`check::chunk`]), with their decoding ([`Chunk::decode`],
//! [`Metadata::decode`]) and range proofs ([`crate::snapshot::smt`]).
//!
//! Input: a mode byte, then bytes read with [`Unstructured`].
//! - **0, a real snapshot.** A state of up to [`MAX_ENTRIES`] entries and a
//!   height; the snapshot is cut as `build_with` cuts it (the same pure
//!   `cut` / `intervals` / `Prover`, at an input chunk size so it has
//!   several chunks), then one chunk is changed: a byte flipped, cut or
//!   appended, an entry dropped, changed, added or swapped, `lo`, the
//!   height or the index moved, a proof sibling dropped or changed, or the
//!   entries, `hi` and proof each taken honestly for a different interval.
//!   The adversary's metadata names the changed bytes; the app hash stays
//!   the real one.
//! - **1, raw chunk.** A real snapshot as above and raw bytes, named by
//!   the metadata, offered as one of its chunks.
//! - **2, raw offer.** Any height, chunk count, hash, app hash and
//!   metadata bytes (the hashes optionally the metadata's own).
//!
//! # The oracle
//! The real snapshot is offered and accepted (and not under another app
//! hash); its chunks are accepted in order, each yielding exactly its
//! entries, and refused out of order. A changed chunk that is accepted
//! yields exactly the real entries of the interval it claims (soundness and
//! completeness of the range proof). Decoding never panics and re-encodes
//! to an equal value; `offer` and `chunk` give the same verdict twice.

use std::collections::BTreeMap;

use arbitrary::{Result as AResult, Unstructured};

use super::common::Seed;
use crate::snapshot::build::{cut, entry_bytes, intervals};
use crate::snapshot::check::{self, Expect, RestoreError, Rows};
use crate::snapshot::format::{chunk_hash, Chunk, Metadata};
use crate::snapshot::smt::{self, add_one, Hash, Leaf, Node, Prover};

/// Most entries in a fuzzed state.
pub const MAX_ENTRIES: usize = 24;

/// Runs the oracle of the mode `data[0]` selects.
pub fn snapshot_case(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let _ = run(mode, &mut Unstructured::new(rest));
}

/// The case; names the path it judged (the seeds' tests check it).
fn run(mode: u8, u: &mut Unstructured) -> AResult<&'static str> {
    match mode % 3 {
        0 => real_case(u),
        1 => raw_chunk(u),
        _ => raw_offer(u),
    }
}

/// Up to `max` bytes: a length, then that many (fewer if the input ends).
fn take(u: &mut Unstructured, max: usize) -> AResult<Vec<u8>> {
    let n = u.int_in_range(0..=max)?.min(u.len());
    Ok(u.bytes(n)?.to_vec())
}

/// A real state and its snapshot.
struct Snap {
    height: u64,
    /// Every row, in key-hash order.
    rows: Rows,
    leaves: Vec<Leaf>,
    meta: Metadata,
    chunks: Vec<Vec<u8>>,
    bounds: Vec<(Hash, Hash)>,
    starts: Vec<usize>,
}

impl Snap {
    fn new(u: &mut Unstructured) -> AResult<Snap> {
        let height = u.int_in_range(1..=1_000u64)?;
        let mut state = BTreeMap::new();
        for i in 0..u.int_in_range(0..=MAX_ENTRIES)? {
            let key = [vec![b'k', i as u8], take(u, 4)?].concat();
            state.insert(key, take(u, 12)?);
        }
        let mut rows: Rows = state
            .into_iter()
            .map(|(k, v)| (smt::leaf(&k, &v).key_hash, k, v))
            .collect();
        rows.sort_by_key(|a| a.0);
        let leaves: Vec<Leaf> = rows.iter().map(|(_, k, v)| smt::leaf(k, v)).collect();
        let sizes: Vec<usize> = rows
            .iter()
            .map(|(_, k, v)| entry_bytes(k.len(), v.len()))
            .collect();
        let starts = cut(&sizes, u.int_in_range(1..=120)?);
        let bounds = intervals(&leaves, &starts);
        let mut prover = Prover::new(&leaves);
        let app_hash = prover.root().hash();
        let mut snap = Snap {
            height,
            rows,
            leaves: leaves.clone(),
            meta: Metadata {
                app_hash,
                chunk_hashes: Vec::new(),
                entries: leaves.len() as u64,
                bytes: 0,
            },
            chunks: Vec::new(),
            bounds,
            starts,
        };
        for (i, (lo, hi)) in snap.bounds.iter().enumerate() {
            let c = Chunk {
                height,
                index: i as u32,
                lo: *lo,
                hi: *hi,
                entries: snap.entries(i),
                proof: prover.prove(lo, hi),
            };
            snap.meta.bytes += c
                .entries
                .iter()
                .map(|(k, v)| (k.len() + v.len()) as u64)
                .sum::<u64>();
            snap.chunks.push(c.encode());
        }
        snap.meta.chunk_hashes = snap.chunks.iter().map(|c| chunk_hash(c)).collect();
        Ok(snap)
    }

    /// The entries of chunk `i`.
    fn entries(&self, i: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
        let start = self.starts.get(i).copied().unwrap_or(0);
        let end = self.starts.get(i + 1).copied().unwrap_or(self.rows.len());
        let rows = self.rows.get(start..end).unwrap_or_default();
        rows.iter()
            .map(|(_, k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// The real rows with key hashes in `[lo, hi]`.
    fn rows_in(&self, lo: &Hash, hi: &Hash) -> Rows {
        self.rows
            .iter()
            .filter(|(h, _, _)| lo <= h && h <= hi)
            .cloned()
            .collect()
    }

    /// Checks `bytes` as chunk `index`, the metadata naming them; asserts
    /// determinism and that an accepted chunk holds exactly the real rows
    /// of its interval. Returns whether it was accepted.
    fn judge(&self, index: usize, bytes: &[u8]) -> bool {
        let mut meta = self.meta.clone();
        if let Some(h) = meta.chunk_hashes.get_mut(index) {
            *h = chunk_hash(bytes);
        }
        let lo = self.bounds.get(index).map_or([0; 32], |b| b.0);
        let e = Expect {
            height: self.height,
            meta: &meta,
            index: index as u32,
            lo,
        };
        let got = check::chunk(&e, index as u32, bytes);
        assert_eq!(
            got,
            check::chunk(&e, index as u32, bytes),
            "chunk verdict twice"
        );
        if let Ok(c) = Chunk::decode(bytes) {
            assert_eq!(Chunk::decode(&c.encode()), Ok(c), "chunk re-encoding");
        }
        let Ok((rows, hi)) = got else { return false };
        let want = self.rows_in(&lo, &hi);
        assert!(
            rows == want,
            "chunk {index} accepted with {} rows, the state has {} in [{}, {}]",
            rows.len(),
            want.len(),
            hex::encode(lo),
            hex::encode(hi)
        );
        true
    }
}

/// The real snapshot offered and restored in order.
fn restore(s: &Snap) {
    let (n, hash) = (s.chunks.len() as u32, s.meta.hash());
    let offer = |app: &[u8]| check::offer(s.height, n, &hash, &s.meta.encode(), app);
    assert_eq!(
        offer(&s.meta.app_hash),
        Ok(s.meta.clone()),
        "the real offer"
    );
    let mut other = s.meta.app_hash;
    other[0] ^= 1;
    assert!(
        matches!(offer(&other), Err(RestoreError::Root { .. })),
        "offer under another app hash"
    );
    let mut lo = [0u8; 32];
    let mut all = Vec::new();
    for (i, bytes) in s.chunks.iter().enumerate() {
        let e = Expect {
            height: s.height,
            meta: &s.meta,
            index: i as u32,
            lo,
        };
        let (rows, hi) = match check::chunk(&e, i as u32, bytes) {
            Ok(ok) => ok,
            Err(err) => panic!("real chunk {i} of {n} refused: {err}"),
        };
        assert_eq!(Some(hi), s.bounds.get(i).map(|b| b.1), "chunk {i}'s hi");
        assert!(
            matches!(
                check::chunk(&e, i as u32 + 1, bytes),
                Err(RestoreError::OutOfOrder { .. })
            ),
            "out of order"
        );
        all.extend(rows);
        match add_one(&hi) {
            Some(next) => lo = next,
            None => assert_eq!(i + 1, s.chunks.len(), "hi = f…f before the last chunk"),
        }
    }
    assert!(all == s.rows, "the restored rows are not the state");
}

fn real_case(u: &mut Unstructured) -> AResult<&'static str> {
    let s = Snap::new(u)?;
    restore(&s);
    let t = u.choose_index(s.chunks.len())?;
    let orig = s.chunks.get(t).cloned().unwrap_or_default();
    let bytes = mutate(u, &s, t, &orig)?;
    if bytes == orig {
        return Ok("snapshot_intact");
    }
    Ok(if s.judge(t, &bytes) {
        "snapshot_changed_accepted"
    } else {
        "snapshot_changed_refused"
    })
}

/// A candidate `hi` for chunk `t`: its own, f…f, a leaf's key hash, one
/// past it, or any.
fn some_hi(u: &mut Unstructured, s: &Snap, t: usize) -> AResult<Hash> {
    let leaf = |i: usize| s.leaves.get(i).map_or([0; 32], |l| l.key_hash);
    Ok(match u.int_in_range(0..=4u8)? {
        0 => s.bounds.get(t).map_or([0xff; 32], |b| b.1),
        1 => [0xff; 32],
        2 => leaf(u.choose_index(s.leaves.len().max(1))?),
        3 => add_one(&leaf(u.choose_index(s.leaves.len().max(1))?)).unwrap_or([0xff; 32]),
        _ => u.arbitrary()?,
    })
}

/// Chunk `t` (`orig`) changed as the input says; kind 0 leaves it as is.
fn mutate(u: &mut Unstructured, s: &Snap, t: usize, orig: &[u8]) -> AResult<Vec<u8>> {
    let mut b = orig.to_vec();
    let kind = u.int_in_range(0..=13u8)?;
    match kind {
        0 => return Ok(b),
        1 => {
            let (i, x) = (u.choose_index(b.len())?, u.int_in_range(1..=255u8)?);
            b[i] ^= x;
            return Ok(b);
        }
        2 => {
            return Ok(b
                .get(..u.choose_index(b.len())?)
                .unwrap_or_default()
                .to_vec())
        }
        3 => return Ok([b, take(u, 16)?].concat()),
        _ => {}
    }
    let mut c = Chunk::decode(orig).unwrap_or_else(|e| panic!("a real chunk does not decode: {e}"));
    let n = c.entries.len();
    match kind {
        4 if n > 0 => {
            c.entries.remove(u.choose_index(n)?);
        }
        5 if n > 0 => {
            let i = u.choose_index(n)?;
            let v = take(u, 4)?;
            if let Some(e) = c.entries.get_mut(i) {
                e.1.extend(v);
                e.1.push(1);
            }
        }
        6 => c
            .entries
            .insert(u.int_in_range(0..=n)?, (take(u, 6)?, take(u, 6)?)),
        7 if n > 1 => c.entries.swap(u.choose_index(n)?, u.choose_index(n)?),
        8 => c.lo = some_hi(u, s, t)?,
        9 => (c.height, c.index) = (u.arbitrary()?, u.arbitrary()?),
        10 | 11 => {
            let side = if kind == 10 {
                &mut c.proof.left
            } else {
                &mut c.proof.right
            };
            if !side.is_empty() {
                let i = u.choose_index(side.len())?;
                match u.int_in_range(0..=3u8)? {
                    0 => {
                        side.remove(i);
                    }
                    1 => side[i].depth = u.int_in_range(0..=257u16)?,
                    2 => side[i].node = Node::Internal(u.arbitrary()?),
                    _ => {
                        side[i].node = Node::Leaf(Leaf {
                            key_hash: u.arbitrary()?,
                            value_hash: u.arbitrary()?,
                        })
                    }
                }
            }
        }
        _ => reprove(u, s, t, &mut c)?,
    }
    Ok(c.encode())
}

/// The chunk's `hi`, entries and proof each taken honestly for an interval
/// `[lo, x]` of their own choosing.
fn reprove(u: &mut Unstructured, s: &Snap, t: usize, c: &mut Chunk) -> AResult<()> {
    let (hi, rows_hi, proof_hi) = (some_hi(u, s, t)?, some_hi(u, s, t)?, some_hi(u, s, t)?);
    c.hi = hi;
    c.entries = s
        .rows_in(&c.lo, &rows_hi)
        .into_iter()
        .map(|(_, k, v)| (k, v))
        .collect();
    if c.lo <= proof_hi {
        c.proof = Prover::new(&s.leaves).prove(&c.lo, &proof_hi);
    }
    Ok(())
}

fn raw_chunk(u: &mut Unstructured) -> AResult<&'static str> {
    let s = Snap::new(u)?;
    let t = u.choose_index(s.chunks.len())?;
    s.judge(t, u.bytes(u.len())?);
    Ok("raw_chunk")
}

fn raw_offer(u: &mut Unstructured) -> AResult<&'static str> {
    let (height, chunks): (u64, u32) = (u.arbitrary()?, u.int_in_range(0..=3u32)?);
    let (own_hash, own_app): (bool, bool) = (u.arbitrary()?, u.arbitrary()?);
    let (hash, app) = (take(u, 33)?, take(u, 33)?);
    let metadata = u.bytes(u.len())?;
    let decoded = Metadata::decode(metadata);
    if let Ok(m) = &decoded {
        assert_eq!(
            Metadata::decode(&m.encode()).as_ref(),
            Ok(m),
            "metadata re-encoding"
        );
    }
    let hash = match (&decoded, own_hash) {
        (Ok(m), true) => m.hash().to_vec(),
        _ => hash,
    };
    let app = match (&decoded, own_app) {
        (Ok(m), true) => m.app_hash.to_vec(),
        _ => app,
    };
    let got = check::offer(height, chunks, &hash, metadata, &app);
    assert_eq!(
        got,
        check::offer(height, chunks, &hash, metadata, &app),
        "offer twice"
    );
    if let Ok(m) = got {
        let fits = height > 0 && m.hash().to_vec() == hash && m.app_hash.to_vec() == app;
        assert!(
            fits && m.chunk_hashes.len() == chunks as usize && chunks > 0,
            "offer accepted {m:?}"
        );
        return Ok("raw_offer_accepted");
    }
    Ok("raw_offer")
}

/// A real snapshot's input (mode, height, entries, chunk size) and the
/// snapshot it reads as.
fn real(mode: u8, height: u64, n: usize, limit: u64) -> (Seed, Snap) {
    let mut w = Seed::mode(mode)
        .int(height, 1, 1_000)
        .int(n as u64, 0, MAX_ENTRIES as u64);
    for i in 0..n {
        w = w
            .bytes(&[b'a' + i as u8], 4)
            .bytes(format!("value {i}").as_bytes(), 12);
    }
    let w = w.int(limit, 1, 120);
    let snap = Snap::new(&mut Unstructured::new(&w.0[1..])).expect("a seed's state reads");
    (w, snap)
}

/// The seeds: each named after the path it reaches (checked by the tests).
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let one = |kind: u64| real(0, 7, 5, 120).0.int(kind, 0, 13);
    let (w, s) = real(0, 7, 5, 120);
    let len = s.chunks.first().map_or(1, Vec::len) as u64;
    let flip = w.int(1, 0, 13).int(len / 2, 0, len - 1).int(0x40, 1, 255);
    let cut = real(0, 7, 5, 120).0.int(2, 0, 13).int(len - 1, 0, len - 1);
    let many = |t: u64, kind: u64| real(0, 9, 6, 1).0.int(t, 0, 5).int(kind, 0, 13);
    let left = |s: &Snap| Chunk::decode(&s.chunks[1]).map_or(1, |c| c.proof.left.len()) as u64;
    let (_, s6) = real(0, 9, 6, 1);
    let reprove = |a: u64, b: u64, c: u64| {
        many(1, 12)
            .int(2, 0, 4)
            .int(a, 0, 5)
            .int(2, 0, 4)
            .int(b, 0, 5)
            .int(2, 0, 4)
            .int(c, 0, 5)
    };
    let (w, s) = real(1, 1, 1, 120);
    let offer = Seed::mode(2)
        .raw(&9u64.to_le_bytes())
        .int(1, 0, 3)
        .raw(&[1, 1])
        .bytes(b"", 33)
        .bytes(b"", 33);
    let out = vec![
        ("snapshot_intact_one_chunk", one(0)),
        ("snapshot_intact_many_chunks", many(2, 0)),
        (
            "snapshot_intact_empty_state",
            real(0, 3, 0, 1).0.int(0, 0, 13),
        ),
        ("snapshot_changed_refused_flip", flip),
        ("snapshot_changed_refused_truncated", cut),
        (
            "snapshot_changed_accepted_unknown_field",
            one(3).bytes(&[0x78, 0x01], 16),
        ),
        (
            "snapshot_changed_refused_dropped_entry",
            one(4).int(2, 0, 4),
        ),
        (
            "snapshot_changed_refused_value",
            one(5).int(1, 0, 4).bytes(b"zz", 4),
        ),
        (
            "snapshot_changed_refused_added_entry",
            one(6).int(5, 0, 5).bytes(b"new", 6).bytes(b"v", 6),
        ),
        (
            "snapshot_changed_refused_swapped",
            one(7).int(0, 0, 4).int(3, 0, 4),
        ),
        ("snapshot_changed_refused_lo", many(1, 8).int(0, 0, 4)),
        (
            "snapshot_changed_refused_height",
            one(9).raw(&8u64.to_le_bytes()).raw(&[0; 4]),
        ),
        (
            "snapshot_changed_refused_left_sibling_dropped",
            many(1, 10).int(0, 0, left(&s6) - 1).int(0, 0, 3),
        ),
        (
            "snapshot_changed_refused_sibling_depth",
            many(1, 10)
                .int(0, 0, left(&s6) - 1)
                .int(1, 0, 3)
                .int(3, 0, 257),
        ),
        ("snapshot_changed_accepted_reproved_wider", reprove(3, 3, 3)),
        (
            "snapshot_changed_refused_reproved_missing_leaf",
            reprove(3, 2, 3),
        ),
        (
            "snapshot_changed_refused_reproved_proof_short",
            reprove(3, 3, 2),
        ),
        ("raw_chunk_real", w.int(0, 0, 0).raw(&s.chunks[0])),
        (
            "raw_chunk_garbage",
            real(1, 2, 2, 120).0.raw(b"\x0a\x20not a chunk"),
        ),
        ("raw_offer_accepted_own_hashes", offer.raw(&s.meta.encode())),
        ("raw_offer_garbage", Seed::mode(2).raw(&[0xff; 24])),
    ];
    out.into_iter().map(|(n, s)| (n.to_string(), s.0)).collect()
}

#[cfg(test)]
mod tests;

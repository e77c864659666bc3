//! The in-memory CRC index CRC_DIFF reads: each held record's CRC-32 by
//! datakey, with running summaries of every 1- and 2-byte prefix. The
//! answers near the root, which every round asks, then cost at most 256
//! steps however many records are held; a deeper prefix walks its own
//! records only (about n / 65,536 of them).
//!
//! An owner chooses its keys, so it can grind datakeys under one deep
//! prefix and make that walk long. A walk that finds more than
//! [`HOT`] records keeps what it found (the prefix's summary, or its
//! children's) and keeps it up to date from then on, so each crowded
//! prefix is walked once, not once per query.

use std::collections::{BTreeMap, BTreeSet};

/// A deeper prefix holding more records than this keeps its summaries.
pub const HOT: u64 = 1_024;
/// The most deeper summaries kept (new ones past it are walked each time).
pub const MAX_DEEP: usize = 1 << 20;

/// The CRC summary of one prefix: the XOR of its records' CRC-32s and how
/// many there are.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub crc: u32,
    pub count: u64,
}

impl Summary {
    pub(crate) fn add(&mut self, crc: u32) {
        self.crc ^= crc;
        self.count += 1;
    }

    fn sub(&mut self, crc: u32) {
        self.crc ^= crc;
        self.count = self.count.saturating_sub(1);
    }
}

/// datakey → CRC-32, with the summaries of its 1- and 2-byte prefixes
/// and of the crowded deeper ones.
pub struct CrcIndex {
    crcs: BTreeMap<[u8; 32], u32>,
    one: Vec<Summary>,
    two: Vec<Summary>,
    /// Summaries of prefixes of 3 to 31 bytes: crowded ones, and every
    /// child of a prefix in `kids`.
    deep: BTreeMap<Vec<u8>, Summary>,
    /// Prefixes (2 to 30 bytes) whose children are all in `deep`.
    kids: BTreeSet<Vec<u8>>,
    hot: u64,
}

impl Default for CrcIndex {
    fn default() -> Self {
        CrcIndex::with_hot(HOT)
    }
}

fn slot2(a: u8, b: u8) -> usize {
    usize::from(a) << 8 | usize::from(b)
}

impl CrcIndex {
    /// An empty index keeping the summaries of prefixes past `hot`
    /// records (tests use a low one).
    pub fn with_hot(hot: u64) -> Self {
        CrcIndex {
            crcs: BTreeMap::new(),
            one: vec![Summary::default(); 256],
            two: vec![Summary::default(); 1 << 16],
            deep: BTreeMap::new(),
            kids: BTreeSet::new(),
            hot,
        }
    }

    pub fn len(&self) -> usize {
        self.crcs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.crcs.is_empty()
    }

    /// Sets `dk`'s CRC (replacing the one held).
    pub fn insert(&mut self, dk: [u8; 32], crc: u32) {
        self.remove(&dk);
        self.crcs.insert(dk, crc);
        self.summaries(&dk, true, |s| s.add(crc));
    }

    pub fn remove(&mut self, dk: &[u8; 32]) {
        if let Some(old) = self.crcs.remove(dk) {
            self.summaries(dk, false, |s| s.sub(old));
        }
    }

    /// Applies `f` to every kept summary of a prefix of `dk`; `adding` a
    /// record also starts the summary of a new child of a prefix in
    /// `kids`.
    fn summaries(&mut self, dk: &[u8; 32], adding: bool, f: impl Fn(&mut Summary)) {
        let [a, b, ..] = *dk;
        if let Some(s) = self.one.get_mut(usize::from(a)) {
            f(s);
        }
        if let Some(s) = self.two.get_mut(slot2(a, b)) {
            f(s);
        }
        if self.deep.is_empty() && self.kids.is_empty() {
            return;
        }
        for n in 3..32 {
            let (Some(p), Some(parent)) = (dk.get(..n), dk.get(..n - 1)) else {
                continue;
            };
            if let Some(s) = self.deep.get_mut(p) {
                f(s);
                if s.count == 0 {
                    // an absent child of a `kids` prefix reads as empty
                    self.deep.remove(p);
                }
            } else if adding && self.kids.contains(parent) {
                let mut s = Summary::default();
                f(&mut s);
                self.deep.insert(p.to_vec(), s);
            }
        }
        if !adding {
            self.demote(dk);
        }
    }

    /// Stops keeping the children of each prefix of `dk` that is no
    /// longer crowded (half of `hot` or fewer), so what a validator once
    /// crowded and then emptied does not stay in memory.
    fn demote(&mut self, dk: &[u8; 32]) {
        for n in 2..31 {
            let Some(p) = dk.get(..n) else { continue };
            if !self.kids.contains(p) {
                continue;
            }
            let count = match *p {
                [a, b] => self.two.get(slot2(a, b)).map_or(0, |s| s.count),
                _ => self.deep.get(p).map_or(0, |s| s.count),
            };
            if count > self.hot / 2 {
                continue;
            }
            self.kids.remove(p);
            let gone: Vec<Vec<u8>> = self
                .deep
                .range(p.to_vec()..)
                .take_while(|(k, _)| k.starts_with(p))
                .filter(|(k, _)| k.len() == n + 1)
                .map(|(k, _)| k.clone())
                .collect();
            for k in gone {
                self.deep.remove(&k);
            }
        }
    }

    /// The summary of the records under `prefix` (none for a prefix
    /// longer than a datakey).
    pub fn summary(&mut self, prefix: &[u8]) -> Summary {
        match *prefix {
            [] => self.one.iter().fold(Summary::default(), |acc, s| Summary {
                crc: acc.crc ^ s.crc,
                count: acc.count + s.count,
            }),
            [a] => self.one.get(usize::from(a)).copied().unwrap_or_default(),
            [a, b] => self.two.get(slot2(a, b)).copied().unwrap_or_default(),
            _ if prefix.len() > 32 => Summary::default(),
            _ => {
                if let Some(s) = self.deep.get(prefix) {
                    return *s;
                }
                let parent = prefix.get(..prefix.len() - 1).unwrap_or_default();
                if self.kids.contains(parent) {
                    return Summary::default(); // a child not kept is empty
                }
                let mut s = Summary::default();
                self.walk(prefix, |_, c| s.add(c));
                if s.count > self.hot && prefix.len() < 32 && self.deep.len() < MAX_DEEP {
                    self.deep.insert(prefix.to_vec(), s);
                }
                s
            }
        }
    }

    /// The summaries of `prefix`'s non-empty children (`prefix ‖ i`), in
    /// index order. Empty for a whole datakey.
    pub fn children(&mut self, prefix: &[u8]) -> Vec<(u8, Summary)> {
        let nonempty = |(i, s): (usize, &Summary)| {
            (s.count > 0).then(|| (u8::try_from(i).unwrap_or(u8::MAX), *s))
        };
        match *prefix {
            [] => self.one.iter().enumerate().filter_map(nonempty).collect(),
            [a] => {
                let lo = slot2(a, 0);
                let row = self.two.get(lo..lo + 256).unwrap_or_default();
                row.iter().enumerate().filter_map(nonempty).collect()
            }
            _ if prefix.len() >= 32 => Vec::new(),
            _ if self.kids.contains(prefix) => self.kept_children(prefix),
            _ => {
                let depth = prefix.len();
                let mut out: BTreeMap<u8, Summary> = BTreeMap::new();
                self.walk(prefix, |dk, c| {
                    if let Some(i) = dk.get(depth) {
                        out.entry(*i).or_default().add(c);
                    }
                });
                let total: u64 = out.values().map(|s| s.count).sum();
                let room = self.deep.len() + out.len() < MAX_DEEP;
                if total > self.hot && depth < 31 && room {
                    for (i, s) in &out {
                        self.deep.insert([prefix, &[*i]].concat(), *s);
                    }
                    if depth > 2 {
                        // its own count, for `demote`
                        let own = Summary {
                            crc: out.values().fold(0, |x, s| x ^ s.crc),
                            count: total,
                        };
                        self.deep.insert(prefix.to_vec(), own);
                    }
                    self.kids.insert(prefix.to_vec());
                }
                out.into_iter().collect()
            }
        }
    }

    /// The non-empty children of a prefix in `kids`, from `deep`.
    fn kept_children(&self, prefix: &[u8]) -> Vec<(u8, Summary)> {
        let depth = prefix.len();
        self.deep
            .range(prefix.to_vec()..)
            .take_while(|(k, _)| k.starts_with(prefix))
            .filter(|(k, s)| k.len() == depth + 1 && s.count > 0)
            .filter_map(|(k, s)| Some((*k.get(depth)?, *s)))
            .collect()
    }

    fn walk(&self, prefix: &[u8], mut f: impl FnMut(&[u8; 32], u32)) {
        let p = prefix.get(..prefix.len().min(32)).unwrap_or_default();
        let mut lo = [0u8; 32];
        if let Some(head) = lo.get_mut(..p.len()) {
            head.copy_from_slice(p);
        }
        for (dk, c) in self
            .crcs
            .range(lo..)
            .take_while(|(dk, _)| dk.starts_with(p))
        {
            f(dk, *c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn brute(crcs: &BTreeMap<[u8; 32], u32>, p: &[u8]) -> Summary {
        let mut s = Summary::default();
        for (_, c) in crcs.iter().filter(|(k, _)| k.starts_with(p)) {
            s.add(*c);
        }
        s
    }

    /// Every prefix's summary and children, from the root down to depth
    /// 5, against a brute-force pass.
    fn check_all(ix: &mut CrcIndex, model: &BTreeMap<[u8; 32], u32>) -> Result<(), TestCaseError> {
        let mut prefixes = vec![Vec::new()];
        while let Some(p) = prefixes.pop() {
            prop_assert_eq!(ix.summary(&p), brute(model, &p), "summary of {:?}", p);
            let kids = ix.children(&p);
            for (i, s) in &kids {
                let child = [p.as_slice(), &[*i]].concat();
                prop_assert_eq!(*s, brute(model, &child), "child {:?}", child);
                if child.len() < 6 {
                    prefixes.push(child);
                }
            }
            let n: u64 = kids.iter().map(|(_, s)| s.count).sum();
            prop_assert_eq!(n, brute(model, &p).count);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Through any inserts, replacements, removals and queries, every
        /// summary (kept at depth 0-2, walked or kept deeper, a low
        /// `hot` making crowded prefixes common) is what a brute-force
        /// pass gives, and children add up to their parent.
        #[test]
        fn running_summaries_equal_a_brute_force_pass(
            ops in prop::collection::vec((prop::array::uniform32(0u8..3), any::<u32>(), 0u8..4), 1..160),
        ) {
            let mut ix = CrcIndex::with_hot(2);
            let mut model = BTreeMap::new();
            for (dk, crc, what) in ops {
                match what {
                    0 | 1 => {
                        ix.insert(dk, crc);
                        model.insert(dk, crc);
                    }
                    2 => {
                        ix.remove(&dk);
                        model.remove(&dk);
                    }
                    _ => check_all(&mut ix, &model)?,
                }
            }
            prop_assert_eq!(ix.len(), model.len());
            check_all(&mut ix, &model)?;
        }
    }

    #[test]
    fn a_crowded_prefix_is_walked_once_then_kept() {
        let mut ix = CrcIndex::with_hot(4);
        for i in 0..10u8 {
            let mut dk = [7u8; 32];
            dk[31] = i;
            ix.insert(dk, u32::from(i));
        }
        let deep = [7u8; 5];
        assert_eq!(ix.summary(&deep).count, 10);
        assert_eq!(ix.children(&deep).len(), 1);
        assert!(ix.deep.contains_key(&deep[..]), "kept");
        assert!(ix.kids.contains(&deep[..]));
        let mut dk = [7u8; 32];
        dk[31] = 200;
        ix.insert(dk, 9);
        assert_eq!(ix.summary(&deep).count, 11, "kept up to date");
        ix.remove(&dk);
        assert_eq!(ix.summary(&deep).count, 10);
        assert_eq!(
            ix.summary(&[7u8; 33]),
            Summary::default(),
            "longer than a datakey"
        );
    }

    /// Keys sharing 30 bytes: the kept children of a 30-byte prefix stay
    /// exact through inserts and removals, and once it empties below
    /// half of `hot` nothing of it is kept.
    #[test]
    fn a_prefix_30_bytes_deep_is_kept_exact_then_let_go() {
        let mut ix = CrcIndex::with_hot(2);
        let key = |i: u8, j: u8| {
            let mut dk = [9u8; 32];
            dk[30] = i;
            dk[31] = j;
            dk
        };
        let mut model = BTreeMap::new();
        for (i, j) in [(1, 1), (1, 2), (2, 1), (3, 3)] {
            ix.insert(key(i, j), u32::from(i) << 8 | u32::from(j));
            model.insert(key(i, j), u32::from(i) << 8 | u32::from(j));
        }
        let p30 = [9u8; 30];
        assert_eq!(ix.children(&p30).len(), 3);
        assert!(ix.kids.contains(&p30[..]), "its children are kept");
        ix.insert(key(4, 4), 77);
        model.insert(key(4, 4), 77);
        check_all(&mut ix, &model).unwrap();
        let c = ix.children(&p30);
        assert_eq!(c.len(), 4, "a new child is kept");
        for (i, s) in c {
            assert_eq!(s, brute(&model, &[&p30[..], &[i]].concat()));
        }
        for (i, j) in [(1, 1), (1, 2), (2, 1), (4, 4)] {
            ix.remove(&key(i, j));
            model.remove(&key(i, j));
        }
        assert!(!ix.kids.contains(&p30[..]), "no longer crowded");
        assert!(ix
            .deep
            .keys()
            .all(|k| !k.starts_with(&p30) || k.len() <= 30));
        let child = brute(&model, &[&p30[..], &[3]].concat());
        assert_eq!(ix.children(&p30), vec![(3, child)]);
    }
}

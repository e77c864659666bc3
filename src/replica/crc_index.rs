//! The in-memory CRC index CRC_DIFF reads: each held record's CRC-32 by
//! datakey, with running summaries of every 1- and 2-byte prefix. The
//! answers near the root, which every round asks, then cost at most 256
//! steps however many records are held; a deeper prefix walks its own
//! records only (about n / 65,536 of them).

use std::collections::BTreeMap;

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

/// datakey → CRC-32, with the summaries of its 1- and 2-byte prefixes.
pub struct CrcIndex {
    crcs: BTreeMap<[u8; 32], u32>,
    one: Vec<Summary>,
    two: Vec<Summary>,
}

impl Default for CrcIndex {
    fn default() -> Self {
        CrcIndex {
            crcs: BTreeMap::new(),
            one: vec![Summary::default(); 256],
            two: vec![Summary::default(); 1 << 16],
        }
    }
}

fn slot2(a: u8, b: u8) -> usize {
    usize::from(a) << 8 | usize::from(b)
}

impl CrcIndex {
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
        self.summaries(&dk, |s| s.add(crc));
    }

    pub fn remove(&mut self, dk: &[u8; 32]) {
        if let Some(old) = self.crcs.remove(dk) {
            self.summaries(dk, |s| s.sub(old));
        }
    }

    fn summaries(&mut self, dk: &[u8; 32], f: impl Fn(&mut Summary)) {
        let [a, b, ..] = *dk;
        if let Some(s) = self.one.get_mut(usize::from(a)) {
            f(s);
        }
        if let Some(s) = self.two.get_mut(slot2(a, b)) {
            f(s);
        }
    }

    /// The summary of the records under `prefix` (at most 32 bytes used).
    pub fn summary(&self, prefix: &[u8]) -> Summary {
        match *prefix {
            [] => self.one.iter().fold(Summary::default(), |acc, s| Summary {
                crc: acc.crc ^ s.crc,
                count: acc.count + s.count,
            }),
            [a] => self.one.get(usize::from(a)).copied().unwrap_or_default(),
            [a, b] => self.two.get(slot2(a, b)).copied().unwrap_or_default(),
            _ => {
                let mut s = Summary::default();
                self.walk(prefix, |_, c| s.add(c));
                s
            }
        }
    }

    /// The summaries of `prefix`'s non-empty children (`prefix ‖ i`), in
    /// index order. Empty for a whole datakey.
    pub fn children(&self, prefix: &[u8]) -> Vec<(u8, Summary)> {
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
            _ => {
                let depth = prefix.len();
                let mut out: BTreeMap<u8, Summary> = BTreeMap::new();
                self.walk(prefix, |dk, c| {
                    if let Some(i) = dk.get(depth) {
                        out.entry(*i).or_default().add(c);
                    }
                });
                out.into_iter().collect()
            }
        }
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// After any inserts, replacements and removals, every prefix's
        /// summary (the kept ones at depth 0-2, walked ones deeper) is
        /// what a brute-force pass gives, and its children XOR to it.
        #[test]
        fn running_summaries_equal_a_brute_force_pass(
            ops in prop::collection::vec((prop::array::uniform32(0u8..3), any::<u32>(), any::<bool>()), 1..120),
        ) {
            let mut ix = CrcIndex::default();
            let mut model = BTreeMap::new();
            for (dk, crc, keep) in ops {
                if keep {
                    ix.insert(dk, crc);
                    model.insert(dk, crc);
                } else {
                    ix.remove(&dk);
                    model.remove(&dk);
                }
            }
            prop_assert_eq!(ix.len(), model.len());
            let mut prefixes = vec![Vec::new()];
            while let Some(p) = prefixes.pop() {
                prop_assert_eq!(ix.summary(&p), brute(&model, &p));
                let kids = ix.children(&p);
                for (i, s) in &kids {
                    let child = [p.as_slice(), &[*i]].concat();
                    prop_assert_eq!(*s, brute(&model, &child));
                    if child.len() < 4 {
                        prefixes.push(child);
                    }
                }
                let n: u64 = kids.iter().map(|(_, s)| s.count).sum();
                prop_assert_eq!(n, brute(&model, &p).count);
            }
        }
    }
}

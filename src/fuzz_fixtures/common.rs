//! What the cases and their tests share: the [`Seed`] writer that builds
//! inputs in the order `Unstructured` reads them, and the xorshift
//! [`Noise`] of the "pseudo-random inputs pass" tests.

/// Writes a fuzz input in the order [`Unstructured`] reads it (the seeds
/// of `peer`, `stream_dek` and `snapshot_chunk`).
#[derive(Clone)]
pub(super) struct Seed(pub(super) Vec<u8>);

impl Seed {
    pub(super) fn mode(m: u8) -> Seed {
        Seed(vec![m])
    }

    /// The bytes `int_in_range(lo..=hi)` reads as `v`.
    pub(super) fn int(mut self, v: u64, lo: u64, hi: u64) -> Seed {
        let width = (64 - (hi - lo).leading_zeros() as usize).div_ceil(8);
        self.0
            .extend_from_slice(&(v - lo).to_be_bytes()[8 - width..]);
        self
    }

    pub(super) fn int_i(self, v: i64, lo: i64, hi: i64) -> Seed {
        self.int(v.wrapping_sub(lo) as u64, 0, hi.wrapping_sub(lo) as u64)
    }

    pub(super) fn raw(mut self, b: &[u8]) -> Seed {
        self.0.extend_from_slice(b);
        self
    }

    /// What `take(u, max)` reads as `b`.
    pub(super) fn bytes(self, b: &[u8], max: usize) -> Seed {
        self.int(b.len() as u64, 0, max as u64).raw(b)
    }
}

/// xorshift64 noise: the same stream for the same start, on every run.
#[cfg(test)]
pub(super) struct Noise(u64);

#[cfg(test)]
impl Noise {
    pub(super) fn new(start: u64) -> Noise {
        Noise(start)
    }

    pub(super) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// `n` bytes, the low byte of each step.
    pub(super) fn bytes(&mut self, n: u64) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// `n` pseudo-random inputs of up to `max_len` bytes.
#[cfg(test)]
pub(super) fn random_inputs(n: usize, max_len: u64) -> Vec<Vec<u8>> {
    let mut x = Noise::new(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|_| {
            let len = x.next() % max_len;
            x.bytes(len)
        })
        .collect()
}

/// The tests of a target read as a mode byte then [`arbitrary::Unstructured`]:
/// every seed reaches the path its name starts with (`run` names the path
/// it judged), and 2,000 pseudo-random inputs hold (`case`).
#[cfg(test)]
pub(super) fn check_mode_target(
    seeds: Vec<(String, Vec<u8>)>,
    run: impl Fn(u8, &mut arbitrary::Unstructured) -> arbitrary::Result<&'static str>,
    case: impl Fn(&[u8]),
) {
    for (name, data) in seeds {
        let Some((&mode, rest)) = data.split_first() else {
            panic!("seed {name} is empty");
        };
        let got = run(mode, &mut arbitrary::Unstructured::new(rest));
        assert!(
            matches!(got, Ok(p) if name.starts_with(p)),
            "seed {name} reached {got:?}"
        );
    }
    for data in random_inputs(2_000, 600) {
        case(&data);
    }
}

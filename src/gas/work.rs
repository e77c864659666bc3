//! Counting the cryptographic work a tx causes: signatures checked and
//! curve points decompressed.
//!
//! The sites that do such work call [`count`]. [`measure`] runs a closure
//! and returns what it counted on this thread, so decoding one tx (intrinsic
//! gas) and running one action (execution gas) each see exactly their own
//! work. Nothing in a decode or an action runs on another thread, so the
//! count is a pure function of the tx and the state. A cache in front of the
//! work (the identity-key cache) counts a hit the same as a miss: cached
//! work is charged as if it had been done.

use std::cell::Cell;

/// Cryptographic work, counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub signatures: u64,
    pub points: u64,
}

/// One kind of counted work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An ed25519 signature checked.
    Signature,
    /// An ed25519 public key decompressed (and checked).
    Point,
}

thread_local! {
    static TALLY: Cell<Tally> = const { Cell::new(Tally { signatures: 0, points: 0 }) };
}

/// Counts one unit of `kind` on this thread.
pub fn count(kind: Kind) {
    TALLY.with(|t| {
        let mut v = t.get();
        match kind {
            Kind::Signature => v.signatures += 1,
            Kind::Point => v.points += 1,
        }
        t.set(v);
    });
}

/// The work counted on this thread since the innermost [`measure`] began.
pub fn so_far() -> Tally {
    TALLY.with(|t| t.get())
}

/// Runs `f` and returns its result with the work it counted. Nests: an
/// outer measure sees the inner one's work too.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Tally) {
    let before = TALLY.with(|t| t.replace(Tally::default()));
    let out = f();
    let mine = TALLY.with(|t| t.get());
    TALLY.with(|t| {
        t.set(Tally {
            signatures: before.signatures + mine.signatures,
            points: before.points + mine.points,
        })
    });
    (out, mine)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measure_sees_its_own_work_and_nests() {
        let ((), outer) = measure(|| {
            count(Kind::Point);
            let ((), inner) = measure(|| {
                count(Kind::Signature);
                count(Kind::Point);
            });
            assert_eq!(
                inner,
                Tally {
                    signatures: 1,
                    points: 1
                }
            );
        });
        assert_eq!(
            outer,
            Tally {
                signatures: 1,
                points: 2
            }
        );
        let ((), none) = measure(|| ());
        assert_eq!(none, Tally::default());
    }
}

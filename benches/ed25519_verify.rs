//! Evidence for a proposed change to BRIEF §4 (not a change): ZIP-215
//! verification with `ed25519-consensus` (today's rule, on
//! `curve25519-dalek-ng`, portable 64-bit backend) against `ed25519-zebra` 4
//! (the crate ed25519-consensus was forked from, the same ZIP-215 rule, on
//! `curve25519-dalek` 4 with runtime AVX2 selection).
//!
//! 1. Agreement: both crates must accept and reject exactly the same
//!    signatures. Checked on the 14×14 small-order / non-canonical (A, R)
//!    encodings that ZIP-215's test vectors are built from (s = 0), on valid
//!    signatures, and on signatures with a flipped bit. The bench exits
//!    non-zero on any disagreement.
//! 2. Speed: single verification (key already parsed, as Stave's key cache
//!    holds it) and batch verification at 8, 64 and 1,000 signatures,
//!    interleaved crate by crate so that background load hits both alike.
//!
//! Run: `cargo bench --bench ed25519_verify`.

use std::time::Instant;

use ed25519_dalek::{Signer, SigningKey};

const SMALL_ORDER: [&str; 14] = [
    "0100000000000000000000000000000000000000000000000000000000000000",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0000000000000000000000000000000000000000000000000000000000000080",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",
    "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",
    "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",
    // Non-canonical encodings of small-order points.
    "0100000000000000000000000000000000000000000000000000000000000080",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
];

fn hex32(s: &str) -> [u8; 32] {
    let v = hex::decode(s).unwrap_or_default();
    let mut out = [0u8; 32];
    out.copy_from_slice(&v);
    out
}

fn consensus_ok(key: &[u8; 32], sig: &[u8; 64], msg: &[u8]) -> bool {
    ed25519_consensus::VerificationKey::try_from(*key)
        .and_then(|k| k.verify(&ed25519_consensus::Signature::from(*sig), msg))
        .is_ok()
}

fn zebra_ok(key: &[u8; 32], sig: &[u8; 64], msg: &[u8]) -> bool {
    ed25519_zebra::VerificationKey::try_from(*key)
        .and_then(|k| k.verify(&ed25519_zebra::Signature::from(*sig), msg))
        .is_ok()
}

struct Case {
    key: [u8; 32],
    sig: [u8; 64],
    msg: Vec<u8>,
}

fn valid_cases(n: usize) -> Vec<Case> {
    (0..n)
        .map(|i| {
            let mut seed = [7u8; 32];
            seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
            let sk = SigningKey::from_bytes(&seed);
            let msg = format!("stave/tx/v1 body {i}").into_bytes();
            Case {
                key: sk.verifying_key().to_bytes(),
                sig: sk.sign(&msg).to_bytes(),
                msg,
            }
        })
        .collect()
}

/// Returns the number of cases checked; panics on a disagreement.
fn check_agreement() -> usize {
    let mut checked = 0;
    let mut accepted = 0;
    for a in SMALL_ORDER {
        for r in SMALL_ORDER {
            let key = hex32(a);
            let mut sig = [0u8; 64];
            sig[..32].copy_from_slice(&hex32(r));
            let (c, z) = (
                consensus_ok(&key, &sig, b"Zcash"),
                zebra_ok(&key, &sig, b"Zcash"),
            );
            assert_eq!(c, z, "disagreement on A={a} R={r}");
            accepted += usize::from(c);
            checked += 1;
        }
    }
    for (i, case) in valid_cases(256).into_iter().enumerate() {
        assert!(consensus_ok(&case.key, &case.sig, &case.msg));
        assert!(zebra_ok(&case.key, &case.sig, &case.msg));
        let mut bad = case.sig;
        bad[i % 64] ^= 1 << (i % 8);
        assert_eq!(
            consensus_ok(&case.key, &bad, &case.msg),
            zebra_ok(&case.key, &bad, &case.msg),
            "disagreement on flipped bit {i}"
        );
        checked += 2;
    }
    println!("agreement: {checked} cases, identical verdicts ({accepted} of the 196 small-order cases accepted by both)");
    checked
}

fn time_us<F: FnMut()>(reps: usize, mut f: F) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        f();
    }
    start.elapsed().as_secs_f64() * 1e6 / reps as f64
}

fn single(cases: &[Case]) -> (f64, f64) {
    let ck: Vec<_> = cases
        .iter()
        .map(|c| ed25519_consensus::VerificationKey::try_from(c.key).ok())
        .collect();
    let zk: Vec<_> = cases
        .iter()
        .map(|c| ed25519_zebra::VerificationKey::try_from(c.key).ok())
        .collect();
    let mut i = 0;
    let n = cases.len();
    let c = time_us(n, || {
        let case = &cases[i % n];
        let ok = ck[i % n].as_ref().map(|k| {
            k.verify(&ed25519_consensus::Signature::from(case.sig), &case.msg)
                .is_ok()
        });
        assert_eq!(ok, Some(true));
        i += 1;
    });
    i = 0;
    let z = time_us(n, || {
        let case = &cases[i % n];
        let ok = zk[i % n].as_ref().map(|k| {
            k.verify(&ed25519_zebra::Signature::from(case.sig), &case.msg)
                .is_ok()
        });
        assert_eq!(ok, Some(true));
        i += 1;
    });
    (c, z)
}

/// Mean µs per signature of batch verification with one crate's `batch` module.
macro_rules! batch_us {
    ($krate:ident, $chunks:expr) => {{
        let chunks: &[&[Case]] = $chunks;
        let mut i = 0;
        time_us(chunks.len(), || {
            let mut v = $krate::batch::Verifier::new();
            for case in chunks[i % chunks.len()] {
                v.queue((case.key.into(), case.sig.into(), &case.msg[..]));
            }
            assert!(v.verify(rand::thread_rng()).is_ok());
            i += 1;
        })
    }};
}

fn batch(cases: &[Case], size: usize) -> (f64, f64) {
    let chunks: Vec<&[Case]> = cases.chunks(size).collect();
    let c = batch_us!(ed25519_consensus, &chunks);
    let z = batch_us!(ed25519_zebra, &chunks);
    (c / size as f64, z / size as f64)
}

fn main() {
    check_agreement();
    let cases = valid_cases(4000);
    println!("| what | ed25519-consensus µs/sig | ed25519-zebra µs/sig | speed-up |");
    println!("|---|---:|---:|---:|");
    for round in 0..3 {
        let (c, z) = single(&cases);
        println!(
            "| single verify (round {round}) | {c:.1} | {z:.1} | {:.2}× |",
            c / z
        );
        for size in [8, 64, 1000] {
            let (c, z) = batch(&cases, size);
            println!(
                "| batch of {size} (round {round}) | {c:.1} | {z:.1} | {:.2}× |",
                c / z
            );
        }
    }
}

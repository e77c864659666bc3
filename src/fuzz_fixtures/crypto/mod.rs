//! The `stream_dek` target: the STREAM decryptor ([`stream::decrypt`],
//! [`stream::check_head`]), the ranged opener ([`chunks::Opener`]) and the
//! DEK unwrap ([`wrap::unwrap_dek`]).
//!
//! Input: a mode byte, then bytes read with [`Unstructured`].
//! - **0, stream.** A plaintext (a unit of up to 32 bytes repeated to
//!   `chunks * CHUNK + delta` bytes, at most ~3 chunks) and a nonce prefix
//!   are sealed under a fixed DEK; then 0–3 mutations (flip a byte,
//!   truncate, append, drop / duplicate / swap a sealed chunk).
//! - **1, wrap.** A DEK and a cid wrapped to a fixed X25519 key with an
//!   input ephemeral secret; then 0–2 mutations of the ciphertext, the
//!   ephemeral key (a flipped byte or bit 255, a low-order point, any
//!   bytes), the cid or the holder's secret.
//! - **2, 3.** Raw bytes: a blob to decrypt, check and open at any index;
//!   an ephemeral key, ciphertext and cid to unwrap.
//!
//! # The oracle
//! - An unchanged blob decrypts to exactly the plaintext, its head checks,
//!   and each chunk opens alone at its span (and not with the other last
//!   flag). A changed blob never decrypts; what `decrypt` wrote before
//!   failing is whole chunks of the plaintext from before the first changed
//!   byte (nothing is written before it authenticates); `check_head`
//!   passes only on the original head; a chunk opens only if it is an
//!   original chunk at its own place.
//! - Unwrap succeeds iff nothing changed, with the same DEK; a low-order
//!   ephemeral key is refused as such. Raw inputs never panic and give the
//!   same verdict twice.

use arbitrary::{Result as AResult, Unstructured};
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

use super::common::Seed;
use crate::crypto::chunks::{self, Opener, SEALED_CHUNK};
use crate::crypto::stream::{self, CHUNK, HEADER_LEN};
use crate::crypto::{check_x25519_public, wrap, CryptoError, Dek};

/// Most whole chunks of a plaintext (plus up to 300 bytes).
const MAX_CHUNKS: usize = 3;
const DEK: [u8; 32] = [0x42; 32];
const HOLDER: [u8; 32] = [0x11; 32];

/// Low-order X25519 u-coordinates: 0, 1, the two of order 8, p-1, p, p+1.
const LOW: [&str; 7] = [
    "0000000000000000000000000000000000000000000000000000000000000000",
    "0100000000000000000000000000000000000000000000000000000000000000",
    "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
    "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
    "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
];

/// Runs the oracle of the mode `data[0]` selects.
pub fn crypto_case(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let _ = run(mode, &mut Unstructured::new(rest));
}

/// The case; names the path it judged (the seeds' tests check it).
fn run(mode: u8, u: &mut Unstructured) -> AResult<&'static str> {
    match mode % 4 {
        0 => stream_case(u),
        1 => wrap_case(u),
        2 => raw_stream(u),
        _ => raw_wrap(u),
    }
}

fn dek() -> Dek {
    Zeroizing::new(DEK)
}

/// Up to `max` bytes: a length, then that many (fewer if the input ends).
fn take(u: &mut Unstructured, max: usize) -> AResult<Vec<u8>> {
    let n = u.int_in_range(0..=max)?.min(u.len());
    Ok(u.bytes(n)?.to_vec())
}

fn low_order(i: usize, high_bit: bool) -> [u8; 32] {
    let mut k = [0u8; 32];
    let hex = LOW.get(i % LOW.len()).copied().unwrap_or(LOW[0]);
    hex::decode_to_slice(hex, &mut k).expect("the low-order table is 32-byte hex");
    k[31] |= u8::from(high_bit) << 7;
    k
}

fn plaintext(u: &mut Unstructured) -> AResult<Vec<u8>> {
    let unit = take(u, 32)?;
    let chunks = u.int_in_range(0..=MAX_CHUNKS)?;
    let delta = u.int_in_range(-3i64..=300)?;
    let len = ((chunks * CHUNK) as i64 + delta).max(0) as usize;
    let unit = if unit.is_empty() { vec![0x5a] } else { unit };
    Ok(unit.iter().copied().cycle().take(len).collect())
}

/// The header and the sealed chunks of `blob`.
fn pieces(blob: &[u8]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let (head, body) = blob.split_at(blob.len().min(HEADER_LEN));
    let chunks = body.chunks(SEALED_CHUNK as usize).map(<[u8]>::to_vec);
    (head.to_vec(), chunks.collect())
}

fn mutate(u: &mut Unstructured, blob: &mut Vec<u8>) -> AResult<()> {
    let n = blob.len();
    let (head, mut cs) = pieces(blob);
    match u.int_in_range(0..=5u8)? {
        0 => {
            let i = u.choose_index(n)?;
            let x = u.int_in_range(1..=255u8)?;
            if let Some(b) = blob.get_mut(i) {
                *b ^= x;
            }
            return Ok(());
        }
        1 => {
            blob.truncate(u.int_in_range(0..=n.saturating_sub(1))?);
            return Ok(());
        }
        2 => {
            let mut more = take(u, 40)?;
            more.push(0);
            blob.extend(more);
            return Ok(());
        }
        3 if !cs.is_empty() => {
            cs.remove(u.choose_index(cs.len())?);
        }
        4 if !cs.is_empty() => {
            let i = u.choose_index(cs.len())?;
            let c = cs.get(i).cloned().unwrap_or_default();
            cs.insert(u.int_in_range(0..=cs.len())?, c);
        }
        _ if cs.len() > 1 => {
            let (i, j) = (u.choose_index(cs.len())?, u.choose_index(cs.len())?);
            cs.swap(i, j);
        }
        _ => {}
    }
    *blob = [head, cs.concat()].concat();
    Ok(())
}

fn stream_case(u: &mut Unstructured) -> AResult<&'static str> {
    let plain = plaintext(u)?;
    let prefix: [u8; 7] = u.arbitrary()?;
    let mut sealed = Vec::new();
    stream::encrypt_with_prefix(&dek(), &prefix, plain.as_slice(), &mut sealed)
        .expect("sealing into memory");
    let want = stream::encrypted_len(plain.len() as u64);
    assert_eq!(sealed.len() as u64, want, "encrypted_len disagrees");
    let mut blob = sealed.clone();
    for _ in 0..u.int_in_range(0..=3u8)? {
        if mutate(u, &mut blob).is_err() {
            break;
        }
    }
    if blob == sealed {
        intact(&plain, &sealed);
        Ok("stream_intact")
    } else {
        tampered(&plain, &sealed, &blob);
        Ok("stream_changed")
    }
}

/// The plaintext bytes of chunk `i`.
fn plain_span(plain: &[u8], i: u64) -> &[u8] {
    let s = (i as usize).saturating_mul(CHUNK).min(plain.len());
    plain
        .get(s..s.saturating_add(CHUNK).min(plain.len()))
        .unwrap_or_default()
}

fn head_of(blob: &[u8]) -> &[u8] {
    let n = stream::head_len(blob.len() as u64) as usize;
    blob.get(..n).unwrap_or(blob)
}

fn intact(plain: &[u8], sealed: &[u8]) {
    let mut out = Vec::new();
    let r = stream::decrypt(&dek(), sealed, &mut out);
    assert!(
        r.is_ok(),
        "an intact blob of {} bytes fails: {r:?}",
        plain.len()
    );
    assert!(
        out == plain && r.ok() == Some(plain.len() as u64),
        "intact blob decrypts to other bytes"
    );
    let total = sealed.len() as u64;
    let head = head_of(sealed);
    let r = stream::check_head(&dek(), head, total);
    assert!(r.is_ok(), "an intact head fails check_head: {r:?}");
    let other = Zeroizing::new([0x43; 32]);
    assert!(
        stream::check_head(&other, head, total).is_err(),
        "another DEK passes check_head"
    );
    let opener = Opener::new(&dek(), sealed.get(..HEADER_LEN).unwrap_or_default())
        .unwrap_or_else(|e| panic!("an intact header does not make an opener: {e}"));
    let k = chunks::count(total);
    assert_eq!(
        k,
        (plain.len().div_ceil(CHUNK).max(1)) as u64,
        "chunk count"
    );
    for i in 0..k {
        let (s, e) = chunks::span(i, total);
        assert_eq!(chunks::starting_at(s, total), Some(i), "chunk {i} start");
        let piece = sealed.get(s as usize..e as usize).unwrap_or_default();
        let got = opener.open(i, i + 1 == k, piece);
        assert!(
            got.as_deref().ok() == Some(plain_span(plain, i)),
            "chunk {i} of {k} does not open to its plaintext: {got:?}"
        );
        assert!(
            opener.open(i, i + 1 != k, piece).is_err(),
            "chunk {i} opens with the wrong last flag"
        );
    }
}

fn tampered(plain: &[u8], sealed: &[u8], blob: &[u8]) {
    let mut out = Vec::new();
    let r = stream::decrypt(&dek(), blob, &mut out);
    assert!(
        r.is_err(),
        "a changed blob decrypts ({} bytes out)",
        out.len()
    );
    let first = sealed
        .iter()
        .zip(blob)
        .position(|(a, b)| a != b)
        .unwrap_or(sealed.len().min(blob.len()));
    let chunk = first.saturating_sub(HEADER_LEN) / SEALED_CHUNK as usize;
    assert!(
        out.len() % CHUNK == 0 && out.len() <= chunk * CHUNK && plain.starts_with(&out),
        "decrypt wrote {} bytes before failing, first change at byte {first} (chunk {chunk})",
        out.len()
    );
    let (total, head) = (blob.len() as u64, head_of(blob));
    if stream::check_head(&dek(), head, total).is_ok() {
        assert_eq!(
            head,
            head_of(sealed),
            "check_head passes a changed head or last flag"
        );
    }
    let Ok(opener) = Opener::new(&dek(), blob.get(..HEADER_LEN).unwrap_or_default()) else {
        return;
    };
    let (k, k0) = (chunks::count(total), chunks::count(sealed.len() as u64));
    for i in 0..k.min(MAX_CHUNKS as u64 + 2) {
        let (s, e) = chunks::span(i, total);
        let piece = blob.get(s as usize..e as usize).unwrap_or_default();
        if let Ok(p) = opener.open(i, i + 1 == k, piece) {
            let (s0, e0) = chunks::span(i, sealed.len() as u64);
            let orig = sealed.get(s0 as usize..e0 as usize).unwrap_or_default();
            assert!(
                blob.get(..HEADER_LEN) == sealed.get(..HEADER_LEN)
                    && piece == orig
                    && (i + 1 == k) == (i + 1 == k0)
                    && p == plain_span(plain, i),
                "chunk {i} of a changed blob opens but is not original chunk {i} of {k0}"
            );
        }
    }
}

fn wrap_case(u: &mut Unstructured) -> AResult<&'static str> {
    let public = PublicKey::from(&StaticSecret::from(HOLDER)).to_bytes();
    let dek: Dek = Zeroizing::new(u.arbitrary()?);
    let cid = take(u, 64)?;
    let eph = StaticSecret::from(u.arbitrary::<[u8; 32]>()?);
    let w = wrap::wrap_with_ephemeral(&dek, &public, &cid, &eph)
        .unwrap_or_else(|e| panic!("wrapping to a good key fails: {e}"));
    assert_eq!(w.ciphertext.len(), wrap::WRAPPED_LEN, "wrapped length");
    let (mut m, mut mcid, mut secret) = (w.clone(), cid.clone(), HOLDER);
    for _ in 0..u.int_in_range(0..=2u8)? {
        if mutate_wrap(u, &mut m, &mut mcid, &mut secret).is_err() {
            break;
        }
    }
    let holder = StaticSecret::from(secret);
    let same = m == w && mcid == cid && PublicKey::from(&holder).to_bytes() == public;
    let got = wrap::unwrap_dek(&holder, &m, &mcid);
    match &got {
        Ok(d) => assert!(
            same && **d == *dek,
            "a changed wrap unwraps: {m:?} cid {mcid:?}"
        ),
        Err(e) => assert!(!same, "an intact wrap fails: {e}"),
    }
    let low = (0..LOW.len()).any(|i| {
        [false, true]
            .iter()
            .any(|h| low_order(i, *h) == m.ephemeral_pubkey)
    });
    if low && m.ciphertext.len() == wrap::WRAPPED_LEN {
        assert!(
            matches!(got, Err(CryptoError::LowOrderKey { .. })),
            "a low-order ephemeral key: {got:?}"
        );
        return Ok("wrap_low_order");
    }
    Ok(if same { "wrap_intact" } else { "wrap_changed" })
}

fn mutate_wrap(
    u: &mut Unstructured,
    w: &mut wrap::WrappedDek,
    cid: &mut Vec<u8>,
    secret: &mut [u8; 32],
) -> AResult<()> {
    let e = &mut w.ephemeral_pubkey;
    match u.int_in_range(0..=7u8)? {
        0 => {
            let i = u.choose_index(w.ciphertext.len().max(1))?;
            let x = u.int_in_range(1..=255u8)?;
            if let Some(b) = w.ciphertext.get_mut(i) {
                *b ^= x;
            }
        }
        1 => w.ciphertext.resize(u.int_in_range(0..=64)?, 0),
        2 => {
            let (i, x) = (u.choose_index(32)?, u.int_in_range(1..=255u8)?);
            e[i] ^= x;
        }
        3 => *e = low_order(u.choose_index(LOW.len())?, u.arbitrary()?),
        4 => *e = u.arbitrary()?,
        5 => e[31] ^= 0x80,
        6 => match cid.len() {
            0 => cid.push(u.arbitrary()?),
            n => {
                let (i, x) = (u.choose_index(n)?, u.int_in_range(1..=255u8)?);
                cid[i] ^= x;
            }
        },
        _ => *secret = u.arbitrary()?,
    }
    Ok(())
}

fn raw_stream(u: &mut Unstructured) -> AResult<&'static str> {
    let (claim, index, last): (u64, u64, bool) = (u.arbitrary()?, u.arbitrary()?, u.arbitrary()?);
    let blob = u.bytes(u.len())?;
    let mut out = Vec::new();
    match stream::decrypt(&dek(), blob, &mut out) {
        Ok(n) => assert_eq!(n, out.len() as u64, "decrypt's count"),
        Err(_) => assert!(
            out.len() % CHUNK == 0,
            "a failed decrypt wrote a partial chunk"
        ),
    }
    for total in [claim, blob.len() as u64] {
        let (s, e) = chunks::span(index, total);
        assert!(s <= e && e <= total, "span {s}..{e} of {total}");
        let _ = (chunks::count(total), chunks::starting_at(index, total));
        let a = stream::check_head(&dek(), head_of(blob), total).is_ok();
        assert_eq!(
            a,
            stream::check_head(&dek(), head_of(blob), total).is_ok(),
            "check_head twice"
        );
    }
    if let Ok(o) = Opener::new(&dek(), blob.get(..HEADER_LEN).unwrap_or(blob)) {
        let piece = blob.get(HEADER_LEN..).unwrap_or_default();
        let r = o.open(index, last, piece).ok();
        assert_eq!(r, o.open(index, last, piece).ok(), "open twice");
    }
    Ok("raw_stream")
}

fn raw_wrap(u: &mut Unstructured) -> AResult<&'static str> {
    let secret = StaticSecret::from(if u.arbitrary()? {
        HOLDER
    } else {
        u.arbitrary()?
    });
    let w = wrap::WrappedDek {
        ephemeral_pubkey: u.arbitrary()?,
        ciphertext: take(u, 64)?,
    };
    let cid = take(u, 64)?;
    let go = || {
        wrap::unwrap_dek(&secret, &w, &cid)
            .map(|d| *d)
            .map_err(|e| e.to_string())
    };
    let first = go();
    assert_eq!(first, go(), "unwrap twice");
    if check_x25519_public(&w.ephemeral_pubkey).is_err() {
        assert!(first.is_err(), "a low-order ephemeral key unwraps");
    }
    Ok("raw_wrap")
}

/// The seeds: each named after the path it reaches (checked by the tests).
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let sealed = |unit: &[u8], chunks: u64, delta: i64| {
        let n = stream::encrypted_len(((chunks as i64) * CHUNK as i64 + delta).max(0) as u64);
        let w = Seed::mode(0)
            .bytes(unit, 32)
            .int(chunks, 0, MAX_CHUNKS as u64);
        (w.int_i(delta, -3, 300).raw(&[7; 7]), n - 1)
    };
    let (c3, _) = sealed(b"stave", 3, 5);
    let (c1, _) = sealed(b"x", 1, 0);
    let (c0, _) = sealed(b"", 0, 0);
    let (f, n) = sealed(b"ab", 2, 1);
    let flip = f
        .int(1, 0, 3)
        .int(0, 0, 5)
        .int(n / 2, 0, n)
        .int(0x80, 1, 255);
    let (t, n) = sealed(b"ab", 2, 0);
    let cut = t
        .int(1, 0, 3)
        .int(1, 0, 5)
        .int(HEADER_LEN as u64 + SEALED_CHUNK, 0, n);
    let (a, _) = sealed(b"q", 0, 10);
    let append = a.int(1, 0, 3).int(2, 0, 5).bytes(b"tail", 40);
    let (d, _) = sealed(b"cd", 2, 9);
    let drop = d.int(1, 0, 3).int(3, 0, 5).int(1, 0, 2);
    let (d, _) = sealed(b"cd", 1, 9);
    let dup = d.int(1, 0, 3).int(4, 0, 5).int(0, 0, 1).int(1, 0, 2);
    let (d, _) = sealed(b"ef", 2, 9);
    let swap = d.int(1, 0, 3).int(5, 0, 5).int(0, 0, 2).int(2, 0, 2);
    let wrapped = |m: u64| {
        Seed::mode(1)
            .raw(&[9; 32])
            .bytes(b"bafkcid", 64)
            .raw(&[3; 32])
            .int(m, 0, 2)
    };
    let mut out = vec![
        ("stream_intact_3_chunks", c3.int(0, 0, 3)),
        ("stream_intact_one_full_chunk", c1.int(0, 0, 3)),
        ("stream_intact_empty", c0.int(0, 0, 3)),
        ("stream_changed_flip", flip),
        ("stream_changed_truncated_at_chunk", cut),
        ("stream_changed_appended", append),
        ("stream_changed_dropped_chunk", drop),
        ("stream_changed_duplicated_chunk", dup),
        ("stream_changed_swapped_chunks", swap),
        ("wrap_intact", wrapped(0)),
        (
            "wrap_changed_ciphertext",
            wrapped(1).int(0, 0, 7).int(5, 0, 47).int(1, 1, 255),
        ),
        ("wrap_changed_high_bit", wrapped(1).int(5, 0, 7)),
        (
            "wrap_changed_cid",
            wrapped(1).int(6, 0, 7).int(0, 0, 6).int(4, 1, 255),
        ),
        (
            "wrap_changed_holder",
            wrapped(1).int(7, 0, 7).raw(&[0x12; 32]),
        ),
        (
            "raw_stream_header",
            Seed::mode(2).raw(&[0; 17]).raw(b"STV1\0\0\0\0\0\0\0"),
        ),
        (
            "raw_wrap_zero_key",
            Seed::mode(3).raw(&[1]).raw(&[0; 32]).bytes(&[0; 48], 64),
        ),
    ];
    for (name, i) in [
        ("wrap_low_order_zero", 0),
        ("wrap_low_order_order8", 2),
        ("wrap_low_order_p_minus_1", 4),
    ] {
        out.push((name, wrapped(1).int(3, 0, 7).int(i, 0, 6).raw(&[1])));
    }
    out.into_iter().map(|(n, s)| (n.to_string(), s.0)).collect()
}

#[cfg(test)]
mod tests;

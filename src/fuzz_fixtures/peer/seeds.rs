//! The `peer` target's seeds and tests.

use super::*;

/// What `edited` reads as flipping the bytes at `flips` of a `len`-byte
/// message.
fn flips(w: Seed, len: usize, flips: &[usize]) -> Seed {
    let mut w = w.int(flips.len() as u64, 0, 3);
    for &i in flips {
        w = w
            .int(i as u64, 0, len as u64)
            .int(0, 0, 3)
            .int(0x10, 1, 255);
    }
    w
}

/// The seeds: each named after the path it reaches (checked by the tests).
pub fn seeds() -> Vec<(String, Vec<u8>)> {
    let of = |w: &Seed, skip: usize| w.0.get(skip..).unwrap_or_default().to_vec();
    let none = || Unstructured::new(&[]);
    let (_, p) = build_peer(&mut none()).expect("a default peer request");
    let (m, v, _) = build_record(&mut none()).expect("a default record");
    let (ac, _) = build_access(&mut none()).expect("a default access request");
    let it = build_intent(&mut none()).expect("a default intent");
    let (an, ..) = build_answer(&mut none()).expect("a default answer");
    let raw_seed = |which: u64, b: Vec<u8>| Seed::mode(0).int(which, 0, 6).raw(&b);
    let peer = Seed::mode(1)
        .bytes(b"bafy", 40)
        .int(1, 0, 4)
        .int(25_000, 0, 60_000);
    let plen = build_peer(&mut Unstructured::new(&of(&peer, 1))).map_or(0, |p| p.1.encoded_len());
    let ops = |w: Seed, two: bool| {
        let r = |w: Seed| if two { w.int(1, 0, 1) } else { w };
        let w = r(w.int(3, 0, 8))
            .int(5, 0, 50)
            .bytes(b"f", 3)
            .int(3, 0, 10)
            .bytes(b"v", 3);
        let w = r(w).int(3, 0, 50).bytes(b"m", 3).int(5, 0, 10);
        r(w).int(1, 0, 50)
            .bytes(b"", 3)
            .int(9, 0, 10)
            .raw(&5i64.to_le_bytes())
    };
    let rec = ops(
        Seed::mode(3).int(0, 0, 2).bytes(b"1", 8).int(10, 0, 1_000),
        false,
    )
    .int(0, 0, 1)
    .int(7, 0, 1_000);
    let built = build_record(&mut Unstructured::new(&of(&rec, 1))).expect("the seed record");
    let (mlen, vlen) = (built.0.encoded_len(), built.2.len());
    let val = ops(
        Seed::mode(2).raw(&[3; 32]).int(1, 0, 2).bytes(b"key", 8),
        true,
    );
    let acc = Seed::mode(4)
        .raw(&[1, 1])
        .int(2, 0, 3)
        .bytes(b"t", 3)
        .bytes(b"pre", 4)
        .bytes(b"u", 3)
        .bytes(b"", 4);
    let acc = acc
        .int(59_000, 0, 120_000)
        .raw(&[6; 16])
        .bytes(b"cid", 40)
        .raw(&[8; 32])
        .int(1, 0, 3)
        .int(4, 0, 6);
    let alen = build_access(&mut Unstructured::new(&of(&acc, 2))).map_or(0, |a| a.0.encoded_len());
    let int = Seed::mode(4)
        .raw(&[0])
        .int(61_000, 0, 120_000)
        .raw(&[6; 16])
        .int(2, 1, 3)
        .int(1, 1, 3)
        .bytes(b"g1", 4);
    let int = int.raw(&[8; 32]).int(1_000, 1, u64::MAX).int(2, 0, 2);
    let ilen = build_intent(&mut Unstructured::new(&of(&int, 2))).map_or(0, |i| i.encoded_len());
    let ans = Seed::mode(5)
        .bytes(b"bafy", 40)
        .bytes(b"req", 40)
        .raw(&[1])
        .raw(&77u64.to_le_bytes());
    let nlen = build_answer(&mut Unstructured::new(&of(&ans, 1))).map_or(0, |a| a.0.encoded_len());
    let out = vec![
        ("raw_peer_request", raw_seed(0, p.encode_to_vec())),
        ("raw_record_value", raw_seed(1, v.encode())),
        (
            "raw_entry_state",
            raw_seed(2, codec::entry_to_pb(&v.entry).encode_to_vec()),
        ),
        ("raw_record_meta", raw_seed(3, m.encode_to_vec())),
        ("raw_access_request", raw_seed(4, ac.encode_to_vec())),
        ("raw_intent", raw_seed(5, it.encode_to_vec())),
        ("raw_answer", raw_seed(6, an.encode_to_vec())),
        ("peer_request_intact", flips(peer.clone(), plen, &[])),
        (
            "peer_request_changed_signature",
            flips(peer.clone(), plen, &[plen - 1]),
        ),
        ("peer_request_changed_body", flips(peer, plen, &[plen / 2])),
        ("record_value", flips(flips(val, 0, &[]), 0, &[])),
        (
            "record_intact",
            flips(flips(rec.clone(), mlen, &[]), vlen, &[]),
        ),
        (
            "record_changed_pow_nonce",
            flips(flips(rec.clone(), mlen, &[mlen - 3]), vlen, &[]),
        ),
        (
            "record_changed_ts",
            flips(flips(rec.clone(), mlen, &[mlen - 123]), vlen, &[]),
        ),
        (
            "record_changed_value",
            flips(flips(rec, mlen, &[]), vlen, &[vlen / 2]),
        ),
        ("access_intact", flips(acc.clone(), alen, &[])),
        ("access_changed", flips(acc, alen, &[alen / 2])),
        ("intent_intact", flips(int.clone(), ilen, &[])),
        ("intent_changed", flips(int, ilen, &[ilen / 3, ilen - 1])),
        ("answer_intact", flips(ans.clone(), nlen, &[])),
        ("answer_changed", flips(ans, nlen, &[nlen - 1])),
    ];
    out.into_iter().map(|(n, s)| (n.to_string(), s.0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_reach_their_paths_and_random_inputs_hold() {
        crate::fuzz_fixtures::common::check_mode_target(seeds(), run, peer_case);
    }
}

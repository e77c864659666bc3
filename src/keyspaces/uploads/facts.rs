//! The manifest's content checks: every cid (flac, encrypted, images) in
//! its canonical 36-byte form, the audio facts, and the images with their
//! sizes.

use std::collections::BTreeSet;

use crate::keyspaces::rights::{cap, hx, RightsError, RightsParams};
use crate::media::cid::is_raw_cid;
use crate::proto::rights as pb;
use crate::tx::TxError;

fn bad(s: String) -> TxError {
    RightsError::InvalidManifest(s).into()
}

/// Exactly the binary form of a raw sha2-256 CIDv1: `01 55 12 20 ‖ digest`.
pub(super) fn check_raw_cid(what: &str, cid: &[u8]) -> Result<(), TxError> {
    if is_raw_cid(cid) {
        return Ok(());
    }
    // at most 40 bytes of it in the log: the sender chose its length
    let shown = match cid.get(..40) {
        Some(head) if cid.len() > 40 => format!("{}…", hx(head)),
        _ => hx(cid),
    };
    Err(bad(format!(
        "{what} {shown} ({} bytes) is not a raw sha2-256 CIDv1 (36 bytes: 01 55 12 20 and the digest)",
        cid.len()
    )))
}

/// The audio facts are present and describe a FLAC the encoder can write.
pub(super) fn check_facts(f: Option<&pb::AudioFacts>) -> Result<(), TxError> {
    let f = f.ok_or_else(|| bad("the manifest has no audio facts".into()))?;
    let out_of =
        |what: &str, v: u64, range: &str| bad(format!("facts.{what} {v} is outside {range}"));
    if !(1..=655_350).contains(&f.sample_rate) {
        return Err(out_of("sample_rate", f.sample_rate.into(), "1..=655350"));
    }
    if !(1..=8).contains(&f.channels) {
        return Err(out_of("channels", f.channels.into(), "1..=8"));
    }
    if !(4..=32).contains(&f.bits_per_sample) {
        return Err(out_of(
            "bits_per_sample",
            f.bits_per_sample.into(),
            "4..=32",
        ));
    }
    if f.frames == 0 {
        return Err(bad("facts.frames is 0".into()));
    }
    let duration = f.frames.saturating_mul(1000) / u64::from(f.sample_rate);
    if f.duration_ms != duration {
        return Err(bad(format!(
            "facts.duration_ms is {}; {} frames at {} Hz make {duration}",
            f.duration_ms, f.frames, f.sample_rate
        )));
    }
    let codec = f.source_codec.as_bytes();
    let allowed = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_';
    if codec.is_empty() || codec.len() > 32 || !codec.iter().all(allowed) {
        return Err(bad(format!(
            "facts.source_codec {:?} is not 1..=32 bytes of [a-z0-9_]",
            f.source_codec
        )));
    }
    Ok(())
}

/// Up to `max_image_cids` distinct image cids, none of them the audio's,
/// each with a size in 1..=`max_image_bytes`.
pub(super) fn check_images(m: &pb::UploadManifest, p: &RightsParams) -> Result<(), TxError> {
    cap("image_cids", m.image_cids.len(), p.max_image_cids)?;
    if m.image_sizes.len() != m.image_cids.len() {
        return Err(bad(format!(
            "{} image_sizes for {} image_cids",
            m.image_sizes.len(),
            m.image_cids.len()
        )));
    }
    let mut seen = BTreeSet::new();
    for (c, size) in m.image_cids.iter().zip(&m.image_sizes) {
        check_raw_cid("image cid", c)?;
        if !seen.insert(c.as_slice()) || *c == m.flac_cid || *c == m.encrypted_cid {
            return Err(bad(format!(
                "image cid {} is named twice, or is the audio's",
                hx(c)
            )));
        }
        if *size == 0 || *size > p.max_image_bytes {
            return Err(bad(format!(
                "image {} is {size} bytes, outside 1..={} (rights.max_image_bytes)",
                hx(c),
                p.max_image_bytes
            )));
        }
    }
    Ok(())
}

/// The bytes each replica stores: the encrypted blob and every image.
pub fn stored_bytes(m: &pb::UploadManifest) -> u64 {
    m.image_sizes
        .iter()
        .fold(m.encrypted_size, |acc, s| acc.saturating_add(*s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::cid::raw_cid;

    fn facts() -> pb::AudioFacts {
        pb::AudioFacts {
            sample_rate: 44_100,
            channels: 2,
            bits_per_sample: 16,
            frames: 44_100 * 61 + 7,
            duration_ms: 61_000,
            source_codec: "pcm_s16le".into(),
            lossless_source: true,
        }
    }

    #[test]
    fn only_the_36_byte_form_is_a_cid() {
        assert!(check_raw_cid("c", &raw_cid(b"x")).is_ok());
        let mut v1_dag_pb = raw_cid(b"x").to_vec();
        v1_dag_pb[1] = 0x70;
        for c in [
            vec![],
            b"bafk-flac".to_vec(),
            raw_cid(b"x")[..35].to_vec(),
            [raw_cid(b"x").as_slice(), &[0]].concat(),
            v1_dag_pb,
        ] {
            assert!(check_raw_cid("c", &c).is_err(), "{}", hx(&c));
        }
    }

    #[test]
    fn facts_must_be_present_consistent_and_plain() {
        assert!(check_facts(Some(&facts())).is_ok());
        assert!(check_facts(None).is_err());
        type Edit = fn(&mut pb::AudioFacts);
        let edits: [Edit; 9] = [
            |f| f.sample_rate = 0,
            |f| f.sample_rate = 700_000,
            |f| f.channels = 9,
            |f| f.bits_per_sample = 3,
            |f| f.frames = 0,
            |f| f.duration_ms += 1,
            |f| f.source_codec.clear(),
            |f| f.source_codec = "MP3".into(),
            |f| f.source_codec = "x".repeat(33),
        ];
        for (i, e) in edits.iter().enumerate() {
            let mut f = facts();
            e(&mut f);
            assert!(check_facts(Some(&f)).is_err(), "edit {i}");
        }
    }

    #[test]
    fn images_need_a_size_each_within_the_cap_and_distinct_cids() {
        let p = RightsParams::default();
        let m = |cids: Vec<Vec<u8>>, sizes: Vec<u64>| pb::UploadManifest {
            flac_cid: raw_cid(b"flac").to_vec(),
            encrypted_cid: raw_cid(b"enc").to_vec(),
            image_cids: cids,
            image_sizes: sizes,
            encrypted_size: 100,
            ..Default::default()
        };
        let (a, b) = (raw_cid(b"a").to_vec(), raw_cid(b"b").to_vec());
        let ok = m(vec![a.clone(), b.clone()], vec![5, 6]);
        assert!(check_images(&ok, &p).is_ok());
        assert_eq!(stored_bytes(&ok), 111);
        for bad in [
            m(vec![a.clone()], vec![]),
            m(vec![a.clone(), a.clone()], vec![1, 1]),
            m(vec![a.clone()], vec![0]),
            m(vec![a.clone()], vec![p.max_image_bytes + 1]),
            m(vec![raw_cid(b"flac").to_vec()], vec![1]),
            m(vec![b"png".to_vec()], vec![1]),
            m(vec![a; 17], vec![1; 17]),
        ] {
            assert!(check_images(&bad, &p).is_err(), "{bad:?}");
        }
    }
}

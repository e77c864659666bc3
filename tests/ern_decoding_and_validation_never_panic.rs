//! Fuzz-style property test of ERN decoding and validation: random bytes
//! and random structured `ErnRelease` messages (valid, near-valid and
//! garbage fields) go through protobuf decoding, `PublishRelease` action
//! conversion and stateless validation. Nothing panics, a refusal carries
//! one of the ERN codes, and the same input always gives the same answer.

use proptest::prelude::*;
use prost::Message;
use stave::keyspaces::params::Params;
use stave::keyspaces::rights::ern::validate_release;
use stave::proto::rights as pb;
use stave::proto::tx as tpb;
use stave::tx::{Action, Code};

const ERN_CODES: [Code; 4] = [
    Code::MalformedIsrc,
    Code::InvalidErn,
    Code::InvalidTerritory,
    Code::RightsCapExceeded,
];

fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[A-Z]{2}",
        "[A-Z]{2}[A-Z0-9]{3}[0-9]{7}",
        "[0-9]{12,13}",
        "A1[A-Z0-9]{16}",
        "[0-9]{4}-[0-9]{2}-[0-9]{2}",
        ".{0,40}",
        "\\PC{0,20}",
    ]
}

fn track() -> impl Strategy<Value = pb::ErnTrack> {
    (field(), field(), field(), any::<u32>()).prop_map(|(isrc, title, display_artist, d)| {
        pb::ErnTrack {
            isrc,
            title,
            display_artist,
            duration_secs: d % 1000,
        }
    })
}

fn release() -> impl Strategy<Value = pb::ErnRelease> {
    (
        (field(), field(), field(), field(), field(), field()),
        (field(), field(), field()),
        proptest::collection::vec(field(), 0..4),
        proptest::collection::vec(track(), 0..4),
    )
        .prop_map(
            |(
                (icpn, grid, title, display_artist, label, genre),
                (release_date, p_line, c_line),
                territories,
                tracks,
            )| {
                pb::ErnRelease {
                    icpn,
                    grid,
                    title,
                    display_artist,
                    label,
                    genre,
                    release_date,
                    p_line,
                    c_line,
                    territories,
                    tracks,
                }
            },
        )
}

fn judge(ern: &pb::ErnRelease, params: &Params) -> Result<(), Code> {
    let r = validate_release(ern, &params.rights).map_err(|e| e.code());
    if let Err(c) = r {
        assert!(ERN_CODES.contains(&c), "unexpected code {c:?}");
    }
    r
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let params = Params::default();
        if let Ok(ern) = pb::ErnRelease::decode(bytes.as_slice()) {
            let first = judge(&ern, &params);
            prop_assert_eq!(first, judge(&ern, &params));
        }
        // the same bytes as a whole action: decode, convert, check
        if let Ok(a) = tpb::Action::decode(bytes.as_slice()) {
            if let Ok(action) = Action::try_from(a) {
                let r1 = action.check_stateless(&params).map_err(|e| e.code());
                let r2 = action.check_stateless(&params).map_err(|e| e.code());
                prop_assert_eq!(r1, r2);
            }
        }
    }

    #[test]
    fn structured_releases_never_panic_and_codes_are_stable(ern in release()) {
        let params = Params::default();
        let first = judge(&ern, &params);
        prop_assert_eq!(first, judge(&ern, &params));
        // through the wire: encode, decode, convert, check
        let wire = tpb::Action {
            kind: Some(tpb::action::Kind::PublishRelease(pb::PublishRelease {
                flac_cid: b"cid".to_vec(),
                ern: Some(ern.clone()),
            })),
        };
        let decoded = tpb::Action::decode(wire.encode_to_vec().as_slice()).unwrap();
        let action = Action::try_from(decoded).unwrap();
        prop_assert_eq!(action.check_stateless(&params).map_err(|e| e.code()), first);
    }
}

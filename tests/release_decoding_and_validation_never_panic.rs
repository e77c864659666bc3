//! Fuzz-style property test of release decoding and validation: random
//! bytes, and valid releases with random fields replaced by near-valid or
//! garbage values, go through protobuf decoding, `PublishRelease` action
//! conversion and stateless validation. Nothing panics, a refusal carries
//! one of the release codes, and the same input always gives the same
//! answer.

use proptest::prelude::*;
use prost::Message;
use stave::ddex::build;
use stave::keyspaces::params::Params;
use stave::proto::ddex as dpb;
use stave::proto::tx as tpb;
use stave::tx::{Action, Code};

const RELEASE_CODES: [Code; 6] = [
    Code::MalformedIsrc,
    Code::InvalidErn,
    Code::InvalidTerritory,
    Code::RightsCapExceeded,
    Code::OverlappingDeals,
    Code::InvalidArgument,
];

fn field() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just("Worldwide".to_string()),
        Just("Stream".to_string()),
        "[A-Z]{2}",
        "[A-Z]{2}[A-Z0-9]{3}[0-9]{7}",
        "[0-9]{12,14}",
        "A1[A-Z0-9]{16}",
        "[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z?)?",
        "PT[0-9]{1,3}M[0-9]{1,2}S",
        ".{0,40}",
        "\\PC{0,20}",
    ]
}

/// Replaces one of a release's fields (chosen by `which`) with `v`.
fn mutate(m: &mut dpb::NewReleaseMessage, which: u8, v: String, n: u64) {
    let r = m.release.get_or_insert_with(Default::default);
    let terms = m
        .release_deal
        .first_mut()
        .and_then(|d| d.deal.first_mut())
        .and_then(|d| d.deal_terms.as_mut());
    match (which % 14, terms) {
        (0, _) => r.icpn = v,
        (1, _) => r.grid = v,
        (2, _) => r.release_date = v,
        (3, _) => r.release_reference = v,
        (4, Some(t)) => t.territory_code.push(v),
        (5, Some(t)) => t.excluded_territory_code.push(v),
        (6, Some(t)) => t.use_type.push(v),
        (7, Some(t)) => t.validity_period.push(dpb::ValidityPeriod {
            start_date: v,
            start_secs: n,
            ..Default::default()
        }),
        (8, _) => {
            if let Some(h) = m.message_header.as_mut() {
                h.message_created_date_time = v;
            }
        }
        (9, _) => m.sound_recording[0].duration = v,
        (10, _) => m.sound_recording[0].duration_ms = n,
        (11, _) => {
            if let Some(e) = m.sound_recording[0].sound_recording_edition.as_mut() {
                e.isrc = v;
            }
        }
        (12, _) => m.party_list.push(dpb::Party {
            party_reference: v,
            ..Default::default()
        }),
        _ => m.release_deal.push(m.release_deal[0].clone()),
    }
}

fn judge(action: &Action, params: &Params) -> Result<(), Code> {
    let r = action.check_stateless(params).map_err(|e| e.code());
    if let Err(c) = r {
        assert!(RELEASE_CODES.contains(&c), "unexpected code {c:?}");
    }
    r
}

fn wire(m: dpb::NewReleaseMessage) -> tpb::Action {
    tpb::Action {
        kind: Some(tpb::action::Kind::PublishRelease(dpb::PublishRelease {
            message: Some(m),
            // Checked at execution, which this test does not reach.
            publisher_signature: vec![0; 64],
        })),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        let params = Params::default();
        if let Ok(m) = dpb::NewReleaseMessage::decode(bytes.as_slice()) {
            if let Ok(action) = Action::try_from(wire(m)) {
                let first = judge(&action, &params);
                prop_assert_eq!(first, judge(&action, &params));
            }
        }
        if let Ok(a) = tpb::Action::decode(bytes.as_slice()) {
            if let Ok(action) = Action::try_from(a) {
                let r1 = action.check_stateless(&params).map_err(|e| e.code());
                prop_assert_eq!(r1, action.check_stateless(&params).map_err(|e| e.code()));
            }
        }
    }

    #[test]
    fn mutated_releases_never_panic_and_codes_are_stable(
        edits in proptest::collection::vec((any::<u8>(), field(), any::<u64>()), 1..4),
        tracks in 1usize..4,
    ) {
        let params = Params::default();
        let cids: Vec<Vec<u8>> = (0..tracks).map(|i| vec![i as u8 + 1; 32]).collect();
        let mut m = build::album(&cids);
        for (which, v, n) in edits {
            mutate(&mut m, which, v, n);
        }
        let w = wire(m);
        let decoded = tpb::Action::decode(w.encode_to_vec().as_slice()).unwrap();
        let action = Action::try_from(decoded).unwrap();
        let first = judge(&action, &params);
        prop_assert_eq!(first, judge(&action, &params));
    }

    #[test]
    fn built_releases_are_valid(tracks in 1usize..20) {
        let cids: Vec<Vec<u8>> = (0..tracks).map(|i| vec![i as u8 + 1; 32]).collect();
        let action = Action::try_from(wire(build::album(&cids))).unwrap();
        prop_assert_eq!(judge(&action, &Params::default()), Ok(()));
    }
}

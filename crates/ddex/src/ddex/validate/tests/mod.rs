//! Tests of [`super::validate`] and the access check.

mod builder;
mod cover;
mod deals;
mod props;
mod refusals;

use super::{validate, Caps, Validated};
use crate::ddex::DdexError;
use crate::proto::ddex as pb;
use builder::*;

fn ok(m: &pb::NewReleaseMessage) -> Validated {
    match validate(m, &Caps::default()) {
        Ok(v) => v,
        Err(e) => panic!("refused: {e}"),
    }
}

fn err(m: &pb::NewReleaseMessage) -> DdexError {
    err_with(m, &Caps::default())
}

fn err_with(m: &pb::NewReleaseMessage, caps: &Caps) -> DdexError {
    match validate(m, caps) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

/// Asserts an [`DdexError::Invalid`] mentioning every `needle`.
fn invalid_with(m: &pb::NewReleaseMessage, needles: &[&str]) {
    match err(m) {
        DdexError::Invalid(s) => {
            for n in needles {
                assert!(s.contains(n), "{s:?} lacks {n:?}");
            }
        }
        e => panic!("not Invalid: {e:?}"),
    }
}

fn release(m: &mut pb::NewReleaseMessage) -> &mut pb::Release {
    m.release.as_mut().unwrap()
}

fn terms(m: &mut pb::NewReleaseMessage, rd: usize, d: usize) -> &mut pb::DealTerms {
    m.release_deal[rd].deal[d].deal_terms.as_mut().unwrap()
}

#[test]
fn album_passes() {
    let v = ok(&album());
    assert_eq!(v.release_id, GTIN);
    let layout: Vec<(u32, u32, &str)> = v
        .tracks
        .iter()
        .map(|t| (t.disc, t.track, t.resource_reference.as_str()))
        .collect();
    assert_eq!(layout, vec![(1, 1, "A1"), (1, 2, "A2"), (2, 1, "A3")]);
    assert_eq!(v.tracks[0].isrc, "USRC17607839");
    assert_eq!(v.tracks[2].cid, vec![3; 32]);
    assert_eq!(
        v.parties,
        vec![
            "dpid:PADPIDA2014120301U".to_string(),
            "isni:0000000121032683".to_string(),
            "name:the band".to_string(),
        ]
    );
    assert!(v.work > 0);
}

#[test]
fn track_release_deal_covers_only_its_recording() {
    let v = ok(&album());
    let cids: Vec<&[u8]> = v.covering.iter().map(|(c, _)| c.as_slice()).collect();
    assert_eq!(cids, vec![&[1u8; 32][..], &[2; 32], &[3; 32]]);
    let counts: Vec<usize> = v.covering.iter().map(|(_, d)| d.deals.len()).collect();
    assert_eq!(counts, vec![3, 2, 2]);
    let a1 = &v.covering[0].1;
    let ad = &a1.deals[2];
    assert_eq!(
        ad.commercial_model_type,
        vec!["AdvertisementSupportedModel".to_string()]
    );
    assert_eq!(ad.use_types, 0b1110);
    assert!(ad.validity_period.is_empty());
    let download = &a1.deals[1];
    assert_eq!(
        download.use_types,
        1 << pb::UseType::PermanentDownload as i32
    );
    assert_eq!(download.validity_period.len(), 1);
    assert!(v.covering[1]
        .1
        .deals
        .iter()
        .all(|d| d.commercial_model_type[0] != "AdvertisementSupportedModel"));
}

#[test]
fn single_passes() {
    let v = ok(&single());
    assert_eq!(v.release_id, GRID);
    assert_eq!(v.tracks.len(), 1);
    assert_eq!((v.tracks[0].disc, v.tracks[0].track), (1, 1));
    assert_eq!(v.covering.len(), 1);
    assert_eq!(
        v.covering[0].1.deals[0].use_types,
        1 << pb::UseType::OnDemandStream as i32
    );
}

#[test]
fn positions_stand_in_for_missing_sequence_numbers() {
    let mut m = album();
    let top = release(&mut m).resource_group.as_mut().unwrap();
    for g in &mut top.resource_group {
        g.sequence_number = 0;
        for i in &mut g.resource_group_content_item {
            i.sequence_number = 0;
        }
    }
    let v = ok(&m);
    let layout: Vec<(u32, u32)> = v.tracks.iter().map(|t| (t.disc, t.track)).collect();
    assert_eq!(layout, vec![(1, 1), (1, 2), (2, 1)]);
}

#[test]
fn a_broadcast_only_deal_is_listed_but_grants_nothing() {
    let mut m = album();
    m.release_deal[0].deal.push(deal(
        &["US"],
        &["Broadcast"],
        &["SubscriptionModel"],
        vec![],
    ));
    let v = ok(&m);
    let a2 = &v.covering[1].1;
    assert_eq!(a2.deals.len(), 3);
    assert_eq!(a2.deals[2].use_types, 0);
}

#[test]
fn work_grows_with_deals() {
    let base = ok(&album()).work;
    let mut m = album();
    for c in ["US", "FR", "DE", "JP"] {
        m.release_deal[0]
            .deal
            .push(deal(&[c], &["Download"], &["PayAsYouGoModel"], vec![]));
    }
    assert!(ok(&m).work > base);
}

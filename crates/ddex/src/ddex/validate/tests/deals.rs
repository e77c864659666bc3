//! Step 8: overlapping deals, and the cases that do not overlap.

use super::*;

/// The album plus a deal on R0: GB, OnDemandStream, subscription, always;
/// it overlaps deal 0 (Worldwide Stream subscription from 2024-03-01).
fn with_extra(d: pb::Deal) -> pb::NewReleaseMessage {
    let mut m = album();
    m.release_deal[0].deal.push(d);
    m
}

fn extra() -> pb::Deal {
    deal(&["GB"], &["OnDemandStream"], &["SubscriptionModel"], vec![])
}

#[test]
fn overlapping_deals_are_refused() {
    match err(&with_extra(extra())) {
        DdexError::OverlappingDeals(s) => {
            for n in [
                "ReleaseDeal 0 Deal 0 and ReleaseDeal 0 Deal 2",
                "OnDemandStream",
                " GB ",
                "SubscriptionModel",
                "\"R0\"",
                "from 2024-03-01T00:00:00Z until open",
            ] {
                assert!(s.contains(n), "{s:?} lacks {n:?}");
            }
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn overlap_across_release_deals_on_the_same_release() {
    let mut m = album();
    m.release_deal
        .push(release_deal(&["R0", "R1"], vec![extra()]));
    match err(&m) {
        DdexError::OverlappingDeals(s) => {
            assert!(
                s.contains("ReleaseDeal 0 Deal 0 and ReleaseDeal 2 Deal 0"),
                "{s}"
            )
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn different_commercial_models_coexist() {
    let mut d = extra();
    d.deal_terms.as_mut().unwrap().commercial_model_type =
        strings(&["AdvertisementSupportedModel"]);
    ok(&with_extra(d));
}

#[test]
fn disjoint_periods_coexist() {
    let mut d = extra();
    // Ends at the end of 2024-02-29: the subscription deal starts 2024-03-01.
    d.deal_terms.as_mut().unwrap().validity_period = vec![period("2023-01-01", "2024-02-29")];
    ok(&with_extra(d));
    let mut d = extra();
    d.deal_terms.as_mut().unwrap().validity_period = vec![period("", "2024-03-01")];
    assert!(matches!(
        err(&with_extra(d)),
        DdexError::OverlappingDeals(_)
    ));
}

#[test]
fn disjoint_territories_coexist() {
    let mut m = with_extra(extra());
    terms(&mut m, 0, 0).territory_code = strings(&["US", "FR"]);
    ok(&m);
    let mut m = with_extra(extra());
    let t = terms(&mut m, 0, 0);
    t.territory_code.clear();
    t.excluded_territory_code = strings(&["GB"]);
    ok(&m);
}

#[test]
fn different_use_types_coexist() {
    let mut d = extra();
    d.deal_terms.as_mut().unwrap().use_type = strings(&["ConditionalDownload", "Broadcast"]);
    ok(&with_extra(d));
}

#[test]
fn different_releases_never_conflict() {
    let mut m = album();
    // Same terms as R1's ad-supported Stream deal, but on R0.
    m.release_deal[0].deal.push(deal(
        &["Worldwide"],
        &["Stream"],
        &["AdvertisementSupportedModel"],
        vec![],
    ));
    ok(&m);
    // On R1 as well: now they clash.
    m.release_deal[0]
        .deal_release_reference
        .push("R1".to_string());
    assert!(matches!(err(&m), DdexError::OverlappingDeals(_)));
}

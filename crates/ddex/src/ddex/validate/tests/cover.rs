//! The access-side check on stored deals.

use super::*;
use crate::ddex::territory::{index_of, TerritorySet};
use crate::ddex::validate::{covering_deal, summary};

const MAR_2024: u64 = 1_709_251_200;
const JUN_2024: u64 = 1_717_200_000;

fn set(codes: &[&str]) -> Vec<u8> {
    let mut s = TerritorySet::default();
    for c in codes {
        s.insert(index_of(c).unwrap());
    }
    s.to_bytes()
}

fn covering(codes: &[&str], uses: u32, periods: Vec<pb::ValidityPeriod>) -> pb::CidDeals {
    pb::CidDeals {
        deals: vec![pb::CoveringDeal {
            territories: set(codes),
            use_types: uses,
            validity_period: periods,
            commercial_model_type: strings(&["SubscriptionModel"]),
        }],
    }
}

fn secs(start: u64, end: u64) -> pb::ValidityPeriod {
    pb::ValidityPeriod {
        start_secs: start,
        end_secs: end,
        ..Default::default()
    }
}

const ODS: i32 = pb::UseType::OnDemandStream as i32;
const NIS: i32 = pb::UseType::NonInteractiveStream as i32;
const PD: i32 = pb::UseType::PermanentDownload as i32;

#[test]
fn territory_in_and_out() {
    let d = covering(&["GB", "FR"], 1 << ODS, vec![]);
    assert!(covering_deal(&d, "GB", ODS, 0));
    assert!(covering_deal(&d, "FR", ODS, u64::MAX));
    assert!(!covering_deal(&d, "US", ODS, 0));
    assert!(!covering_deal(&d, "XX", ODS, 0));
    assert!(!covering_deal(&d, "gb", ODS, 0));
}

#[test]
fn no_territory_is_any_territory_of_a_deal_in_force() {
    let d = covering(&["GB"], 1 << ODS, vec![secs(10, 20)]);
    assert!(covering_deal(&d, "", ODS, 15));
    assert!(!covering_deal(&d, "", ODS, 20), "ended");
    assert!(!covering_deal(&d, "", PD, 15), "another use");
    let none = covering(&[], 1 << ODS, vec![]);
    assert!(!covering_deal(&none, "", ODS, 15), "a deal in no territory");
}

#[test]
fn leaves_and_parents() {
    let stream = crate::ddex::use_type::leaf_bits("Stream");
    let d = covering(&["GB"], stream, vec![]);
    assert!(covering_deal(&d, "GB", ODS, 0));
    assert!(covering_deal(&d, "GB", NIS, 0));
    assert!(!covering_deal(&d, "GB", PD, 0));
    let leaf = covering(&["GB"], 1 << NIS, vec![]);
    assert!(!covering_deal(&leaf, "GB", ODS, 0));
    assert!(covering_deal(&leaf, "GB", NIS, 0));
    assert!(!covering_deal(&d, "GB", 99, 0));
}

#[test]
fn unspecified_is_an_on_demand_stream() {
    let d = covering(&["GB"], 1 << ODS, vec![]);
    assert!(covering_deal(&d, "GB", 0, 0));
    let nis = covering(&["GB"], 1 << NIS, vec![]);
    assert!(!covering_deal(&nis, "GB", 0, 0));
}

#[test]
fn periods() {
    let d = covering(&["GB"], 1 << ODS, vec![secs(MAR_2024, JUN_2024)]);
    assert!(!covering_deal(&d, "GB", ODS, MAR_2024 - 1));
    assert!(covering_deal(&d, "GB", ODS, MAR_2024));
    assert!(covering_deal(&d, "GB", ODS, JUN_2024 - 1));
    assert!(!covering_deal(&d, "GB", ODS, JUN_2024));
    let open_start = covering(&["GB"], 1 << ODS, vec![secs(0, JUN_2024)]);
    assert!(covering_deal(&open_start, "GB", ODS, 0));
    assert!(!covering_deal(&open_start, "GB", ODS, JUN_2024));
    let open_end = covering(&["GB"], 1 << ODS, vec![secs(MAR_2024, 0)]);
    assert!(!covering_deal(&open_end, "GB", ODS, MAR_2024 - 1));
    assert!(covering_deal(&open_end, "GB", ODS, u64::MAX));
    let two = covering(&["GB"], 1 << ODS, vec![secs(10, 20), secs(30, 0)]);
    assert!(covering_deal(&two, "GB", ODS, 15));
    assert!(!covering_deal(&two, "GB", ODS, 25));
    assert!(covering_deal(&two, "GB", ODS, 35));
}

#[test]
fn malformed_stored_deals_cover_nothing() {
    let mut d = covering(&["GB"], 1 << ODS, vec![]);
    d.deals[0].territories.pop();
    assert!(!covering_deal(&d, "GB", ODS, 0));
    assert!(!covering_deal(&pb::CidDeals::default(), "GB", ODS, 0));
    assert!(summary(&d).contains("unreadable"));
}

#[test]
fn validated_album_coverage() {
    let v = ok(&album());
    let (a1, a2) = (&v.covering[0].1, &v.covering[1].1);
    // R1's ad-supported deal is open-ended; A2 only has deals from 2024-03-01.
    assert!(covering_deal(a1, "JP", ODS, MAR_2024 - 1));
    assert!(!covering_deal(a2, "JP", ODS, MAR_2024 - 1));
    assert!(covering_deal(a2, "JP", ODS, MAR_2024));
    assert!(covering_deal(a2, "GB", PD, MAR_2024));
    assert!(!covering_deal(a2, "FR", PD, MAR_2024));
}

#[test]
fn summaries() {
    let v = ok(&album());
    let s = summary(&v.covering[1].1);
    assert_eq!(
        s,
        "2 deals: OnDemandStream+NonInteractiveStream+ContentInfluencedStream in all 250 \
         territories from 2024-03-01T00:00:00Z; PermanentDownload in GB from 2024-03-01T00:00:00Z"
    );
    assert_eq!(summary(&pb::CidDeals::default()), "no deals");
}

use super::*;
use crate::keyspaces::uploads::keys::assignments_prefix;
use crate::keyspaces::validators::{ValidatorsWrite, STATUS_ACTIVE};
use crate::proto::genesis::ValidatorRecord;
use crate::store::{MemState, Overlay, Space, StateRead};

fn k(b: u8) -> Vec<u8> {
    vec![b; 32]
}

fn upload() -> pb::Upload {
    pb::Upload {
        flac_cid: b"flac".to_vec(),
        encrypted_cid: b"enc".to_vec(),
        encrypted_size: 100,
        image_sizes: vec![10],
        replication_set: vec![k(1), k(2)],
        dek_holder_set: vec![k(1)],
        ..Default::default()
    }
}

fn joining(who: &[(u8, u8)]) -> Vec<pb::Joining> {
    who.iter()
        .map(|(b, r)| pb::Joining {
            validator: k(*b),
            roles: u32::from(*r),
        })
        .collect()
}

fn assigned<S: StateRead>(s: &S, who: u8) -> Option<u8> {
    let rows = s
        .prefix_raw(Space::State, &assignments_prefix(&[who; 32]), None, 10)
        .unwrap();
    rows.first().and_then(|(_, v)| v.first().copied())
}

fn quota(max: u64) -> RightsParams {
    RightsParams {
        validator_replication_quota: max,
        ..RightsParams::default()
    }
}

/// A state where validators 1..=5 are ACTIVE and `upload()` is assigned.
fn world(base: &MemState) -> (Overlay<&MemState>, pb::Upload) {
    let mut s = Overlay::new(base);
    for who in 1..=5u8 {
        let r = ValidatorRecord {
            status: STATUS_ACTIVE,
            ..Default::default()
        };
        s.put_validator(&[who; 32], &r);
    }
    let u = upload();
    assign_new(&mut s, &u, 1);
    (s, u)
}

#[test]
fn leaving_members_serve_until_every_joining_member_confirmed() {
    let base = MemState::default();
    let (mut s, mut u) = world(&base);
    for who in [1, 2] {
        s.put_usage(&validator_usage_key(&[who; 32]), 110);
    }
    let p = quota(1000);
    // 2 leaves; 3 joins as replica and holder
    start(&mut s, &mut u, (vec![k(1), k(3)], vec![k(1), k(3)]), 7, &p).unwrap();
    assert_eq!(u.replication_set, vec![k(1), k(2), k(3)], "both serve");
    assert_eq!(u.dek_holder_set, vec![k(1), k(3)]);
    assert_eq!(
        u.handover.as_ref().unwrap().unconfirmed,
        joining(&[(3, REPLICA | HOLDER)])
    );
    assert_eq!(assigned(&s, 3), Some(REPLICA | HOLDER));
    assert_eq!(
        s.validator_replicated(&[3; 32]).unwrap(),
        110,
        "charged on joining"
    );
    assert_eq!(
        s.usage(&content_pool_key("")).unwrap(),
        0,
        "a swap costs the pool nothing"
    );
    assert!(s.get_raw(&under_replicated_key(b"flac")).unwrap().is_some());
    assert!(
        confirm(&mut s, &mut u, &[2; 32], 8).is_err(),
        "2 is not joining"
    );
    assert_eq!(confirm(&mut s, &mut u, &[3; 32], 8).unwrap(), 0);
    assert_eq!(u.replication_set, vec![k(1), k(3)]);
    assert!(u.handover.is_none());
    assert_eq!(
        assigned(&s, 2),
        None,
        "the leaving member's assignment is gone"
    );
    assert_eq!(
        s.validator_replicated(&[2; 32]).unwrap(),
        0,
        "and its quota released"
    );
    assert!(s.get_raw(&under_replicated_key(b"flac")).unwrap().is_none());
    assert_eq!(
        s.upload(b"flac").unwrap(),
        Some(u.clone()),
        "the record is written"
    );
    assert!(
        confirm(&mut s, &mut u, &[3; 32], 9).is_err(),
        "nothing awaits it any more"
    );
}

#[test]
fn a_pure_removal_takes_effect_at_once_and_a_full_quota_refuses_a_joiner() {
    let base = MemState::default();
    let (mut s, mut u) = world(&base);
    start(&mut s, &mut u, (vec![k(1)], vec![k(1)]), 7, &quota(1000)).unwrap();
    assert_eq!(
        (u.replication_set.clone(), u.handover.clone()),
        (vec![k(1)], None)
    );
    assert_eq!(assigned(&s, 2), None);
    let err = start(
        &mut s,
        &mut u,
        (vec![k(1), k(4)], vec![k(1)]),
        8,
        &quota(50),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("validator_replication_quota"),
        "{err}"
    );
}

#[test]
fn a_joiner_dropped_before_it_confirmed_leaves_at_once_and_joins_afresh() {
    let base = MemState::default();
    let (mut s, mut u) = world(&base);
    let p = quota(1000);
    start(&mut s, &mut u, (vec![k(1), k(2), k(3)], vec![k(1)]), 7, &p).unwrap();
    // 3 is dropped before confirming: it leaves the serving sets at once
    start(&mut s, &mut u, (vec![k(1), k(2), k(4)], vec![k(1)]), 8, &p).unwrap();
    assert_eq!(u.replication_set, vec![k(1), k(2), k(4)]);
    assert_eq!(
        u.handover.as_ref().unwrap().unconfirmed,
        joining(&[(4, REPLICA)])
    );
    assert_eq!(
        (assigned(&s, 3), s.validator_replicated(&[3; 32]).unwrap()),
        (None, 0)
    );
    // and re-added, it must confirm again: nothing finishes without it
    start(&mut s, &mut u, (vec![k(1), k(2), k(3)], vec![k(1)]), 9, &p).unwrap();
    assert_eq!(
        u.handover.as_ref().unwrap().unconfirmed,
        joining(&[(3, REPLICA)])
    );
    assert_eq!(s.validator_replicated(&[4; 32]).unwrap(), 0);
    confirm(&mut s, &mut u, &[3; 32], 10).unwrap();
    assert_eq!(u.replication_set, vec![k(1), k(2), k(3)]);
    assert_eq!(s.validator_replicated(&[3; 32]).unwrap(), 110);
}

#[test]
fn a_member_that_is_not_active_keeps_the_upload_listed() {
    let base = MemState::default();
    let (mut s, mut u) = world(&base);
    let p = quota(1000);
    start(&mut s, &mut u, (vec![k(1), k(2), k(3)], vec![k(1)]), 7, &p).unwrap();
    s.put_validator(&[2; 32], &ValidatorRecord::default());
    confirm(&mut s, &mut u, &[3; 32], 8).unwrap();
    let row = s
        .get_raw(&under_replicated_key(b"flac"))
        .unwrap()
        .expect("listed");
    let row = <pb::UnderReplicated as prost::Message>::decode(row.as_slice()).unwrap();
    assert!(row.reason.contains("not ACTIVE"), "{}", row.reason);
}

#[test]
fn the_pool_pays_for_growth_only_and_gets_shrinkage_back() {
    let base = MemState::default();
    let (mut s, mut u) = world(&base);
    let p = quota(1000);
    let pool = |s: &Overlay<&MemState>| s.usage(&content_pool_key("")).unwrap();
    s.put_usage(&content_pool_key(""), 220);
    // 2 → 3 replicas: one more replica's bytes
    start(&mut s, &mut u, (vec![k(1), k(2), k(3)], vec![k(1)]), 7, &p).unwrap();
    assert_eq!(pool(&s), 330);
    // re-aimed to a swap before 3 confirmed: the growth is undone
    start(&mut s, &mut u, (vec![k(1), k(4)], vec![k(1)]), 8, &p).unwrap();
    assert_eq!(pool(&s), 220);
    confirm(&mut s, &mut u, &[4; 32], 9).unwrap();
    assert_eq!(pool(&s), 220);
    // 2 → 1: the pool gets one replica's bytes back
    start(&mut s, &mut u, (vec![k(1)], vec![k(1)]), 10, &p).unwrap();
    assert_eq!(pool(&s), 110);
    // a pool that is full refuses growth
    let tight = RightsParams {
        ungrouped_content_budget: 150,
        ..quota(1000)
    };
    let err = start(&mut s, &mut u, (vec![k(1), k(5)], vec![k(1)]), 11, &tight).unwrap_err();
    assert!(
        err.to_string().contains("ungrouped_content_budget"),
        "{err}"
    );
}

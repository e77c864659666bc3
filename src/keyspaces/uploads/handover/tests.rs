use super::*;
use crate::keyspaces::uploads::keys::assignments_prefix;
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

#[test]
fn leaving_members_serve_until_every_joining_member_confirmed() {
    let base = MemState::default();
    let mut s = Overlay::new(&base);
    let mut u = upload();
    assign_new(&mut s, &u);
    for who in [1, 2] {
        s.put_usage(&validator_usage_key(&[who; 32]), 110);
    }
    let p = quota(1000);
    // 2 leaves; 3 joins as replica and holder
    start(&mut s, &mut u, (vec![k(1), k(3)], vec![k(1), k(3)]), 7, &p).unwrap();
    assert_eq!(u.replication_set, vec![k(1), k(2), k(3)], "both serve");
    assert_eq!(u.dek_holder_set, vec![k(1), k(3)]);
    assert_eq!(u.handover.as_ref().unwrap().unconfirmed, vec![k(3)]);
    assert_eq!(assigned(&s, 3), Some(REPLICA | HOLDER));
    assert_eq!(
        s.validator_replicated(&[3; 32]).unwrap(),
        110,
        "charged on joining"
    );
    assert!(s.get_raw(&under_replicated_key(b"flac")).unwrap().is_some());
    assert!(
        confirm(&mut s, &mut u, &[2; 32]).is_err(),
        "2 is not joining"
    );
    assert_eq!(confirm(&mut s, &mut u, &[3; 32]).unwrap(), 0);
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
        confirm(&mut s, &mut u, &[3; 32]).is_err(),
        "nothing awaits it any more"
    );
}

#[test]
fn a_pure_removal_takes_effect_at_once_and_a_full_quota_refuses_a_joiner() {
    let base = MemState::default();
    let mut s = Overlay::new(&base);
    let mut u = upload();
    assign_new(&mut s, &u);
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
fn a_joiner_replaced_before_it_confirmed_leaves_no_assignment() {
    let base = MemState::default();
    let mut s = Overlay::new(&base);
    let mut u = upload();
    assign_new(&mut s, &u);
    let p = quota(1000);
    start(&mut s, &mut u, (vec![k(1), k(3)], vec![k(1)]), 7, &p).unwrap();
    // 3 left before confirming: 4 replaces it
    start(&mut s, &mut u, (vec![k(1), k(4)], vec![k(1)]), 8, &p).unwrap();
    assert_eq!(u.handover.as_ref().unwrap().unconfirmed, vec![k(4)]);
    confirm(&mut s, &mut u, &[4; 32]).unwrap();
    assert_eq!(u.replication_set, vec![k(1), k(4)]);
    assert_eq!((assigned(&s, 2), assigned(&s, 3)), (None, None));
    assert_eq!(s.validator_replicated(&[3; 32]).unwrap(), 0);
}

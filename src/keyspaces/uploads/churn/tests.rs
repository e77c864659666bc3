use super::*;
use crate::keyspaces::uploads::{handover, UploadsWrite};
use crate::keyspaces::validators::{ValidatorsWrite, STATUS_ACTIVE};
use crate::proto::genesis::ValidatorRecord;
use crate::store::MemState;

fn k(b: u8) -> [u8; 32] {
    [b; 32]
}

fn active(s: &mut Overlay<&MemState>, who: u8, is: bool) {
    let r = ValidatorRecord {
        status: if is { STATUS_ACTIVE } else { STATUS_ACTIVE + 2 },
        ..Default::default()
    };
    s.put_validator(&k(who), &r);
}

/// CometBFT's set as Stave recorded it: validators 1..=5 with power.
fn comet(s: &mut Overlay<&MemState>) {
    let members = (1..=5u8)
        .map(|who| {
            s.put_validator_by_consensus(&[who + 100; 32], &k(who));
            crate::proto::governance::CometMember {
                consensus_key: vec![who + 100; 32],
                power: 10,
                ..Default::default()
            }
        })
        .collect();
    s.put_comet_set(&crate::proto::governance::CometSet { members });
}

fn upload(cid: &[u8]) -> pb::Upload {
    let set = vec![k(1).to_vec(), k(2).to_vec(), k(3).to_vec()];
    pb::Upload {
        flac_cid: cid.to_vec(),
        encrypted_size: 100,
        replication_set: set.clone(),
        dek_holder_set: set,
        ..Default::default()
    }
}

fn rank(cid: &[u8], who: &[u8]) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(cid);
    h.update([who[0]; 32]);
    h.finalize().to_vec()
}

fn params(per_block: u32, quota: u64) -> RightsParams {
    RightsParams {
        reassignments_per_block: per_block,
        validator_replication_quota: quota,
        ..RightsParams::default()
    }
}

fn world<'a>(base: &'a MemState, cids: &[&[u8]]) -> Overlay<&'a MemState> {
    let mut s = Overlay::new(base);
    for who in 1..=5 {
        active(&mut s, who, true);
    }
    comet(&mut s);
    for cid in cids {
        let u = upload(cid);
        s.put_upload(&u).unwrap();
        handover::assign_new(&mut s, &u, 1);
    }
    active(&mut s, 2, false);
    enqueue(&mut s, &k(2)).unwrap();
    s
}

#[test]
fn the_leaver_is_replaced_by_the_best_ranked_active_validator_with_room() {
    let base = MemState::default();
    let mut s = world(&base, &[b"cid-a"]);
    let best = if rank(b"cid-a", &[4]) < rank(b"cid-a", &[5]) {
        4
    } else {
        5
    };
    let other = 9 - best;
    // the best-ranked one has no room: the other takes the place
    let p = params(8, 1000);
    s.put_usage(
        &crate::keyspaces::uploads::validator_usage_key(&k(best)),
        950,
    );
    assert_eq!(end_block(&mut s, 10, &p).unwrap(), 1);
    let u = s.upload(b"cid-a").unwrap().unwrap();
    let h = u.handover.clone().expect("a handover");
    assert_eq!(
        h.replication_set,
        vec![k(1).to_vec(), k(other).to_vec(), k(3).to_vec()]
    );
    assert_eq!(h.unconfirmed.len(), 1);
    assert_eq!(h.unconfirmed[0].validator, k(other).to_vec());
    assert!(
        u.replication_set.contains(&k(2).to_vec()),
        "the leaver serves on"
    );
    assert!(
        s.get_raw(&churn_key(&k(2))).unwrap().is_none(),
        "its walk is over"
    );
    // nothing queued: nothing done
    assert_eq!(end_block(&mut s, 11, &p).unwrap(), 0);
}

#[test]
fn the_walk_keeps_to_its_budget_and_resumes_where_it_stopped() {
    let base = MemState::default();
    let mut s = world(&base, &[b"cid-a", b"cid-b", b"cid-c"]);
    let p = params(2, 1 << 40);
    assert_eq!(end_block(&mut s, 10, &p).unwrap(), 2);
    assert!(s.upload(b"cid-c").unwrap().unwrap().handover.is_none());
    assert_eq!(
        s.get_raw(&churn_key(&k(2))).unwrap(),
        Some(b"cid-b".to_vec())
    );
    assert_eq!(end_block(&mut s, 11, &p).unwrap(), 1);
    assert!(s.upload(b"cid-c").unwrap().unwrap().handover.is_some());
    assert!(s.get_raw(&churn_key(&k(2))).unwrap().is_none());
}

#[test]
fn with_no_candidate_the_upload_is_listed_under_replicated() {
    let base = MemState::default();
    let mut s = world(&base, &[b"cid-a"]);
    active(&mut s, 4, false);
    active(&mut s, 5, false);
    end_block(&mut s, 10, &params(8, 1 << 40)).unwrap();
    let u = s.upload(b"cid-a").unwrap().unwrap();
    assert!(u.handover.is_none());
    let row = s
        .get_raw(&crate::keyspaces::uploads::keys::under_replicated_key(
            b"cid-a",
        ))
        .unwrap()
        .expect("listed");
    let row = <pb::UnderReplicated as prost::Message>::decode(row.as_slice()).unwrap();
    assert!(row.reason.contains("no ACTIVE validator"), "{}", row.reason);
    assert!(s
        .get_raw(&crate::keyspaces::uploads::keys::stranded_key(&k(2)))
        .unwrap()
        .is_some());
    // a validator becomes ACTIVE: the stranded walk runs again and 4 takes over
    active(&mut s, 4, true);
    on_active(&mut s, &k(4)).unwrap();
    end_block(&mut s, 11, &params(8, 1 << 40)).unwrap();
    let h = s
        .upload(b"cid-a")
        .unwrap()
        .unwrap()
        .handover
        .expect("a handover");
    assert_eq!(h.unconfirmed[0].validator, k(4).to_vec());
}

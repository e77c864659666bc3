use super::*;
use proptest::prelude::*;

fn cid(i: u8) -> Vec<u8> {
    vec![i; 32]
}

fn status_of(i: u8) -> Option<SyncStatus> {
    match i % 7 {
        0 => None,
        1 => Some(SyncStatus::Pending),
        2 => Some(SyncStatus::Downloading),
        3 => Some(SyncStatus::Seeding),
        4 => Some(SyncStatus::Received),
        5 => Some(SyncStatus::Failed),
        _ => Some(SyncStatus::Unspecified),
    }
}

/// A random local side over cids 0..16.
fn arb_local() -> impl Strategy<Value = LocalView> {
    (
        prop::collection::vec((0u8..16, 0u8..7, 0u64..200), 0..16),
        prop::collection::vec((0u8..16, 0u8..7, 0u64..200), 0..16),
        prop::collection::btree_set(0u8..16, 0..8),
        prop::collection::btree_set(0u8..16, 0..8),
        prop::collection::btree_set((any::<bool>(), 0u8..16), 0..6),
    )
        .prop_map(|(cs, ds, files, held, flying)| {
            let mut l = LocalView::default();
            for (c, s, retry) in cs {
                if let Some(st) = status_of(s) {
                    let mut e = ContentSync {
                        cid: cid(c),
                        retry_at_ms: retry,
                        ..Default::default()
                    };
                    e.set_status(st);
                    l.content_sync.insert(cid(c), e);
                }
            }
            for (c, s, retry) in ds {
                if let Some(st) = status_of(s) {
                    let mut e = DekSync {
                        cid: cid(c),
                        retry_at_ms: retry,
                        ..Default::default()
                    };
                    e.set_status(st);
                    l.dek_sync.insert(cid(c), e);
                }
            }
            l.files = files.into_iter().map(cid).collect();
            l.held_deks = held.into_iter().map(cid).collect();
            l.in_flight = flying
                .into_iter()
                .map(|(c, i)| (if c { Kind::Content } else { Kind::Dek }, cid(i)))
                .collect();
            l
        })
}

fn arb_wanted() -> impl Strategy<Value = Wanted> {
    (
        prop::collection::btree_map(0u8..16, 1u64..1000, 0..12),
        prop::collection::btree_set(0u8..16, 0..12),
        prop::collection::btree_set(0u8..16, 0..8),
    )
        .prop_map(|(c, d, both)| Wanted {
            // a DEK cid i we also replicate has content cid i
            dek_after_content: both
                .iter()
                .filter(|i| c.contains_key(i) && d.contains(i))
                .map(|i| (cid(*i), cid(*i)))
                .collect(),
            content: c.into_iter().map(|(k, v)| (cid(k), v)).collect(),
            deks: d.into_iter().map(cid).collect(),
        })
}

fn apply(l: &mut LocalView, p: &Plan) {
    for e in &p.content_writes {
        l.content_sync.insert(e.cid.clone(), e.clone());
    }
    for e in &p.dek_writes {
        l.dek_sync.insert(e.cid.clone(), e.clone());
    }
    for f in &p.fetch {
        l.in_flight.insert(f.clone());
    }
}

proptest! {
    #[test]
    fn every_assigned_cid_gets_an_entry(w in arb_wanted(), mut l in arb_local(), now in 0u64..200) {
        let p = plan(&w, &l, now);
        apply(&mut l, &p);
        for c in w.content.keys() {
            let e = l.content_sync.get(c);
            prop_assert!(e.is_some());
            let st = e.map(|e| e.status());
            if l.files.contains(c) {
                prop_assert_eq!(st, Some(SyncStatus::Seeding));
            }
        }
        for c in &w.deks {
            prop_assert!(l.dek_sync.contains_key(c));
            if l.held_deks.contains(c) {
                prop_assert_eq!(l.dek_sync[c].status(), SyncStatus::Received);
            }
        }
    }

    #[test]
    fn fetches_only_what_is_assigned_missing_idle_and_due(w in arb_wanted(), l in arb_local(), now in 0u64..200) {
        let p = plan(&w, &l, now);
        let distinct: BTreeSet<_> = p.fetch.iter().collect();
        prop_assert_eq!(distinct.len(), p.fetch.len(), "no fetch twice");
        for (k, c) in &p.fetch {
            prop_assert!(!l.in_flight.contains(&(*k, c.clone())));
            match k {
                Kind::Content => {
                    prop_assert!(w.content.contains_key(c));
                    prop_assert!(!l.files.contains(c));
                    if let Some(e) = l.content_sync.get(c) {
                        prop_assert!(e.status() != SyncStatus::Failed || e.retry_at_ms <= now);
                    }
                }
                Kind::Dek => {
                    prop_assert!(w.deks.contains(c));
                    prop_assert!(!l.held_deks.contains(c));
                    if let Some(content) = w.dek_after_content.get(c) {
                        prop_assert!(l.files.contains(content), "a replica's DEK waits for its content");
                    }
                    if let Some(e) = l.dek_sync.get(c) {
                        prop_assert!(e.status() != SyncStatus::Failed || e.retry_at_ms <= now);
                    }
                }
            }
        }
        // everything missing, idle and due is fetched
        for c in w.content.keys() {
            let due = l.content_sync.get(c).is_none_or(|e| e.status() != SyncStatus::Failed || e.retry_at_ms <= now);
            if !l.files.contains(c) && !l.in_flight.contains(&(Kind::Content, c.clone())) && due {
                prop_assert!(p.fetch.contains(&(Kind::Content, c.clone())));
            }
        }
    }

    #[test]
    fn unassigned_is_reported_never_written(w in arb_wanted(), l in arb_local(), now in 0u64..200) {
        let p = plan(&w, &l, now);
        let expected: BTreeSet<Vec<u8>> = l.files.iter().chain(l.content_sync.keys())
            .filter(|c| !w.content.contains_key(*c)).cloned().collect();
        prop_assert_eq!(p.unassigned_content.iter().cloned().collect::<BTreeSet<_>>(), expected);
        for e in &p.content_writes {
            prop_assert!(w.content.contains_key(&e.cid));
        }
        for e in &p.dek_writes {
            prop_assert!(w.deks.contains(&e.cid));
        }
        for c in &p.unassigned_deks {
            prop_assert!(!w.deks.contains(c));
        }
    }

    #[test]
    fn a_second_plan_after_the_first_does_nothing(w in arb_wanted(), mut l in arb_local(), now in 0u64..200) {
        let p = plan(&w, &l, now);
        prop_assert_eq!(&p, &plan(&w, &l, now), "deterministic");
        apply(&mut l, &p);
        let again = plan(&w, &l, now);
        prop_assert!(again.content_writes.is_empty());
        prop_assert!(again.dek_writes.is_empty());
        prop_assert!(again.fetch.is_empty());
    }
}

#[test]
fn wanted_follows_set_membership() {
    let me = [1u8; 32];
    let other = [2u8; 32];
    let a = |i: u8, rep: Vec<[u8; 32]>, hold: Vec<[u8; 32]>| Assignment {
        dek_cid: cid(i),
        content_cid: cid(100 + i),
        encrypted_size: i as u64,
        replication_set: rep,
        dek_holder_set: hold,
        dek_commitment: vec![],
        images: vec![],
    };
    let w = wanted(
        &me,
        &[
            a(1, vec![me], vec![other]),
            a(2, vec![other], vec![me, other]),
            a(3, vec![other], vec![other]),
        ],
    );
    assert_eq!(
        w.content.into_iter().collect::<Vec<_>>(),
        vec![(cid(101), 1)]
    );
    assert_eq!(w.deks.into_iter().collect::<Vec<_>>(), vec![cid(2)]);
    assert!(w.dek_after_content.is_empty());
    let both = wanted(&me, &[a(4, vec![me], vec![me])]);
    assert_eq!(
        both.dek_after_content.into_iter().collect::<Vec<_>>(),
        vec![(cid(4), cid(104))]
    );
}

#[test]
fn a_replica_wants_the_images_too_and_shared_ones_once() {
    let me = [1u8; 32];
    let a = |i: u8, images: Vec<(Vec<u8>, u64)>| Assignment {
        dek_cid: cid(i),
        content_cid: cid(100 + i),
        encrypted_size: 50,
        replication_set: vec![me],
        dek_holder_set: vec![],
        dek_commitment: vec![],
        images,
    };
    let cover = (cid(200), 7);
    let (x, y) = (
        a(1, vec![cover.clone()]),
        a(2, vec![cover.clone(), (cid(201), 9)]),
    );
    assert_eq!(y.blob_size(&cid(201)), Some(9));
    assert_eq!(y.blob_size(&cid(102)), Some(50));
    assert_eq!(y.blob_size(&cid(2)), None, "the DEK cid is no file");
    let w = wanted(&me, &[x, y]);
    assert_eq!(
        w.content.into_iter().collect::<Vec<_>>(),
        vec![(cid(101), 50), (cid(102), 50), (cid(200), 7), (cid(201), 9)]
    );
}

#[test]
fn a_replicas_dek_waits_for_its_content_then_is_fetched() {
    let w = Wanted {
        content: [(cid(104), 10)].into(),
        deks: [cid(4)].into(),
        dek_after_content: [(cid(4), cid(104))].into(),
    };
    let mut l = LocalView::default();
    let p = plan(&w, &l, 0);
    assert_eq!(p.fetch, vec![(Kind::Content, cid(104))]);
    assert_eq!(p.dek_writes.len(), 1, "the DEK entry is written PENDING");
    apply(&mut l, &p);
    l.in_flight.clear();
    l.files.insert(cid(104));
    let p = plan(&w, &l, 0);
    assert_eq!(p.fetch, vec![(Kind::Dek, cid(4))]);
}

#[test]
fn backoff_doubles_and_caps() {
    assert_eq!(backoff_ms(1, 1000, 60_000), 1000);
    assert_eq!(backoff_ms(2, 1000, 60_000), 2000);
    assert_eq!(backoff_ms(4, 1000, 60_000), 8000);
    assert_eq!(backoff_ms(30, 1000, 60_000), 60_000);
    assert_eq!(backoff_ms(u32::MAX, u64::MAX, u64::MAX), u64::MAX);
}

#[test]
fn an_entry_cut_off_by_a_restart_keeps_its_attempts() {
    let a = Assignment {
        dek_cid: cid(1),
        content_cid: cid(2),
        encrypted_size: 10,
        replication_set: vec![[9; 32]],
        dek_holder_set: vec![],
        dek_commitment: vec![],
        images: vec![],
    };
    let w = wanted(&[9; 32], &[a]);
    let mut local = LocalView::default();
    let mut e = ContentSync {
        cid: cid(2),
        attempts: 3,
        retry_at_ms: 50,
        ..Default::default()
    };
    e.set_status(SyncStatus::Downloading);
    local.content_sync.insert(cid(2), e);
    let p = plan(&w, &local, 100);
    assert_eq!(p.fetch, vec![(Kind::Content, cid(2))]);
    assert_eq!(p.content_writes.len(), 1);
    let e = &p.content_writes[0];
    assert_eq!(e.status(), SyncStatus::Pending);
    assert_eq!(e.attempts, 3, "backoff goes on from the attempts so far");
}

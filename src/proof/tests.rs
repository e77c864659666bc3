//! The recorder, the proofs and the replay agree with the store: every
//! read a query can make, run through a [`Recorder`] over a committed view
//! and again over the [`Proven`] state its proof yields, gives the same rows.

use proptest::prelude::*;

use super::*;
use crate::proto::proof as pb;
use crate::store::{ChainStore, Changes, QueryRead, Space, StateRead, View};

#[derive(Debug, Clone)]
enum Read {
    Get(Space, Vec<u8>),
    Fwd(Space, Vec<u8>, Option<Vec<u8>>, usize),
    Rev(Space, Vec<u8>, Option<Vec<u8>>, usize),
}

type Out = Result<Vec<(Vec<u8>, Option<Vec<u8>>)>, String>;

fn run(r: &Read, s: &dyn QueryRead) -> Out {
    let rows = |rows: crate::store::Rows| rows.into_iter().map(|(k, v)| (k, Some(v))).collect();
    let e = |e: crate::store::StoreError| e.to_string();
    match r {
        Read::Get(Space::State, k) => Ok(vec![(k.clone(), s.get_raw(k).map_err(e)?)]),
        Read::Get(Space::Index, k) => Ok(vec![(k.clone(), s.get_index_raw(k).map_err(e)?)]),
        Read::Fwd(sp, p, a, n) => s.prefix_raw(*sp, p, a.as_deref(), *n).map(rows).map_err(e),
        Read::Rev(sp, p, b, n) => s
            .prefix_raw_rev(*sp, p, b.as_deref(), *n)
            .map(rows)
            .map_err(e),
    }
}

/// Small alphabets so keys collide with prefixes and bounds, with the top
/// bytes in (a reverse listing starts at `prefix ‖ 0xff × 64`).
fn byte() -> impl Strategy<Value = u8> + Clone {
    prop_oneof![0u8..3, 0xfeu8..=0xff]
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(byte(), 1..4)
}

fn space() -> impl Strategy<Value = Space> {
    prop_oneof![Just(Space::State), Just(Space::Index)]
}

fn read() -> impl Strategy<Value = Read> {
    let prefix = proptest::collection::vec(byte(), 0..3);
    prop_oneof![
        (space(), key()).prop_map(|(s, k)| Read::Get(s, k)),
        (
            space(),
            prefix.clone(),
            proptest::option::of(key()),
            0usize..5
        )
            .prop_map(|(s, p, a, n)| Read::Fwd(s, p, a, n)),
        (space(), prefix, proptest::option::of(key()), 0usize..5)
            .prop_map(|(s, p, b, n)| Read::Rev(s, p, b, n)),
    ]
}

/// A store whose genesis holds `state` and `index` (values may be empty).
fn store_with(
    state: &[(Vec<u8>, Vec<u8>)],
    index: &[(Vec<u8>, Vec<u8>)],
) -> (tempfile::TempDir, ChainStore, [u8; 32]) {
    let dir = tempfile::tempdir().unwrap();
    let store = ChainStore::open(dir.path()).unwrap();
    let mut c = Changes::default();
    for (k, v) in state {
        c.state.insert(k.clone(), Some(v.clone()));
    }
    for (k, v) in index {
        c.index.insert(k.clone(), Some(v.clone()));
    }
    let root = store.commit_genesis("c", 0, c).unwrap();
    (dir, store, root)
}

/// Runs `reads` through a recorder over `view`, proves them and checks
/// the proof against `root`.
fn recorded(
    store: &ChainStore,
    view: &View<'_>,
    reads: &[Read],
    root: &[u8],
) -> (Vec<Out>, pb::ReadProof, Proven) {
    let rec = Recorder::new(view);
    let outs = reads.iter().map(|r| run(r, &rec)).collect();
    let proof = prove(store, view, 0, rec).unwrap();
    let proven = check_entries(&proof, root, None).unwrap();
    (outs, proof, proven)
}

fn rows() -> impl Strategy<Value = Vec<(Vec<u8>, Vec<u8>)>> {
    proptest::collection::vec((key(), proptest::collection::vec(any::<u8>(), 0..3)), 0..12)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]
    #[test]
    fn replay_over_the_proof_reads_what_the_view_read(
        state in rows(), index in rows(), reads in proptest::collection::vec(read(), 1..8)
    ) {
        let (_dir, store, root) = store_with(&state, &index);
        let view = store.view();
        let direct: Vec<Out> = reads.iter().map(|r| run(r, &view)).collect();
        let (through, _, proven) = recorded(&store, &view, &reads, &root);
        prop_assert_eq!(&direct, &through);
        let again: Vec<Out> = reads.iter().map(|r| run(r, &proven)).collect();
        prop_assert_eq!(direct, again);
    }
}

#[test]
fn every_kind_of_tampering_is_caught() {
    let state = vec![
        (b"a1".to_vec(), b"x".to_vec()),
        (b"a2".to_vec(), Vec::new()),
        (b"b1".to_vec(), b"y".to_vec()),
    ];
    let (_dir, store, root) = store_with(&state, &[]);
    let view = store.view();
    let reads = [
        Read::Get(Space::State, b"a1".to_vec()),
        Read::Get(Space::State, b"a2".to_vec()),
        Read::Get(Space::State, b"zz".to_vec()),
    ];
    let (_, proof, proven) = recorded(&store, &view, &reads, &root);
    // An empty value is proven (by jmt's proof), an absent key too.
    assert_eq!(proven.get_raw(b"a2").unwrap(), Some(Vec::new()));
    assert_eq!(proven.get_raw(b"zz").unwrap(), None);
    assert!(matches!(
        proven.get_raw(b"b1"),
        Err(crate::store::StoreError::Unproven { .. })
    ));
    let bad = |f: &dyn Fn(&mut pb::ReadProof)| {
        let mut p = proof.clone();
        f(&mut p);
        check_entries(&p, &root, None).unwrap_err()
    };
    let e = bad(&|p| p.entries[0].value = b"z".to_vec());
    assert!(matches!(e, VerifyError::BadProof { .. }), "{e}");
    let e = bad(&|p| p.entries[0].key = b"b1".to_vec());
    assert!(matches!(e, VerifyError::BadProof { .. }), "{e}");
    // The empty value's entry carries jmt's proof: tampering with it fails too.
    assert!(!proof.entries[1].jmt_proof.is_empty());
    let e = bad(&|p| p.entries[1].value = b"not empty".to_vec());
    assert!(matches!(e, VerifyError::BadProof { .. }), "{e}");
    let e = bad(&|p| p.entries[1].key = b"b1".to_vec());
    assert!(matches!(e, VerifyError::BadProof { .. }), "{e}");
    let e = bad(&|p| p.entries[1].exists = false);
    assert!(matches!(e, VerifyError::BadProof { .. }), "{e}");
    let e = bad(&|p| p.entries[1].jmt_proof = vec![0xff; 40]);
    assert!(matches!(e, VerifyError::Decode { .. }), "{e}");
    let e = bad(&|p| p.entries[1].jmt_proof = vec![0; 1 << 20]);
    assert!(matches!(e, VerifyError::Decode { .. }), "{e}");
    let e = bad(&|p| p.entries[2].exists = true);
    assert!(matches!(e, VerifyError::BadProof { .. }), "{e}");
    let e = bad(&|p| {
        let row = pb::IndexRow {
            key: b"i".to_vec(),
            exists: true,
            value: b"v".to_vec(),
        };
        p.index_rows = vec![row.clone(), row];
    });
    assert!(matches!(e, VerifyError::Duplicate { .. }), "{e}");
    let e = bad(&|p| {
        let first = p.entries[0].clone();
        p.entries.push(first);
    });
    assert!(matches!(e, VerifyError::Duplicate { .. }), "{e}");
    let e = check_entries(&proof, &[7; 32], None).unwrap_err();
    assert!(matches!(e, VerifyError::BadProof { .. }), "{e}");
}

#[test]
fn reverse_listings_agree_at_the_top_of_a_prefix() {
    let p = b"p".to_vec();
    let at = |n: usize| [p.clone(), vec![0xff; n]].concat();
    let state = vec![
        (p.clone(), b"0".to_vec()),
        (at(63), b"1".to_vec()),
        (at(64), b"2".to_vec()),
        (at(65), b"3".to_vec()),
    ];
    let (_dir, store, root) = store_with(&state, &[]);
    let view = store.view();
    let reads = [
        Read::Rev(Space::State, p.clone(), None, 10),
        Read::Rev(Space::State, p.clone(), Some(at(64)), 10),
        Read::Rev(Space::State, p.clone(), Some(b"q".to_vec()), 10),
        Read::Rev(Space::State, p.clone(), Some(b"a".to_vec()), 10),
        Read::Fwd(Space::State, p.clone(), Some(at(63)), 10),
    ];
    let direct: Vec<Out> = reads.iter().map(|r| run(r, &view)).collect();
    let (_, _, proven) = recorded(&store, &view, &reads, &root);
    let again: Vec<Out> = reads.iter().map(|r| run(r, &proven)).collect();
    assert_eq!(direct, again);
}

#[test]
fn a_replay_that_differs_or_reads_outside_the_proof_is_refused() {
    let (_dir, store, root) = store_with(&[(b"k".to_vec(), b"v".to_vec())], &[]);
    let view = store.view();
    let (_, _, proven) = recorded(
        &store,
        &view,
        &[Read::Get(Space::State, b"k".to_vec())],
        &root,
    );
    let get = |s: &Proven, k: &[u8]| s.get_raw(k).map_err(|e| e.to_string());
    assert!(replay(&Some(b"v".to_vec()), &proven, |p| get(p, b"k")).is_ok());
    let e = replay(&Some(b"w".to_vec()), &proven, |p| get(p, b"k")).unwrap_err();
    assert!(matches!(e, VerifyError::Mismatch { .. }), "{e}");
    let e = replay(&None, &proven, |p| get(p, b"other")).unwrap_err();
    assert!(matches!(e, VerifyError::Replay(_)), "{e}");
}

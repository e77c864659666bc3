//! The local store heals itself: a corrupt database is moved aside, a
//! corrupt row is skipped and rewritten.

use super::*;
use crate::local::deks::DeksExt;
use crate::local::sync::SyncExt;
use crate::proto::local::{ContentSync, StoredDek, SyncStatus};

fn entry(cid: u8) -> ContentSync {
    let mut e = ContentSync {
        cid: vec![cid; 32],
        ..Default::default()
    };
    e.set_status(SyncStatus::Seeding);
    e
}

#[test]
fn a_corrupt_row_is_skipped_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let s = LocalStore::open(dir.path()).unwrap();
    s.put_sync(&entry(1)).unwrap();
    s.put_sync(&entry(3)).unwrap();
    s.put_raw(&keys::sync_content(&[2; 32]), &[0xff; 7])
        .unwrap();
    let before = crate::metrics::metrics().local_corrupt_rows.get();
    let all = s.all_content_sync().unwrap();
    assert_eq!(
        all.keys().cloned().collect::<Vec<_>>(),
        vec![vec![1; 32], vec![3; 32]]
    );
    assert!(crate::metrics::metrics().local_corrupt_rows.get() > before);
    // a DEK record that decodes but has no 32-byte ephemeral key is not held
    s.put_dek(&StoredDek {
        cid: vec![4; 32],
        wrapped_dek: vec![1; 48],
        ephemeral_pubkey: vec![2; 32],
        source_validator: vec![],
        job_id: vec![],
    })
    .unwrap();
    s.put_dek(&StoredDek {
        cid: vec![5; 32],
        wrapped_dek: vec![1; 48],
        ephemeral_pubkey: vec![2; 31],
        source_validator: vec![],
        job_id: vec![],
    })
    .unwrap();
    s.put_raw(&keys::dek(&[6; 32]), &[0xff; 3]).unwrap();
    assert_eq!(s.dek_cids().unwrap(), vec![vec![4; 32]]);
}

#[test]
fn a_corrupt_store_is_moved_aside_and_started_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local");
    {
        let s = LocalStore::open(&path).unwrap();
        s.put_sync(&entry(1)).unwrap();
    }
    for f in std::fs::read_dir(&path).unwrap() {
        let f = f.unwrap().path();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("MANIFEST-") {
            std::fs::write(&f, vec![0x5a; 4096]).unwrap();
        }
    }
    let (s, aside) = LocalStore::open_or_rebuild(&path).unwrap();
    let aside = aside.expect("moved aside");
    assert!(aside.exists() && aside.to_string_lossy().contains("local.corrupt-"));
    assert!(s.all_content_sync().unwrap().is_empty());
    s.put_sync(&entry(2)).unwrap();
    drop(s);
    // a healthy store opens in place
    let (s, aside) = LocalStore::open_or_rebuild(&path).unwrap();
    assert!(aside.is_none());
    assert_eq!(s.all_content_sync().unwrap().len(), 1);
}

#[test]
fn a_store_locked_by_a_running_node_is_not_moved() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("local");
    let _running = LocalStore::open(&path).unwrap();
    assert!(LocalStore::open_or_rebuild(&path).is_err());
    assert!(path.exists());
    let siblings = std::fs::read_dir(dir.path()).unwrap().count();
    assert_eq!(siblings, 1, "nothing moved aside");
}

#[test]
fn the_local_store_and_content_directories_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let local = dir.path().join("data/local");
    let content = dir.path().join("content");
    LocalStore::open(&local).unwrap();
    let store = crate::local::content::ContentStore::open(&content).unwrap();
    for d in [&local, &content] {
        let mode = std::fs::metadata(d).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", d.display());
    }
    // a scratch store lives under the temporary directory and goes whole
    let scratch = store.scratch().unwrap();
    let w = scratch.begin(&[7; 32], 4).unwrap();
    drop(w);
    assert_eq!(std::fs::read_dir(content.join(".tmp")).unwrap().count(), 1);
    scratch.discard().unwrap();
    assert_eq!(std::fs::read_dir(content.join(".tmp")).unwrap().count(), 0);
    // and a store opened again wipes any scratch a crash left
    let left = store.scratch().unwrap();
    drop(left);
    drop(store);
    crate::local::content::ContentStore::open(&content).unwrap();
    assert_eq!(std::fs::read_dir(content.join(".tmp")).unwrap().count(), 0);
}

#[test]
fn a_scrubbed_key_leaves_no_copy_in_the_store_files() {
    let dir = tempfile::tempdir().unwrap();
    let s = LocalStore::open(dir.path()).unwrap();
    let marker = b"wrapped-dek-marker-5e1f0c".repeat(4);
    let key = keys::dek(&[9; 34]);
    s.put_raw(&key, &marker).unwrap();
    s.put_raw(&keys::dek(&[8; 34]), b"another record").unwrap();
    s.db.flush().unwrap();
    let holds = |dir: &std::path::Path| {
        std::fs::read_dir(dir).unwrap().any(|e| {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            !name.starts_with("LOG")
                && std::fs::read(&p)
                    .is_ok_and(|b| b.windows(marker.len()).any(|w| w == marker.as_slice()))
        })
    };
    assert!(
        holds(dir.path()),
        "the value is in an SST file after the flush"
    );
    s.delete_raw(&key).unwrap();
    assert!(
        holds(dir.path()),
        "a delete alone leaves it behind its tombstone"
    );
    s.scrub(std::slice::from_ref(&key)).unwrap();
    assert!(!holds(dir.path()), "scrubbed out of every file");
    assert_eq!(
        s.get_raw(&keys::dek(&[8; 34])).unwrap().as_deref(),
        Some(&b"another record"[..])
    );
}

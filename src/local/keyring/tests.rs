//! The X25519 rotation re-wraps every held DEK, resumes after a crash at
//! any step, and leaves no copy of the old secret.

use super::*;
use crate::crypto::generate_dek;
use zeroize::Zeroizing;

struct Fixture {
    _dir: tempfile::TempDir,
    current: PathBuf,
    next: PathBuf,
    local: LocalStore,
    /// (cid, raw DEK) of every DEK stored.
    deks: Vec<(Vec<u8>, [u8; 32])>,
}

/// A home with an X25519 key and `n` DEKs wrapped to it.
fn fixture(n: u8) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let current = dir.path().join("x25519_key.json");
    let next = dir.path().join("x25519_key.next.json");
    let public = crate::keyfile::create_x25519(&current).unwrap();
    let local = LocalStore::open(&dir.path().join("local")).unwrap();
    let mut deks = Vec::new();
    for i in 0..n {
        let cid = vec![i; 36];
        let dek = generate_dek();
        store(&local, &cid, &dek, &public);
        deks.push((cid, *dek));
    }
    Fixture {
        _dir: dir,
        current,
        next,
        local,
        deks,
    }
}

fn store(local: &LocalStore, cid: &[u8], dek: &Dek, to: &[u8; 32]) {
    let w = wrap_dek(dek, to, cid).unwrap();
    local
        .put_dek(&StoredDek {
            cid: cid.to_vec(),
            wrapped_dek: w.ciphertext,
            ephemeral_pubkey: w.ephemeral_pubkey.to_vec(),
            source_validator: vec![7; 32],
            job_id: vec![3; 16],
        })
        .unwrap();
}

/// Every DEK opens under `secret` alone, to the DEK stored.
fn all_open_under(f: &Fixture, secret: &StaticSecret) {
    for (cid, raw) in &f.deks {
        let held = f.local.dek(cid).unwrap().unwrap();
        let dek = unwrap_dek(secret, &wrapped_of(&held).unwrap(), cid)
            .unwrap_or_else(|e| panic!("cid {}: {e}", hex::encode(cid)));
        assert_eq!(*dek, *raw);
        assert_eq!(held.source_validator, vec![7; 32], "the source is kept");
        assert_eq!(
            held.job_id,
            vec![3; 16],
            "the upload job that owns it is kept"
        );
    }
}

#[test]
fn a_rotation_rewraps_every_dek_once_the_chain_names_the_next_key() {
    let f = fixture(5);
    let ring = X25519Keyring::load(&f.current, &f.next).unwrap();
    let old = ring.current_public();
    // no next key yet: nothing happens, whatever the chain says
    assert_eq!(ring.advance(&f.local, &[9; 32]).unwrap(), None);
    let new = crate::keyfile::create_x25519(&f.next).unwrap();
    // the chain still names the old key: the next one is loaded only
    assert_eq!(ring.advance(&f.local, &old).unwrap(), None);
    assert_eq!(ring.next_public(), Some(new));
    assert_eq!(ring.own_public(), new, "own DEKs go to the next key");
    let (cid, raw) = &f.deks[0];
    let held = f.local.dek(cid).unwrap().unwrap();
    assert_eq!(
        *ring.unwrap(&wrapped_of(&held).unwrap(), cid).unwrap(),
        *raw
    );
    // a peer wraps to the next key once the chain names it: it opens too
    let w = wrap_dek(&Zeroizing::new(*raw), &new, cid).unwrap();
    assert_eq!(*ring.unwrap(&w, cid).unwrap(), *raw);

    let done = ring.advance(&f.local, &new).unwrap();
    assert_eq!(
        done,
        Some(Rotated {
            rewrapped: 5,
            unopened: 0
        })
    );
    assert_eq!(ring.current_public(), new);
    assert_eq!(ring.next_public(), None);
    assert!(!f.next.exists(), "the next key file became the current one");
    let on_disk = crate::keyfile::load_x25519(&f.current).unwrap();
    assert_eq!(public(&on_disk), new, "the old secret is gone from disk");
    all_open_under(&f, &on_disk);
    // done: later rounds change nothing
    assert_eq!(ring.advance(&f.local, &new).unwrap(), None);
}

#[test]
fn a_rotation_interrupted_halfway_resumes_from_the_files() {
    let f = fixture(6);
    let new = crate::keyfile::create_x25519(&f.next).unwrap();
    // a crash after three DEKs were re-wrapped, before the rename
    for (cid, raw) in &f.deks[..3] {
        store(&f.local, cid, &Zeroizing::new(*raw), &new);
    }
    let ring = X25519Keyring::load(&f.current, &f.next).unwrap();
    let done = ring.advance(&f.local, &new).unwrap().unwrap();
    assert_eq!(done.rewrapped, 3, "only the rest are re-wrapped");
    all_open_under(&f, &crate::keyfile::load_x25519(&f.current).unwrap());

    // a crash after the rename: the restarted node holds the new key only
    let ring = X25519Keyring::load(&f.current, &f.next).unwrap();
    assert_eq!(ring.current_public(), new);
    assert_eq!(ring.advance(&f.local, &new).unwrap(), None);
}

#[test]
fn a_dek_no_key_opens_is_counted_and_left_alone() {
    let f = fixture(2);
    let stranger = StaticSecret::from([5; 32]);
    store(&f.local, &[0xee; 36], &generate_dek(), &public(&stranger));
    let new = crate::keyfile::create_x25519(&f.next).unwrap();
    let ring = X25519Keyring::load(&f.current, &f.next).unwrap();
    let done = ring.advance(&f.local, &new).unwrap().unwrap();
    assert_eq!(
        done,
        Rotated {
            rewrapped: 2,
            unopened: 1
        }
    );
    let held = f.local.dek(&[0xee; 36]).unwrap().unwrap();
    assert!(unwrap_dek(&stranger, &wrapped_of(&held).unwrap(), &[0xee; 36]).is_ok());
}

#[test]
fn a_keyring_in_memory_seals_to_its_one_key() {
    let secret = StaticSecret::from([4; 32]);
    let ring = X25519Keyring::from(secret.clone());
    let dek = generate_dek();
    let w = ring.seal_own(&dek, b"cid", |w| w.unwrap());
    assert_eq!(*unwrap_dek(&secret, &w, b"cid").unwrap(), *dek);
    let f = fixture(0);
    assert_eq!(ring.advance(&f.local, &[1; 32]).unwrap(), None);
}

#[test]
fn a_next_key_file_that_cannot_be_read_fails_the_step_and_changes_nothing() {
    let f = fixture(2);
    let ring = X25519Keyring::load(&f.current, &f.next).unwrap();
    let old = ring.current_public();
    crate::keyfile::write_private(&f.next, b"{").unwrap();
    assert!(ring.advance(&f.local, &old).is_err());
    assert_eq!(ring.next_public(), None);
    assert_eq!(
        ring.own_public(),
        old,
        "own DEKs still go to the current key"
    );
    all_open_under(&f, &crate::keyfile::load_x25519(&f.current).unwrap());
    // the operator replaces the file: the next round goes on
    std::fs::remove_file(&f.next).unwrap();
    let new = crate::keyfile::create_x25519(&f.next).unwrap();
    let done = ring.advance(&f.local, &new).unwrap();
    assert_eq!(done.map(|d| d.rewrapped), Some(2));
}

#[test]
fn a_dek_written_once_the_next_key_loads_is_wrapped_to_it() {
    let f = fixture(1);
    let ring = X25519Keyring::load(&f.current, &f.next).unwrap();
    let new = crate::keyfile::create_x25519(&f.next).unwrap();
    assert_eq!(
        ring.advance(&f.local, &ring.current_public()).unwrap(),
        None
    );
    let dek = generate_dek();
    ring.seal_own(&dek, &[0xab; 36], |w| {
        let w = w.unwrap();
        f.local
            .put_dek(&StoredDek {
                cid: vec![0xab; 36],
                wrapped_dek: w.ciphertext,
                ephemeral_pubkey: w.ephemeral_pubkey.to_vec(),
                ..Default::default()
            })
            .unwrap();
    });
    let done = ring.advance(&f.local, &new).unwrap().unwrap();
    assert_eq!(done.rewrapped, 1, "only the DEK from before the next key");
    let held = f.local.dek(&[0xab; 36]).unwrap().unwrap();
    let on_disk = crate::keyfile::load_x25519(&f.current).unwrap();
    assert_eq!(
        *unwrap_dek(&on_disk, &wrapped_of(&held).unwrap(), &[0xab; 36]).unwrap(),
        *dek
    );
}

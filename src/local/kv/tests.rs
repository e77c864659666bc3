//! The local scenarios of BRC-35 Appendix E (`000_140cf90c8625513b.txt`)
//! on a real local store (RocksDB in a temporary directory).

use super::*;
use crate::local::LocalStore;

fn store() -> (tempfile::TempDir, LocalStore) {
    let dir = tempfile::tempdir().unwrap();
    let s = LocalStore::open(&dir.path().join("local")).unwrap();
    (dir, s)
}

fn raw_row(s: &LocalStore, context: &str, key: &[u8]) -> Vec<u8> {
    s.get_raw(&keys::kv(context, key)).unwrap().unwrap()
}

/// Appendix E: local encrypted set, get, update and remove.
#[test]
fn encrypted_set_get_update_remove() {
    let (_d, s) = store();
    let kek = Kek::from_bytes([7; 32]);
    let kv = LocalKv {
        store: &s,
        kek: &kek,
    };
    assert_eq!(kv.get("app", b"k").unwrap(), None);
    assert!(!kv.set("app", b"k", b"first secret", false, 10).unwrap());
    let got = kv.get("app", b"k").unwrap().unwrap();
    assert_eq!(
        (got.value.as_slice(), got.encrypted, got.updated_ms),
        (&b"first secret"[..], true, 10)
    );
    let row = raw_row(&s, "app", b"k");
    assert!(
        !row.windows(6).any(|w| w == b"secret"),
        "the value is not stored in the clear"
    );
    assert!(
        kv.set("app", b"k", b"second", false, 11).unwrap(),
        "an update replaces the row"
    );
    assert_eq!(kv.get("app", b"k").unwrap().unwrap().value, b"second");
    assert!(kv.remove("app", b"k").unwrap());
    assert_eq!(kv.get("app", b"k").unwrap(), None);
    assert!(!kv.remove("app", b"k").unwrap(), "nothing left to remove");
}

/// Appendix E: the plaintext profile, by explicit choice.
#[test]
fn plaintext_profile_stores_the_value_as_it_is() {
    let (_d, s) = store();
    let kek = Kek::from_bytes([7; 32]);
    let kv = LocalKv {
        store: &s,
        kek: &kek,
    };
    kv.set("app", b"k", b"visible", true, 5).unwrap();
    let got = kv.get("app", b"k").unwrap().unwrap();
    assert_eq!(
        (got.value.as_slice(), got.encrypted),
        (&b"visible"[..], false)
    );
    assert!(raw_row(&s, "app", b"k").windows(7).any(|w| w == b"visible"));
    // Another KEK still reads a plaintext row.
    let other = Kek::from_bytes([8; 32]);
    let kv2 = LocalKv {
        store: &s,
        kek: &other,
    };
    assert_eq!(kv2.get("app", b"k").unwrap().unwrap().value, b"visible");
}

/// Appendix E: duplicate collapse and the newest live value. With one row
/// per (context, key) no duplicate can exist: every set leaves exactly one
/// row, holding the newest value.
#[test]
fn one_row_per_tuple_holds_the_newest_value() {
    let (_d, s) = store();
    let kek = Kek::from_bytes([7; 32]);
    let kv = LocalKv {
        store: &s,
        kek: &kek,
    };
    for (i, v) in [&b"a"[..], b"b", b"c"].iter().enumerate() {
        kv.set("app", b"k", v, i % 2 == 1, i as u64).unwrap();
    }
    assert_eq!(s.scan_raw(&keys::kv_prefix("app")).unwrap().len(), 1);
    let got = kv.get("app", b"k").unwrap().unwrap();
    assert_eq!((got.value.as_slice(), got.updated_ms), (&b"c"[..], 2));
}

/// Appendix E: corrupted tokens are never returned as values; relinquish
/// removes them and set replaces them.
#[test]
fn corrupt_rows_are_never_values_and_can_be_recovered() {
    let (_d, s) = store();
    let kek = Kek::from_bytes([7; 32]);
    let kv = LocalKv {
        store: &s,
        kek: &kek,
    };
    kv.set("app", b"good", b"v", false, 1).unwrap();
    kv.set("app", b"moved", b"v", false, 1).unwrap();
    // A row that does not decode.
    s.put_raw(&keys::kv("app", b"junk"), b"\xff\xff\xff")
        .unwrap();
    // A ciphertext copied under another key: the AAD binds it to its own.
    let good = raw_row(&s, "app", b"good");
    s.put_raw(&keys::kv("app", b"moved"), &good).unwrap();
    // A flipped ciphertext bit.
    let mut rec = LocalKvRecord::decode(good.as_slice()).unwrap();
    rec.body[0] ^= 1;
    s.put_raw(&keys::kv("app", b"flipped"), &rec.encode_to_vec())
        .unwrap();
    for k in [&b"junk"[..], b"moved", b"flipped"] {
        let e = kv.get("app", k).unwrap_err();
        assert!(matches!(e, KvError::Corrupt { .. }), "{e}");
        assert!(
            e.to_string().contains("relinquish"),
            "the error says how to recover: {e}"
        );
    }
    // Another node's KEK opens nothing.
    let other = Kek::from_bytes([8; 32]);
    assert!(matches!(
        LocalKv {
            store: &s,
            kek: &other
        }
        .get("app", b"good"),
        Err(KvError::Corrupt { .. })
    ));
    let (entries, more) = kv.list("app", b"", b"", 0, true).unwrap();
    assert!(!more);
    let marked: Vec<_> = entries
        .iter()
        .filter(|e| !e.corrupt.is_empty())
        .map(|e| e.key.as_slice())
        .collect();
    assert_eq!(marked, [&b"flipped"[..], b"junk", b"moved"]);
    assert!(entries
        .iter()
        .all(|e| e.corrupt.is_empty() || e.value.is_empty()));
    // Recovery: relinquish refuses a healthy entry, removes a corrupt one;
    // set replaces one.
    assert!(matches!(
        kv.relinquish("app", b"good"),
        Err(KvError::Healthy { .. })
    ));
    assert!(kv.relinquish("app", b"junk").unwrap());
    assert_eq!(kv.get("app", b"junk").unwrap(), None);
    assert!(kv.set("app", b"moved", b"fresh", false, 2).unwrap());
    assert_eq!(kv.get("app", b"moved").unwrap().unwrap().value, b"fresh");
    assert!(!kv.relinquish("app", b"absent").unwrap());
}

#[test]
fn contexts_are_separate_and_checked() {
    let (_d, s) = store();
    let kek = Kek::from_bytes([7; 32]);
    let kv = LocalKv {
        store: &s,
        kek: &kek,
    };
    kv.set("a", b"k", b"1", false, 1).unwrap();
    kv.set("a.b", b"k", b"2", false, 1).unwrap();
    let (a, _) = kv.list("a", b"", b"", 0, true).unwrap();
    assert_eq!(a.len(), 1, "a context's listing holds only its own keys");
    assert_eq!(a[0].value, b"1");
    // A ciphertext moved to another context does not open there.
    s.put_raw(&keys::kv("a.b", b"k"), &raw_row(&s, "a", b"k"))
        .unwrap();
    assert!(matches!(kv.get("a.b", b"k"), Err(KvError::Corrupt { .. })));
    for bad in ["", "a/b", "sp ace", &"x".repeat(MAX_CONTEXT + 1)] {
        assert!(
            matches!(
                kv.set(bad, b"k", b"v", false, 1),
                Err(KvError::BadContext(_))
            ),
            "{bad:?}"
        );
    }
    assert!(matches!(kv.get("a", b""), Err(KvError::BadKey(0))));
    assert!(matches!(
        kv.set("a", &vec![1; MAX_KEY + 1], b"v", false, 1),
        Err(KvError::BadKey(_))
    ));
    assert!(matches!(
        kv.set("a", b"k", &vec![0; MAX_VALUE + 1], false, 1),
        Err(KvError::TooLarge(_))
    ));
}

#[test]
fn list_pages_by_prefix_and_start_after() {
    let (_d, s) = store();
    let kek = Kek::from_bytes([7; 32]);
    let kv = LocalKv {
        store: &s,
        kek: &kek,
    };
    for i in 0..25u8 {
        kv.set("app", format!("user:{i:02}").as_bytes(), &[i], false, 1)
            .unwrap();
    }
    kv.set("app", b"zzz", b"other", false, 1).unwrap();
    let mut seen = Vec::new();
    let mut after = Vec::new();
    loop {
        let (page, more) = kv.list("app", b"user:", &after, 10, false).unwrap();
        assert!(page
            .iter()
            .all(|e| e.value.is_empty() && e.corrupt.is_empty()));
        seen.extend(page.iter().map(|e| e.key.clone()));
        match page.last() {
            Some(last) if more => after = last.key.clone(),
            _ => break,
        }
    }
    let want: Vec<Vec<u8>> = (0..25u8)
        .map(|i| format!("user:{i:02}").into_bytes())
        .collect();
    assert_eq!(seen, want);
    let (all, more) = kv.list("app", b"", b"", 0, false).unwrap();
    assert_eq!((all.len(), more), (26, false), "no limit named: 100");
}

#[test]
fn a_page_stops_at_the_limit_cap_and_at_the_byte_budget() {
    let (_d, s) = store();
    let kek = Kek::from_bytes([7; 32]);
    let kv = LocalKv {
        store: &s,
        kek: &kek,
    };
    for i in 0..MAX_LIST + 5 {
        kv.set("many", format!("{i:05}").as_bytes(), b"v", true, 1)
            .unwrap();
    }
    let (page, more) = kv.list("many", b"", b"", 5000, false).unwrap();
    assert_eq!(
        (page.len(), more),
        (MAX_LIST, true),
        "a limit over the cap is cut to it"
    );
    // Values of 900 KiB: two fit the 2 MiB budget, a third would not.
    let big = vec![7u8; 900 << 10];
    for k in [&b"a"[..], b"b", b"c", b"d", b"e"] {
        kv.set("big", k, &big, false, 1).unwrap();
    }
    let mut keys = Vec::new();
    let mut after = Vec::new();
    loop {
        let (page, more) = kv.list("big", b"", &after, 100, true).unwrap();
        assert!(
            !page.is_empty() && page.len() <= 2,
            "{} entries",
            page.len()
        );
        assert!(page.iter().all(|e| e.value == big));
        keys.extend(page.iter().map(|e| e.key.clone()));
        after = page.last().unwrap().key.clone();
        if !more {
            break;
        }
    }
    assert_eq!(
        keys,
        [
            b"a".to_vec(),
            b"b".to_vec(),
            b"c".to_vec(),
            b"d".to_vec(),
            b"e".to_vec()
        ]
    );
}

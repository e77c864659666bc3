use super::*;

const PASS: &str = "correct horse battery";

#[test]
fn a_sealed_secret_opens_with_its_passphrase_only() {
    let s = seal(PASS, b"the kek", [7; 16], [9; 12]).unwrap();
    assert_eq!(open(PASS, &s).unwrap().as_slice(), b"the kek");
    assert!(!s.ciphertext.contains(&hex::encode(b"the kek")));
    assert!(matches!(
        open("correct horse battery!", &s),
        Err(BackupError::WrongPassphrase)
    ));
    let mut flipped = s.clone();
    flipped.ciphertext.replace_range(
        0..2,
        if &s.ciphertext[..2] == "00" {
            "01"
        } else {
            "00"
        },
    );
    assert!(matches!(
        open(PASS, &flipped),
        Err(BackupError::WrongPassphrase)
    ));
    let mut salted = s.clone();
    salted.salt = hex::encode([8u8; 16]);
    assert!(matches!(
        open(PASS, &salted),
        Err(BackupError::WrongPassphrase)
    ));
}

#[test]
fn short_passphrases_and_absurd_costs_are_refused() {
    assert!(matches!(
        seal("short", b"k", [0; 16], [0; 12]),
        Err(BackupError::ShortPassphrase(5))
    ));
    let mut s = seal(PASS, b"k", [0; 16], [0; 12]).unwrap();
    s.m_cost_kib = u32::MAX;
    assert!(
        matches!(open(PASS, &s), Err(BackupError::WrongPassphrase)),
        "no 4 TiB allocation"
    );
}

fn manifest() -> Manifest {
    Manifest {
        format: FORMAT.into(),
        chain_id: "stave-1".into(),
        height: 10,
        operator: "ab".into(),
        created: "2026-12-06T00:00:00Z".into(),
        files: vec![FileEntry {
            path: "config/stave.toml".into(),
            sha256: "00".into(),
        }],
        local: false,
        kek_sealed: false,
    }
}

#[test]
fn a_manifest_of_another_chain_format_or_path_is_refused() {
    assert!(check(&manifest(), "stave-1").is_ok());
    assert!(matches!(
        check(&manifest(), "stave-2"),
        Err(BackupError::OtherChain { found, want }) if found == "stave-1" && want == "stave-2"
    ));
    let mut m = manifest();
    m.format = "stave-backup/0".into();
    assert!(matches!(check(&m, "stave-1"), Err(BackupError::Format(_))));
    for bad in ["../etc/passwd", "/etc/passwd", "config/../../x", ""] {
        let mut m = manifest();
        m.files[0].path = bad.into();
        assert!(
            matches!(check(&m, "stave-1"), Err(BackupError::BadPath(_))),
            "{bad}"
        );
    }
}

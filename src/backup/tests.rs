use super::*;

const PASS: &str = "correct horse battery";

fn wrong(r: Result<Zeroizing<Vec<u8>>, BackupError>) -> bool {
    matches!(r, Err(BackupError::WrongPassphrase))
}

#[test]
fn a_sealed_secret_opens_with_its_passphrase_only() {
    let s = seal(PASS, b"the kek", [7; 16], [9; 12]).unwrap();
    assert_eq!(open(PASS, &s).unwrap().as_slice(), b"the kek");
    assert!(!s.ciphertext.contains(&hex::encode(b"the kek")));
    assert!(wrong(open("correct horse battery!", &s)));
    let mut flipped = s.clone();
    let first = if &s.ciphertext[..2] == "00" {
        "01"
    } else {
        "00"
    };
    flipped.ciphertext.replace_range(0..2, first);
    assert!(wrong(open(PASS, &flipped)));
    let mut salted = s.clone();
    salted.salt = hex::encode([8u8; 16]);
    assert!(wrong(open(PASS, &salted)));
}

#[test]
fn short_passphrases_absurd_costs_and_other_kdfs_are_refused() {
    let short = seal("short", b"k", [0; 16], [0; 12]);
    assert!(matches!(short, Err(BackupError::ShortPassphrase(5))));
    let sealed = seal(PASS, b"k", [0; 16], [0; 12]).unwrap();
    let mut s = sealed.clone();
    s.m_cost_kib = 4 * 1024 * 1024;
    let r = open(PASS, &s);
    assert!(
        matches!(r, Err(BackupError::KdfParams { .. })),
        "no 4 GiB allocation"
    );
    let mut s = sealed.clone();
    s.t_cost = 64;
    let r = open(PASS, &s);
    assert!(
        matches!(r, Err(BackupError::KdfParams { .. })),
        "no minutes of passes"
    );
    let mut s = sealed.clone();
    s.kdf = "scrypt".into();
    assert!(matches!(open(PASS, &s), Err(BackupError::SealedFormat(_))));
    let mut s = sealed;
    s.nonce = "zz".into();
    assert!(matches!(open(PASS, &s), Err(BackupError::SealedFormat(_))));
}

fn entry(path: &str) -> FileEntry {
    FileEntry {
        path: path.into(),
        sha256: "00".into(),
    }
}

fn manifest() -> Manifest {
    Manifest {
        format: FORMAT.into(),
        chain_id: "stave-1".into(),
        height: 10,
        operator: "ab".into(),
        created: "2026-12-06T00:00:00Z".into(),
        files: vec![
            entry("config/stave.toml"),
            entry("config/operator_key.json"),
        ],
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
    let bad_paths = [
        "../etc/passwd",
        "/etc/passwd",
        "config/../../x",
        "",
        "config/local_kek.json",
        "config/x/y",
        "local/a/b",
        "local/../x",
        "local",
    ];
    for bad in bad_paths {
        let mut m = manifest();
        m.files.push(entry(bad));
        let r = check(&m, "stave-1");
        assert!(matches!(r, Err(BackupError::BadPath(_))), "{bad}");
    }
}

#[test]
fn a_manifest_names_each_file_once_and_what_its_flags_say() {
    let mut m = manifest();
    m.files.push(entry("config/stave.toml"));
    assert!(matches!(
        check(&m, "stave-1"),
        Err(BackupError::Duplicate(_))
    ));
    let mut m = manifest();
    m.files.retain(|f| f.path != "config/operator_key.json");
    let r = check(&m, "stave-1");
    assert!(matches!(r, Err(BackupError::Missing(p)) if p == "config/operator_key.json"));
    let mut m = manifest();
    m.kek_sealed = true;
    let r = check(&m, "stave-1");
    assert!(matches!(r, Err(BackupError::Flag("kek_sealed", _))));
    let mut m = manifest();
    m.local = true;
    assert!(matches!(
        check(&m, "stave-1"),
        Err(BackupError::Flag("local", _))
    ));
    m.files.push(entry("local/CURRENT"));
    assert!(check(&m, "stave-1").is_ok());
}

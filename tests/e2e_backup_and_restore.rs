//! `stave backup` / `stave restore` on a real 4-validator localnet (base
//! port 10000), through the real binary:
//!
//! 1. Node 1 keeps a private KV value (sealed under its KEK). A backup of
//!    config and keys is taken while it runs; one with `--local` is refused
//!    then and leaves nothing; stopped, it is taken with the KEK sealed
//!    under a passphrase, which appears in no file of the backup.
//! 2. Refused, with nothing written: another chain id, no passphrase, a
//!    wrong passphrase, a changed file, a home that is in use (left as it was).
//! 3. Node 1's Stave home is wiped and restored: the key files are the same
//!    bytes (mode 0600); started, the node replays the chain from CometBFT's
//!    blocks to its peers' app hash, and its private KV value reads back.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::time::Duration;

use common::localnet::{binaries, Localnet, LocalnetConfig};

const WAIT: Duration = Duration::from_secs(120);
const BASE_PORT: u16 = 10000;
const PASSPHRASE: &str = "a long backup passphrase";

fn stave(net: &Localnet, args: &[&str]) -> Output {
    let mut full = vec!["--output", "json"];
    full.extend_from_slice(args);
    net.stave_cmd(&full)
}

fn ok(net: &Localnet, what: &str, args: &[&str]) -> serde_json::Value {
    let out = stave(net, args);
    net.expect_success(what, &out);
    net.json_of(what, &out)
}

/// Runs a command that must fail, and returns its stderr.
fn refused(net: &Localnet, what: &str, args: &[&str]) -> String {
    let out = stave(net, args);
    assert!(
        !out.status.success(),
        "{what} succeeded: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn kv(net: &Localnet, args: &[&str]) -> serde_json::Value {
    let home = net.stave_home(1);
    let mut full = vec!["local", "kv"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--home", home.to_str().unwrap(), "--context", "ops"]);
    ok(net, "stave local kv", &full)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Every refusal of step 2; `target` must stay empty throughout.
fn refusals(net: &Localnet, backup: &Path, pass: &Path, target: &Path) {
    let restore = |chain: &str, extra: &[&str]| {
        let mut a = vec!["restore", "--from", s(backup), "--home", s(target)];
        a.extend_from_slice(&["--chain-id", chain]);
        a.extend_from_slice(extra);
        a.iter().map(|x| x.to_string()).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        refused(net, "stave restore", &refs)
    };
    let other = run(restore(
        "another-chain",
        &["--kek-passphrase-file", s(pass)],
    ));
    assert!(other.contains("not \"another-chain\""), "{other}");
    let none = run(restore(&net.chain_id, &[]));
    assert!(none.contains("--kek-passphrase-file"), "{none}");
    let wrong = target.with_extension("wrong");
    std::fs::write(&wrong, "not the passphrase at all\n").unwrap();
    let bad = run(restore(
        &net.chain_id,
        &["--kek-passphrase-file", s(&wrong)],
    ));
    assert!(bad.contains("wrong passphrase"), "{bad}");

    let tampered = backup.with_extension("tampered");
    copy_dir(backup, &tampered);
    let toml = tampered.join("config/stave.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str("\n# changed\n");
    std::fs::write(&toml, text).unwrap();
    let mut a = restore(&net.chain_id, &["--kek-passphrase-file", s(pass)]);
    a[2] = tampered.display().to_string();
    let damaged = run(a);
    assert!(
        damaged.contains("config/stave.toml does not match the manifest"),
        "{damaged}"
    );

    let home0 = net.stave_home(0);
    let toml0 = std::fs::read(home0.join("config/stave.toml")).unwrap();
    let busy = refused(
        net,
        "stave restore into a live home",
        &[
            "restore",
            "--from",
            s(backup),
            "--home",
            s(&home0),
            "--chain-id",
            &net.chain_id,
        ],
    );
    assert!(busy.contains("already holds a Stave config"), "{busy}");
    assert_eq!(
        std::fs::read(home0.join("config/stave.toml")).unwrap(),
        toml0
    );
    assert!(
        !target.exists() || std::fs::read_dir(target).unwrap().next().is_none(),
        "a refused restore wrote into {}",
        target.display()
    );
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_and_restore_bring_a_validator_back() {
    let Some(bins) = binaries("backup_and_restore_bring_a_validator_back") else {
        return;
    };
    let net = Localnet::new(&bins, LocalnetConfig::new(4, BASE_PORT));
    net.up();
    net.wait_status_ok(WAIT).await;
    kv(&net, &["set", "notice", "kept across a restore"]);
    net.commit_kv_txs(0, 0x4B, "backup", 3).await;

    let scratch = tempfile::tempdir().unwrap();
    let (backup, pass) = (scratch.path().join("backup"), scratch.path().join("pass"));
    std::fs::write(&pass, format!("{PASSPHRASE}\n")).unwrap();
    let home = net.stave_home(1);
    let args = [
        "backup",
        "--home",
        s(&home),
        "--out",
        s(&backup),
        "--local",
        "--kek-passphrase-file",
        s(&pass),
    ];
    let keys_only = scratch.path().join("keys-only");
    let k = ok(
        &net,
        "stave backup of a running node",
        &["backup", "--home", s(&home), "--out", s(&keys_only)],
    );
    assert_eq!(
        (k["local"].as_bool(), k["kek"].as_str()),
        (Some(false), Some("not included")),
        "{k}"
    );
    assert!(
        keys_only.join("config/operator_key.json").exists() && !keys_only.join("local").exists()
    );
    let live = refused(&net, "stave backup --local of a running node", &args);
    assert!(live.contains("stop the node"), "{live}");
    assert!(!backup.exists(), "a refused backup leaves nothing behind");
    net.stop(1);
    let b = ok(&net, "stave backup", &args);
    assert_eq!(b["chain_id"], net.chain_id.as_str(), "{b}");
    assert_eq!(b["local"], true, "{b}");
    assert!(b["height"].as_u64() > Some(0), "{b}");

    let key_files = [
        "config/operator_key.json",
        "config/x25519_key.json",
        "config/local_kek.json",
    ];
    let before: Vec<Vec<u8>> = key_files
        .iter()
        .map(|f| std::fs::read(home.join(f)).unwrap())
        .collect();
    let kek: serde_json::Value = serde_json::from_slice(&before[2]).unwrap();
    let secret = kek["secret_key"].as_str().unwrap().to_string();
    assert_eq!(secret.len(), 64, "{kek}");
    assert!(!backup.join("config/local_kek.json").exists());
    let raw = hex::decode(&secret).unwrap();
    for f in walk(&backup) {
        let bytes = std::fs::read(&f).unwrap();
        let text = String::from_utf8_lossy(&bytes).to_lowercase();
        assert!(
            !text.contains(&secret),
            "the KEK is in the clear in {}",
            f.display()
        );
        assert!(
            !bytes.windows(32).any(|w| w == raw.as_slice()),
            "{}",
            f.display()
        );
    }

    refusals(&net, &backup, &pass, &scratch.path().join("empty-home"));

    std::fs::remove_dir_all(&home).unwrap();
    let r = ok(
        &net,
        "stave restore",
        &[
            "restore",
            "--from",
            s(&backup),
            "--home",
            s(&home),
            "--chain-id",
            &net.chain_id,
            "--kek-passphrase-file",
            s(&pass),
        ],
    );
    let operator: serde_json::Value = serde_json::from_slice(&before[0]).unwrap();
    assert_eq!(r["operator"], operator["public_key"], "{r}");
    for (f, bytes) in key_files.iter().zip(&before) {
        let path = home.join(f);
        assert_eq!(&std::fs::read(&path).unwrap(), bytes, "{f}");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{f}");
    }
    net.restart(1);
    let top = net.max_comet_height().await;
    net.wait_stave_height(1, top, WAIT).await;
    net.assert_app_hashes_agree(WAIT).await;
    let v = kv(&net, &["get", "notice"]);
    assert_eq!(v["value"], "kept across a restore", "{v}");
    assert_eq!(v["encrypted"], true, "{v}");
}

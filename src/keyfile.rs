//! Key files: private keys live in JSON files of mode 0600, never in RocksDB.

use std::fs::OpenOptions;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

/// The on-disk form of a key.
#[derive(Debug, Serialize, Deserialize)]
pub struct KeyFile {
    /// `ed25519` or `x25519`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Hex of the 32-byte public key.
    pub public_key: String,
    /// Hex of the 32-byte secret (the ed25519 seed, or the X25519 scalar).
    pub secret_key: String,
}

/// Writes `contents` to a new file of mode 0600 (refusing to overwrite),
/// creating its directory with mode 0700 when missing. The bytes go to a
/// temporary file first, synced, then linked into place and the directory
/// synced: a crash or a full disk never leaves a partial key file, and a
/// key file that exists survives a power cut. (On a file system without
/// hard links, such as FAT, the file is written in place.)
pub fn write_private(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    let dir = dir_of(path);
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    remove_stale_temps(path);
    let tmp = temp_of(path, &format!("{:016x}", rand::random::<u64>()));
    write_synced(&tmp, contents)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {}
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::Unsupported | ErrorKind::PermissionDenied
            ) =>
        {
            return write_synced(path, contents);
        }
        Err(e) => anyhow::bail!("creating {}: {e}", path.display()),
    }
    sync_dir(path).map_err(|e| anyhow::anyhow!("syncing {}: {e}", dir.display()))
}

/// The directory `path` is in (`.` for a bare file name).
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Syncs the directory `path` is in, so that a file created or renamed
/// there survives a power cut.
pub fn sync_dir(path: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir_of(path))?.sync_all()
}

/// `.{name}.tmp-{suffix}` beside `path`.
fn temp_of(path: &Path, suffix: &str) -> std::path::PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.tmp-{suffix}"))
}

/// Removes temporary files that a write of `path` killed halfway left
/// beside it (each may hold a secret).
pub fn remove_stale_temps(path: &Path) {
    let prefix = temp_of(path, "");
    let Some(prefix) = prefix.file_name().map(|p| p.to_string_lossy()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir_of(path)) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(prefix.as_ref()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// A new file of mode 0600 holding `contents`, synced; removed again when
/// the write fails (a full disk), so no partial file is left.
fn write_synced(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    let mut f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| anyhow::anyhow!("creating {}: {e}", path.display()))?;
    if let Err(e) = f.write_all(contents).and_then(|()| f.sync_all()) {
        drop(f);
        let _ = std::fs::remove_file(path);
        anyhow::bail!("writing {}: {e}", path.display());
    }
    Ok(())
}

fn read_secret(path: &Path, kind: &str) -> anyhow::Result<Zeroizing<[u8; 32]>> {
    let mode = std::fs::metadata(path)
        .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?
        .permissions()
        .mode();
    anyhow::ensure!(
        mode & 0o077 == 0,
        "{} is readable by others (mode {:o}); run chmod 600 on it",
        path.display(),
        mode & 0o777
    );
    let text = Zeroizing::new(
        std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?,
    );
    let kf: KeyFile = serde_json::from_str(&text)?;
    let secret_hex = Zeroizing::new(kf.secret_key);
    anyhow::ensure!(
        kf.kind == kind,
        "{} holds a {} key, not {kind}",
        path.display(),
        kf.kind
    );
    let bytes = Zeroizing::new(hex::decode(secret_hex.as_str())?);
    let arr: [u8; 32] = bytes
        .as_slice()
        .try_into()
        .map_err(|_| anyhow::anyhow!("{}: secret is not 32 bytes", path.display()))?;
    Ok(Zeroizing::new(arr))
}

/// Writes a key file; every copy of the secret is zeroized after use.
fn write_key(path: &Path, kind: &str, public: &[u8; 32], secret: &[u8; 32]) -> anyhow::Result<()> {
    let kf = KeyFile {
        kind: kind.into(),
        public_key: hex::encode(public),
        secret_key: hex::encode(secret),
    };
    let text = Zeroizing::new(serde_json::to_string_pretty(&kf)?);
    let _secret_hex = Zeroizing::new(kf.secret_key);
    write_private(path, text.as_bytes())
}

/// Generates a new ed25519 key file; returns the key.
pub fn create_ed25519(path: &Path) -> anyhow::Result<ed25519_dalek::SigningKey> {
    let key = ed25519_dalek::SigningKey::generate(&mut rand::rngs::OsRng);
    let seed = Zeroizing::new(key.to_bytes());
    write_key(path, "ed25519", &key.verifying_key().to_bytes(), &seed)?;
    Ok(key)
}

/// Loads an ed25519 key file.
pub fn load_ed25519(path: &Path) -> anyhow::Result<ed25519_dalek::SigningKey> {
    let secret = read_secret(path, "ed25519")?;
    Ok(ed25519_dalek::SigningKey::from_bytes(&secret))
}

/// Generates a new X25519 key file; returns the public key.
pub fn create_x25519(path: &Path) -> anyhow::Result<[u8; 32]> {
    let secret = x25519_dalek::StaticSecret::random_from_rng(rand::rngs::OsRng);
    let public = x25519_dalek::PublicKey::from(&secret);
    let raw = Zeroizing::new(secret.to_bytes());
    write_key(path, "x25519", public.as_bytes(), &raw)?;
    Ok(*public.as_bytes())
}

/// Generates a random 32-byte symmetric key file of `kind` (no public part).
pub fn create_symmetric(path: &Path, kind: &str) -> anyhow::Result<Zeroizing<[u8; 32]>> {
    use rand::RngCore;
    let mut key = Zeroizing::new([0u8; 32]);
    rand::rngs::OsRng.fill_bytes(key.as_mut());
    write_key(path, kind, &[0u8; 32], &key)?;
    Ok(key)
}

/// Loads a symmetric key file written by [`create_symmetric`].
pub fn load_symmetric(path: &Path, kind: &str) -> anyhow::Result<Zeroizing<[u8; 32]>> {
    read_secret(path, kind)
}

/// Loads an X25519 key file.
pub fn load_x25519(path: &Path) -> anyhow::Result<x25519_dalek::StaticSecret> {
    let secret = read_secret(path, "x25519")?;
    Ok(x25519_dalek::StaticSecret::from(*secret))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn key_files_are_0600_and_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k.json");
        let k = create_ed25519(&p).unwrap();
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(load_ed25519(&p).unwrap().to_bytes(), k.to_bytes());
        assert!(create_ed25519(&p).is_err(), "never overwrites a key");
        assert_eq!(load_ed25519(&p).unwrap().to_bytes(), k.to_bytes());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            names,
            vec![std::ffi::OsString::from("k.json")],
            "no temporary file left"
        );
        // a write killed halfway left a temporary file: the next one removes it
        let stale = dir.path().join(".n.json.tmp-0123");
        std::fs::write(&stale, b"secret").unwrap();
        create_ed25519(&dir.path().join("n.json")).unwrap();
        assert!(!stale.exists(), "a stale temporary file is removed");
        let x = dir.path().join("x.json");
        let public = create_x25519(&x).unwrap();
        let s = load_x25519(&x).unwrap();
        assert_eq!(x25519_dalek::PublicKey::from(&s).as_bytes(), &public);
        assert!(load_ed25519(&x).is_err(), "kind is checked");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            load_ed25519(&p).is_err(),
            "a key readable by others is refused"
        );
        let sub = dir.path().join("ring/k.json");
        create_ed25519(&sub).unwrap();
        let dmode = std::fs::metadata(dir.path().join("ring"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dmode, 0o700);
    }
}

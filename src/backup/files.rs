//! The I/O of a backup and a restore: reading the home, hashing, copying,
//! the local store's checkpoint. Every secret file is written 0600.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::{check, open, seal, BackupError, FileEntry, Manifest, Sealed, FORMAT};
use crate::config::Home;
use crate::keyfile::write_private;

/// The config files a backup carries (relative to the home), if present.
const CONFIG: [&str; 4] = [
    "config/stave.toml",
    "config/operator_key.json",
    "config/x25519_key.json",
    "config/genesis-fragment.json",
];
const SEALED_KEK: &str = "kek.sealed.json";
const MANIFEST: &str = "manifest.json";

fn io(what: impl std::fmt::Display, e: impl std::fmt::Display) -> BackupError {
    BackupError::Io(format!("{what}: {e}"))
}

/// What to put in a backup.
#[derive(Debug, Default)]
pub struct BackupOptions {
    /// Include a checkpoint of the local store (the node must be stopped).
    pub local: bool,
    /// Seal the KEK under this passphrase; `None` leaves it out.
    pub passphrase: Option<String>,
}

/// Backs up `home` into the new directory `out`.
pub fn backup(home: &Home, out: &Path, o: &BackupOptions) -> Result<Manifest, BackupError> {
    if !home.config_file().exists() {
        return Err(BackupError::NotAHome(home.root.display().to_string()));
    }
    let busy = out.exists()
        && std::fs::read_dir(out)
            .map_err(|e| io(out.display(), e))?
            .next()
            .is_some();
    if busy {
        return Err(BackupError::OutInUse(out.display().to_string()));
    }
    let chain = home.chain_dir();
    let info = match chain.exists() {
        true => crate::store::ChainStore::peek(&chain).map_err(|e| io(chain.display(), e))?,
        false => return Err(BackupError::NoChain(chain.display().to_string())),
    };
    if info.chain_id.is_empty() {
        return Err(BackupError::NoChain(chain.display().to_string()));
    }
    // the local store first: a running node holds it, and then nothing is written
    let local = match o.local {
        true => Some(open_local(home)?),
        false => None,
    };
    let created = !out.exists();
    let written = write_backup(home, out, o, local.as_ref(), info);
    if written.is_err() && created {
        let _ = std::fs::remove_dir_all(out);
    }
    written
}

fn write_backup(
    home: &Home,
    out: &Path,
    o: &BackupOptions,
    local: Option<&crate::local::LocalStore>,
    info: crate::store::CommitInfo,
) -> Result<Manifest, BackupError> {
    crate::local::private_dir(out).map_err(|e| io(out.display(), e))?;
    let mut files = Vec::new();
    for rel in CONFIG {
        let src = home.root.join(rel);
        if src.exists() {
            let bytes = std::fs::read(&src).map_err(|e| io(src.display(), e))?;
            files.push(put(out, rel, &bytes)?);
        }
    }
    let kek_sealed = seal_kek(home, out, o, &mut files)?;
    if let Some(store) = local {
        files.extend(checkpoint(store, out)?);
    }
    let m = Manifest {
        format: FORMAT.into(),
        chain_id: info.chain_id,
        height: info.height.unwrap_or(0),
        operator: operator_pubkey(home)?,
        created: tendermint::Time::now().to_rfc3339(),
        files,
        local: o.local,
        kek_sealed,
    };
    let json = serde_json::to_vec_pretty(&m).map_err(|e| io(MANIFEST, e))?;
    write_private(&out.join(MANIFEST), &json).map_err(|e| io(MANIFEST, e))?;
    Ok(m)
}

/// Writes `bytes` at `out/rel` (0600) and returns its entry.
fn put(out: &Path, rel: &str, bytes: &[u8]) -> Result<FileEntry, BackupError> {
    write_private(&out.join(rel), bytes).map_err(|e| io(rel, e))?;
    Ok(FileEntry {
        path: rel.into(),
        sha256: hex::encode(Sha256::digest(bytes)),
    })
}

fn seal_kek(
    home: &Home,
    out: &Path,
    o: &BackupOptions,
    files: &mut Vec<FileEntry>,
) -> Result<bool, BackupError> {
    let (Some(pass), true) = (&o.passphrase, home.kek_file().exists()) else {
        return Ok(false);
    };
    let kek = zeroize::Zeroizing::new(
        std::fs::read(home.kek_file()).map_err(|e| io(home.kek_file().display(), e))?,
    );
    let (salt, nonce): ([u8; 16], [u8; 12]) = (rand::random(), rand::random());
    let sealed = seal(pass, &kek, salt, nonce)?;
    let json = serde_json::to_vec_pretty(&sealed).map_err(|e| io(SEALED_KEK, e))?;
    files.push(put(out, SEALED_KEK, &json)?);
    Ok(true)
}

/// The local store, opened for a checkpoint; busy while a node runs.
fn open_local(home: &Home) -> Result<crate::local::LocalStore, BackupError> {
    let dir = home.local_dir();
    crate::local::LocalStore::open(&dir).map_err(|e| match e {
        crate::local::LocalError::Db(e) if e.to_string().contains("lock") => {
            BackupError::LocalBusy(dir.display().to_string())
        }
        e => io(dir.display(), e),
    })
}

/// A checkpoint of the local store at `out/local`, with its files' entries.
fn checkpoint(store: &crate::local::LocalStore, out: &Path) -> Result<Vec<FileEntry>, BackupError> {
    let to = out.join("local");
    store.checkpoint(&to).map_err(|e| io(to.display(), e))?;
    let mut entries = Vec::new();
    for path in sorted_files(&to)? {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        entries.push(FileEntry {
            path: format!("local/{name}"),
            sha256: hash_file(&path)?,
        });
    }
    Ok(entries)
}

fn sorted_files(dir: &Path) -> Result<Vec<PathBuf>, BackupError> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| io(dir.display(), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    Ok(v)
}

fn hash_file(path: &Path) -> Result<String, BackupError> {
    let mut f = std::fs::File::open(path).map_err(|e| io(path.display(), e))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(|e| io(path.display(), e))?;
        if n == 0 {
            break;
        }
        h.update(buf.get(..n).unwrap_or_default());
    }
    Ok(hex::encode(h.finalize()))
}

fn operator_pubkey(home: &Home) -> Result<String, BackupError> {
    let path = home.operator_key();
    let text = std::fs::read_to_string(&path).map_err(|e| io(path.display(), e))?;
    let kf: crate::keyfile::KeyFile =
        serde_json::from_str(&text).map_err(|e| io(path.display(), e))?;
    Ok(kf.public_key)
}

/// Restores the backup at `from` into the empty home `home`, for the chain
/// `chain_id`; every file is checked before anything is written.
pub fn restore(
    from: &Path,
    home: &Home,
    chain_id: &str,
    passphrase: Option<&str>,
) -> Result<Manifest, BackupError> {
    let raw =
        std::fs::read(from.join(MANIFEST)).map_err(|e| io(from.join(MANIFEST).display(), e))?;
    let m: Manifest = serde_json::from_slice(&raw).map_err(|e| io(MANIFEST, e))?;
    check(&m, chain_id)?;
    let in_use = [
        home.config_file(),
        home.operator_key(),
        home.x25519_key(),
        home.kek_file(),
    ]
    .iter()
    .any(|p| p.exists())
        || home.local_dir().exists();
    if in_use {
        return Err(BackupError::HomeInUse(home.root.display().to_string()));
    }
    for f in &m.files {
        let found = hash_file(&from.join(&f.path))?;
        if found != f.sha256 {
            return Err(BackupError::Damaged {
                path: f.path.clone(),
                found,
                want: f.sha256.clone(),
            });
        }
    }
    let kek = match (m.kek_sealed, passphrase) {
        (false, _) => None,
        (true, None) => return Err(BackupError::PassphraseNeeded),
        (true, Some(p)) => {
            let raw = std::fs::read(from.join(SEALED_KEK)).map_err(|e| io(SEALED_KEK, e))?;
            let sealed: Sealed =
                serde_json::from_slice(&raw).map_err(|_| BackupError::WrongPassphrase)?;
            Some(open(p, &sealed)?)
        }
    };
    place(from, home, &m, kek.as_deref().map(|k| k.as_slice()))?;
    Ok(m)
}

/// Writes the checked files into `home`.
fn place(from: &Path, home: &Home, m: &Manifest, kek: Option<&[u8]>) -> Result<(), BackupError> {
    for f in m.files.iter().filter(|f| f.path.starts_with("config/")) {
        let bytes = std::fs::read(from.join(&f.path)).map_err(|e| io(&f.path, e))?;
        write_private(&home.root.join(&f.path), &bytes).map_err(|e| io(&f.path, e))?;
    }
    if let Some(k) = kek {
        write_private(&home.kek_file(), k).map_err(|e| io(home.kek_file().display(), e))?;
    }
    let local = home.local_dir();
    crate::local::private_dir(&local).map_err(|e| io(local.display(), e))?;
    for f in m.files.iter().filter(|f| f.path.starts_with("local/")) {
        let name = Path::new(&f.path).file_name().unwrap_or_default();
        std::fs::copy(from.join(&f.path), local.join(name)).map_err(|e| io(&f.path, e))?;
    }
    for dir in [home.chain_dir(), home.snapshots_dir(), home.content_dir()] {
        std::fs::create_dir_all(&dir).map_err(|e| io(dir.display(), e))?;
    }
    Ok(())
}

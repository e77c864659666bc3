//! The I/O of a backup and a restore: reading the home, hashing, copying,
//! the local store's checkpoint. Everything written is 0600 (directories
//! 0700); a refused or failed run removes what it wrote.

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use super::{
    check, open, seal, BackupError, FileEntry, Manifest, Sealed, CONFIG, FORMAT, SEALED_KEK,
};
use crate::config::Home;
use crate::keyfile::write_private;

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
    pub passphrase: Option<Zeroizing<String>>,
    /// The chain, for a home with no chain store yet (right after `init`);
    /// checked against the store when there is one.
    pub chain_id: Option<String>,
}

/// Backs up `home` into `out`, a new or empty directory.
pub fn backup(home: &Home, out: &Path, o: &BackupOptions) -> Result<Manifest, BackupError> {
    if !home.config_file().exists() {
        return Err(BackupError::NotAHome(home.root.display().to_string()));
    }
    let existed = out.exists();
    if existed
        && std::fs::read_dir(out)
            .map_err(|e| io(out.display(), e))?
            .next()
            .is_some()
    {
        return Err(BackupError::OutInUse(out.display().to_string()));
    }
    let (chain_id, height) = chain_of(home, o.chain_id.as_deref())?;
    // the local store first: a running node holds it, and then nothing is written
    let local = match o.local {
        true => Some(open_local(home)?),
        false => None,
    };
    let written = write_backup(home, out, o, local.as_ref(), (chain_id, height));
    if written.is_err() {
        match existed {
            false => drop(std::fs::remove_dir_all(out)),
            true => empty_dir(out),
        }
    }
    written
}

fn empty_dir(dir: &Path) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        let _ = if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        };
    }
}

/// The chain id and height of `home`'s chain store, or `given` when there
/// is no store yet.
fn chain_of(home: &Home, given: Option<&str>) -> Result<(String, u64), BackupError> {
    let chain = home.chain_dir();
    let no_chain = || BackupError::NoChain(chain.display().to_string());
    if !chain.join("CURRENT").exists() {
        return given.map(|c| (c.to_string(), 0)).ok_or_else(no_chain);
    }
    let info = crate::store::ChainStore::peek(&chain).map_err(|e| io(chain.display(), e))?;
    match (info.chain_id.as_str(), given) {
        ("", None) => Err(no_chain()),
        ("", Some(c)) => Ok((c.to_string(), 0)),
        (found, Some(want)) if found != want => Err(BackupError::OtherChain {
            found: found.into(),
            want: want.into(),
        }),
        (found, _) => Ok((found.to_string(), info.height.unwrap_or(0))),
    }
}

fn write_backup(
    home: &Home,
    out: &Path,
    o: &BackupOptions,
    local: Option<&crate::local::LocalStore>,
    (chain_id, height): (String, u64),
) -> Result<Manifest, BackupError> {
    crate::local::private_dir(out).map_err(|e| io(out.display(), e))?;
    let mut files = Vec::new();
    let mut operator = None;
    for rel in CONFIG {
        let src = home.root.join(rel);
        // absent, or renamed away meanwhile (a rotation finishing)
        let bytes = match std::fs::read(&src) {
            Ok(b) => Zeroizing::new(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(src.display(), e)),
        };
        if src == home.operator_key() {
            // the manifest names the key the backup holds, even if a
            // rotation swaps the files after this read
            operator = Some(operator_pubkey_of(&src, &bytes)?);
        }
        files.push(put(out, rel, &bytes)?);
    }
    let kek_sealed = seal_kek(home, out, o, &mut files)?;
    if let Some(store) = local {
        files.extend(checkpoint(store, out)?);
    }
    let m = Manifest {
        format: FORMAT.into(),
        chain_id,
        height,
        operator: match operator {
            Some(op) => op,
            None => operator_pubkey(&home.operator_key())?,
        },
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
    let kek = Zeroizing::new(
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
        crate::local::LocalError::Db(e) if is_lock(&e) => {
            BackupError::LocalBusy(dir.display().to_string())
        }
        e => io(dir.display(), e),
    })
}

/// RocksDB's own words for a LOCK file another process holds.
fn is_lock(e: &rocksdb::Error) -> bool {
    let text = e.to_string();
    e.kind() == rocksdb::ErrorKind::IOError
        && (text.contains("While lock file") || text.contains("lock hold by current process"))
}

/// A checkpoint of the local store at `out/local` (0700, files 0600), with
/// its files' entries.
fn checkpoint(store: &crate::local::LocalStore, out: &Path) -> Result<Vec<FileEntry>, BackupError> {
    let to = out.join("local");
    store.checkpoint(&to).map_err(|e| io(to.display(), e))?;
    let private = |p: &Path, mode| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode))
            .map_err(|e| io(p.display(), e))
    };
    private(&to, 0o700)?;
    let mut entries = Vec::new();
    for path in sorted_files(&to)? {
        // a hard link shares the live file's inode: copy it before narrowing
        let copy = path.with_extension("copying");
        std::fs::copy(&path, &copy).map_err(|e| io(path.display(), e))?;
        std::fs::rename(&copy, &path).map_err(|e| io(path.display(), e))?;
        private(&path, 0o600)?;
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

/// The SHA-256 of a regular file (a symlink, FIFO or device is refused).
fn hash_file(path: &Path) -> Result<String, BackupError> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| io(path.display(), e))?;
    if !meta.file_type().is_file() {
        return Err(BackupError::NotAFile(path.display().to_string()));
    }
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

fn operator_pubkey(path: &Path) -> Result<String, BackupError> {
    let bytes = Zeroizing::new(std::fs::read(path).map_err(|e| io(path.display(), e))?);
    operator_pubkey_of(path, &bytes)
}

/// The public key of the key file `bytes` read from `path`.
fn operator_pubkey_of(path: &Path, bytes: &[u8]) -> Result<String, BackupError> {
    let kf: crate::keyfile::KeyFile =
        serde_json::from_slice(bytes).map_err(|e| io(path.display(), e))?;
    Ok(kf.public_key)
}

/// Restores the backup at `from` into `home`, for the chain `chain_id`.
/// Everything is checked before anything is written, and a restore that
/// fails midway removes what it wrote.
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
    refuse_in_use(home, &m)?;
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
    let key = operator_pubkey(&from.join("config/operator_key.json"))?;
    if key != m.operator {
        return Err(BackupError::OperatorMismatch {
            manifest: m.operator.clone(),
            key,
        });
    }
    let kek = match (m.kek_sealed, passphrase) {
        (false, _) => None,
        (true, None) => return Err(BackupError::PassphraseNeeded),
        (true, Some(p)) => {
            let raw = std::fs::read(from.join(SEALED_KEK)).map_err(|e| io(SEALED_KEK, e))?;
            let sealed: Sealed = serde_json::from_slice(&raw)
                .map_err(|e| BackupError::SealedFormat(e.to_string()))?;
            Some(open(p, &sealed)?)
        }
    };
    let mut written = Vec::new();
    let placed = place(
        from,
        home,
        &m,
        kek.as_deref().map(|k| k.as_slice()),
        &mut written,
    );
    if placed.is_err() {
        for p in written.iter().rev() {
            let _ = if p.is_dir() {
                std::fs::remove_dir_all(p)
            } else {
                std::fs::remove_file(p)
            };
        }
    }
    placed.map(|()| m)
}

/// Refuses a home that holds any file the restore would write, a local
/// store, or a chain store.
fn refuse_in_use(home: &Home, m: &Manifest) -> Result<(), BackupError> {
    let targets = m
        .files
        .iter()
        .filter(|f| f.path.starts_with("config/"))
        .map(|f| home.root.join(&f.path))
        .chain([home.kek_file(), home.local_dir()]);
    let chain_used = std::fs::read_dir(home.chain_dir())
        .map(|mut d| d.next().is_some())
        .unwrap_or(false);
    if chain_used || targets.into_iter().any(|p| p.exists()) {
        return Err(BackupError::HomeInUse(home.root.display().to_string()));
    }
    Ok(())
}

/// Writes the checked files into `home`, recording each path it creates.
fn place(
    from: &Path,
    home: &Home,
    m: &Manifest,
    kek: Option<&[u8]>,
    written: &mut Vec<PathBuf>,
) -> Result<(), BackupError> {
    for f in m.files.iter().filter(|f| f.path.starts_with("config/")) {
        let bytes = Zeroizing::new(std::fs::read(from.join(&f.path)).map_err(|e| io(&f.path, e))?);
        let to = home.root.join(&f.path);
        write_private(&to, &bytes).map_err(|e| io(&f.path, e))?;
        written.push(to);
    }
    if let Some(k) = kek {
        write_private(&home.kek_file(), k).map_err(|e| io(home.kek_file().display(), e))?;
        written.push(home.kek_file());
    }
    let local = home.local_dir();
    crate::local::private_dir(&local).map_err(|e| io(local.display(), e))?;
    written.push(local.clone());
    for f in m.files.iter().filter(|f| f.path.starts_with("local/")) {
        let name = Path::new(&f.path).file_name().unwrap_or_default();
        let to = local.join(name);
        std::fs::copy(from.join(&f.path), &to).map_err(|e| io(&f.path, e))?;
        std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io(to.display(), e))?;
    }
    for dir in [home.chain_dir(), home.snapshots_dir(), home.content_dir()] {
        std::fs::create_dir_all(&dir).map_err(|e| io(dir.display(), e))?;
    }
    Ok(())
}

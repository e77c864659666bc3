//! The content store: content-addressed files under `<home>/content/`,
//! named by the hex of their cid.
//!
//! # Invariants
//! - A file becomes visible only by `rename` from `content/.tmp/`, after its
//!   bytes are fsynced and their SHA-256 matches the cid's digest. A crash
//!   mid-write leaves only a temporary file, removed at the next open.
//! - An i/o failure (a full disk included) is an error, never a panic.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use sha2::{Digest, Sha256};
use thiserror::Error;

const TMP: &str = ".tmp";

/// Why content could not be stored.
#[derive(Debug, Error)]
pub enum ContentError {
    #[error("content {cid}: sha256 {got} does not match the cid's {expected}")]
    HashMismatch {
        cid: String,
        expected: String,
        got: String,
    },
    #[error("content {cid}: more than the expected {max} bytes")]
    TooLarge { cid: String, max: u64 },
    #[error("content {cid}: {got} bytes, expected {expected}")]
    SizeMismatch {
        cid: String,
        expected: u64,
        got: u64,
    },
    #[error("cid {cid} has no sha-256 digest this node understands")]
    BadCid { cid: String },
    #[error(
        "content store {path}: {available} bytes free, {needed} needed for the content (and writes in flight) \
         plus {reserve} kept free for the stores"
    )]
    NoRoom {
        path: String,
        needed: u64,
        available: u64,
        reserve: u64,
    },
    #[error("content store {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

/// Free space every content write leaves on the disk, so that the chain and
/// local stores (which share it by default) can still commit.
pub const DISK_RESERVE: u64 = 1 << 30;

/// Fails unless the filesystem holding `path` has `needed + reserve` bytes
/// available to this process.
pub fn ensure_room(path: &Path, needed: u64, reserve: u64) -> Result<(), ContentError> {
    let st = rustix::fs::statvfs(path).map_err(|e| ContentError::Io {
        path: path.display().to_string(),
        source: e.into(),
    })?;
    let available = st.f_bavail.saturating_mul(st.f_frsize);
    if available < needed.saturating_add(reserve) {
        return Err(ContentError::NoRoom {
            path: path.display().to_string(),
            needed,
            available,
            reserve,
        });
    }
    Ok(())
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ContentError + '_ {
    move |source| ContentError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The SHA-256 digest a cid names: 32 raw bytes, a sha2-256 multihash
/// (`0x12 0x20 ‖ digest`), or a CIDv1 of one (`0x01 codec 0x12 0x20 ‖ digest`).
pub fn cid_digest(cid: &[u8]) -> Result<[u8; 32], ContentError> {
    let digest = match cid.len() {
        32 => Some(cid),
        34 if cid.starts_with(&[0x12, 0x20]) => cid.get(2..),
        36 if cid[0] == 0x01 && cid[2..4] == [0x12, 0x20] => cid.get(4..),
        _ => None,
    };
    digest
        .and_then(|d| <[u8; 32]>::try_from(d).ok())
        .ok_or_else(|| ContentError::BadCid {
            cid: hex::encode(cid),
        })
}

/// Content-addressed files under one directory.
#[derive(Clone, Debug)]
pub struct ContentStore {
    root: PathBuf,
    /// Bytes promised to writes in flight (their declared maximum), shared
    /// by every clone: a free-disk check counts them as already used.
    reserved: Arc<AtomicU64>,
}

/// A write's claim on free space, given back when the write ends.
#[derive(Debug)]
struct Reservation {
    reserved: Arc<AtomicU64>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.reserved.fetch_sub(self.bytes, Ordering::SeqCst);
    }
}

impl ContentStore {
    /// Opens `root`, creating it, and removes temporary files a crash left.
    pub fn open(root: &Path) -> Result<Self, ContentError> {
        let tmp = root.join(TMP);
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(io_err(&tmp))?;
        }
        super::private_dir(root).map_err(io_err(root))?;
        super::private_dir(&tmp).map_err(io_err(&tmp))?;
        Ok(ContentStore {
            root: root.to_path_buf(),
            reserved: Arc::default(),
        })
    }

    /// Where the file of `cid` lives (whether or not it exists).
    pub fn path_of(&self, cid: &[u8]) -> PathBuf {
        self.root.join(hex::encode(cid))
    }

    /// The size of the file of `cid`, if present.
    pub fn size(&self, cid: &[u8]) -> Option<u64> {
        std::fs::metadata(self.path_of(cid)).ok().map(|m| m.len())
    }

    /// The cids of every visible file.
    pub fn list(&self) -> Result<Vec<Vec<u8>>, ContentError> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&self.root).map_err(io_err(&self.root))? {
            let entry = entry.map_err(io_err(&self.root))?;
            if let Some(cid) = entry.file_name().to_str().and_then(|n| hex::decode(n).ok()) {
                out.push(cid);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Deletes the file of `cid`, if present.
    pub fn remove(&self, cid: &[u8]) -> Result<(), ContentError> {
        let path = self.path_of(cid);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io_err(&path)(e)),
        }
    }

    /// A scratch store under this one's temporary directory (so a crash
    /// leaves nothing behind: the next [`ContentStore::open`] wipes it).
    /// Remove it with [`ContentStore::discard`].
    pub fn scratch(&self) -> Result<ContentStore, ContentError> {
        let name = format!("scratch-{}", hex::encode(rand::random::<[u8; 8]>()));
        ContentStore::open(&self.root.join(TMP).join(name))
    }

    /// Deletes this store's directory and everything in it.
    pub fn discard(self) -> Result<(), ContentError> {
        std::fs::remove_dir_all(&self.root).map_err(io_err(&self.root))
    }

    /// Rehashes the file of `cid`: true when present and matching, false
    /// when absent or not matching; a read fault is an error, not a verdict.
    pub fn verify(&self, cid: &[u8]) -> Result<bool, ContentError> {
        let expected = cid_digest(cid)?;
        let path = self.path_of(cid);
        let mut f = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io_err(&path)(e)),
        };
        let mut h = Sha256::new();
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = f.read(&mut buf).map_err(io_err(&path))?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        Ok(<[u8; 32]>::from(h.finalize()) == expected)
    }

    /// Starts writing the content of `cid`, at most `max` bytes. Refused
    /// with [`ContentError::NoRoom`] unless the disk has room for `max` bytes
    /// plus the maxima of the writes in flight plus [`DISK_RESERVE`], before
    /// a byte is fetched (review M7).
    pub fn begin(&self, cid: &[u8], max: u64) -> Result<PendingWrite, ContentError> {
        let expected = cid_digest(cid)?;
        let reservation = self.reserve(max)?;
        use rand::RngCore;
        let mut tag = [0u8; 8];
        rand::rngs::OsRng.fill_bytes(&mut tag);
        let tmp = self
            .root
            .join(TMP)
            .join(format!("{}.{}", hex::encode(cid), hex::encode(tag)));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io_err(&tmp))?;
        Ok(PendingWrite {
            cid: cid.to_vec(),
            expected,
            max,
            written: 0,
            hasher: Sha256::new(),
            file: Some(file),
            tmp,
            dest: self.path_of(cid),
            root: self.root.clone(),
            _reservation: reservation,
        })
    }

    /// Claims `max` bytes of free space for a write, counting every write
    /// in flight as if it were already full (review M7: four parallel
    /// fetches must not each see the same free space).
    fn reserve(&self, max: u64) -> Result<Reservation, ContentError> {
        let before = self.reserved.fetch_add(max, Ordering::SeqCst);
        let reservation = Reservation {
            reserved: self.reserved.clone(),
            bytes: max,
        };
        ensure_room(&self.root, before.saturating_add(max), DISK_RESERVE)?;
        Ok(reservation)
    }

    /// Moves the finished file at `path` (on this store's filesystem, its
    /// sha-256 computed by the caller as it was written) into place as
    /// `cid`; returns its size. For the upload pipeline, which hashes the
    /// blob while it encrypts it.
    pub fn adopt(&self, cid: &[u8], path: &Path) -> Result<u64, ContentError> {
        cid_digest(cid)?;
        let f = File::open(path).map_err(io_err(path))?;
        f.sync_all().map_err(io_err(path))?;
        let size = f.metadata().map_err(io_err(path))?.len();
        let dest = self.path_of(cid);
        std::fs::rename(path, &dest).map_err(io_err(&dest))?;
        File::open(&self.root)
            .and_then(|d| d.sync_all())
            .map_err(io_err(&self.root))?;
        Ok(size)
    }

    /// Stores everything `reader` yields as `cid` (see [`PendingWrite`]).
    pub fn put_reader<R: Read>(
        &self,
        cid: &[u8],
        max: u64,
        mut reader: R,
    ) -> Result<u64, ContentError> {
        let mut w = self.begin(cid, max)?;
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = reader.read(&mut buf).map_err(io_err(&w.tmp))?;
            if n == 0 {
                return w.finish(None);
            }
            w.write(&buf[..n])?;
        }
    }
}

/// A write in progress, in `content/.tmp/`. Dropping it unfinished removes
/// the temporary file; nothing becomes visible.
pub struct PendingWrite {
    cid: Vec<u8>,
    expected: [u8; 32],
    max: u64,
    written: u64,
    hasher: Sha256,
    file: Option<File>,
    tmp: PathBuf,
    dest: PathBuf,
    root: PathBuf,
    _reservation: Reservation,
}

impl PendingWrite {
    /// Appends `data`; more than the maximum is an error.
    pub fn write(&mut self, data: &[u8]) -> Result<(), ContentError> {
        if self.written + data.len() as u64 > self.max {
            return Err(ContentError::TooLarge {
                cid: hex::encode(&self.cid),
                max: self.max,
            });
        }
        let f = self.file.as_mut().ok_or_else(|| ContentError::Io {
            path: self.tmp.display().to_string(),
            source: std::io::Error::other("write after finish"),
        })?;
        f.write_all(data).map_err(io_err(&self.tmp))?;
        self.hasher.update(data);
        self.written += data.len() as u64;
        Ok(())
    }

    /// Checks the size (when `expected_size` is given) and the hash, fsyncs,
    /// and renames into place. Returns the size.
    pub fn finish(mut self, expected_size: Option<u64>) -> Result<u64, ContentError> {
        let cid = hex::encode(&self.cid);
        if let Some(expected) = expected_size.filter(|e| *e != self.written) {
            return Err(ContentError::SizeMismatch {
                cid,
                expected,
                got: self.written,
            });
        }
        let got: [u8; 32] = std::mem::take(&mut self.hasher).finalize().into();
        if got != self.expected {
            return Err(ContentError::HashMismatch {
                cid,
                expected: hex::encode(self.expected),
                got: hex::encode(got),
            });
        }
        if let Some(f) = self.file.take() {
            f.sync_all().map_err(io_err(&self.tmp))?;
        }
        std::fs::rename(&self.tmp, &self.dest).map_err(io_err(&self.dest))?;
        File::open(&self.root)
            .and_then(|d| d.sync_all())
            .map_err(io_err(&self.root))?;
        Ok(self.written)
    }
}

impl Drop for PendingWrite {
    fn drop(&mut self) {
        self.file.take();
        let _ = std::fs::remove_file(&self.tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cid_of(data: &[u8]) -> Vec<u8> {
        Sha256::digest(data).to_vec()
    }

    fn visible(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != TMP)
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_write_larger_than_the_free_disk_is_refused_before_any_byte() {
        let dir = tempfile::tempdir().unwrap();
        let cs = ContentStore::open(dir.path()).unwrap();
        let cid = cid_of(b"never fetched");
        // A declared size no disk has (review M7's garbage stream).
        let err = cs.begin(&cid, u64::MAX / 2).err().unwrap();
        assert!(matches!(err, ContentError::NoRoom { .. }), "{err}");
        assert!(std::fs::read_dir(dir.path().join(TMP))
            .unwrap()
            .next()
            .is_none());
        assert!(ensure_room(dir.path(), 1 << 20, 0).is_ok());
    }

    /// Parallel fetches each claim their declared size: two writes that
    /// each fit the free disk alone are not both begun (review M7).
    #[test]
    fn writes_in_flight_count_against_the_free_disk() {
        const MARGIN: u64 = 512 << 20;
        let dir = tempfile::tempdir().unwrap();
        let cs = ContentStore::open(dir.path()).unwrap();
        let st = rustix::fs::statvfs(dir.path()).unwrap();
        let free = st.f_bavail * st.f_frsize;
        assert!(
            free > DISK_RESERVE + 4 * MARGIN,
            "test disk too full: {free}"
        );
        let big = cs
            .begin(&cid_of(b"a"), free - DISK_RESERVE - MARGIN)
            .unwrap();
        // on its own, 2 × MARGIN fits the disk; beside `big` it does not
        let err = cs.clone().begin(&cid_of(b"b"), 2 * MARGIN).err().unwrap();
        assert!(matches!(err, ContentError::NoRoom { .. }), "{err}");
        drop(big);
        let small = cs.begin(&cid_of(b"b"), 2 * MARGIN).unwrap();
        drop(small);
        assert_eq!(cs.reserved.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn verified_content_becomes_visible() {
        let dir = tempfile::tempdir().unwrap();
        let cs = ContentStore::open(dir.path()).unwrap();
        let data = vec![7u8; 1_000_000];
        let cid = cid_of(&data);
        assert_eq!(cs.put_reader(&cid, 1 << 20, &data[..]).unwrap(), 1_000_000);
        assert_eq!(std::fs::read(cs.path_of(&cid)).unwrap(), data);
        assert!(cs.verify(&cid).unwrap());
        assert_eq!(cs.list().unwrap(), vec![cid]);
    }

    #[test]
    fn wrong_hash_oversize_and_wrong_size_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let cs = ContentStore::open(dir.path()).unwrap();
        let cid = cid_of(b"right");
        assert!(matches!(
            cs.put_reader(&cid, 100, &b"wrong"[..]),
            Err(ContentError::HashMismatch { .. })
        ));
        assert!(matches!(
            cs.put_reader(&cid, 3, &b"right"[..]),
            Err(ContentError::TooLarge { .. })
        ));
        let mut w = cs.begin(&cid, 100).unwrap();
        w.write(b"right").unwrap();
        assert!(matches!(
            w.finish(Some(6)),
            Err(ContentError::SizeMismatch { .. })
        ));
        assert!(matches!(
            cs.begin(b"short", 1),
            Err(ContentError::BadCid { .. })
        ));
        assert!(visible(dir.path()).is_empty());
        assert_eq!(std::fs::read_dir(dir.path().join(TMP)).unwrap().count(), 0);
    }

    #[test]
    fn a_crash_mid_write_leaves_nothing_visible() {
        let dir = tempfile::tempdir().unwrap();
        let cs = ContentStore::open(dir.path()).unwrap();
        let data = vec![1u8; 5000];
        let cid = cid_of(&data);
        let mut w = cs.begin(&cid, 10_000).unwrap();
        w.write(&data[..2500]).unwrap();
        std::mem::forget(w); // the process dies here: no Drop, no rename
        assert!(visible(dir.path()).is_empty());
        assert!(!cs.path_of(&cid).exists());
        assert_eq!(std::fs::read_dir(dir.path().join(TMP)).unwrap().count(), 1);
        let cs = ContentStore::open(dir.path()).unwrap();
        assert_eq!(std::fs::read_dir(dir.path().join(TMP)).unwrap().count(), 0);
        cs.put_reader(&cid, 10_000, &data[..]).unwrap();
        assert!(cs.verify(&cid).unwrap());
    }

    #[test]
    fn a_full_disk_is_an_error_not_a_panic() {
        // /dev/full fails every write with ENOSPC, as a full disk does.
        let full = OpenOptions::new().write(true).open("/dev/full").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let cs = ContentStore::open(dir.path()).unwrap();
        let cid = cid_of(b"x");
        let mut w = cs.begin(&cid, 10).unwrap();
        w.file = Some(full);
        let err = w.write(b"x").unwrap_err();
        assert!(err.to_string().contains("No space left"), "{err}");
        drop(w);
        assert!(visible(dir.path()).is_empty());
    }

    #[test]
    fn cid_digests_are_read_from_raw_multihash_and_cidv1() {
        let d = [9u8; 32];
        assert_eq!(cid_digest(&d).unwrap(), d);
        assert_eq!(cid_digest(&[&[0x12, 0x20][..], &d].concat()).unwrap(), d);
        assert_eq!(
            cid_digest(&[&[0x01, 0x55, 0x12, 0x20][..], &d].concat()).unwrap(),
            d
        );
        assert!(cid_digest(&[&[0x13, 0x20][..], &d].concat()).is_err());
        assert!(cid_digest(&[]).is_err());
    }
}

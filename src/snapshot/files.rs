//! Snapshots on disk: `<dir>/<height>/metadata` and `chunk-<index>`. A
//! snapshot is built under `<dir>/.partial-<height>/` and renamed into
//! place once whole, so a listed snapshot is always complete; leftovers of
//! a build cut short are removed when the node starts.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::format::Metadata;

/// The snapshot directory of one node.
#[derive(Debug, Clone)]
pub struct SnapshotFiles {
    dir: PathBuf,
}

fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

impl SnapshotFiles {
    /// Opens `dir`, creating it, and removes partial builds.
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        fs::create_dir_all(dir)?;
        for e in fs::read_dir(dir)? {
            let e = e?;
            if e.file_name().to_string_lossy().starts_with(".partial-") {
                fs::remove_dir_all(e.path())?;
            }
        }
        Ok(SnapshotFiles {
            dir: dir.to_path_buf(),
        })
    }

    fn partial(&self, height: u64) -> PathBuf {
        self.dir.join(format!(".partial-{height}"))
    }

    fn done(&self, height: u64) -> PathBuf {
        self.dir.join(height.to_string())
    }

    /// Starts a build of `height`: an empty partial directory.
    pub fn begin(&self, height: u64) -> std::io::Result<()> {
        let p = self.partial(height);
        if p.exists() {
            fs::remove_dir_all(&p)?;
        }
        fs::create_dir_all(p)
    }

    /// Writes chunk `index` of the build of `height`.
    pub fn put_chunk(&self, height: u64, index: u32, bytes: &[u8]) -> std::io::Result<()> {
        write_synced(&self.partial(height).join(format!("chunk-{index}")), bytes)
    }

    /// Writes the metadata and moves the build into place.
    pub fn finish(&self, height: u64, meta: &Metadata) -> std::io::Result<()> {
        let p = self.partial(height);
        write_synced(&p.join("metadata"), &meta.encode())?;
        let done = self.done(height);
        if done.exists() {
            fs::remove_dir_all(&done)?;
        }
        fs::rename(p, done)?;
        fs::File::open(&self.dir)?.sync_all()
    }

    /// Drops a build cut short.
    pub fn abandon(&self, height: u64) {
        let _ = fs::remove_dir_all(self.partial(height));
    }

    /// Heights of the complete snapshots, ascending.
    pub fn heights(&self) -> std::io::Result<Vec<u64>> {
        let mut out: Vec<u64> = fs::read_dir(&self.dir)?
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    /// The complete snapshots with their metadata, ascending by height.
    /// One whose metadata cannot be read is skipped (and logged).
    pub fn list(&self) -> std::io::Result<Vec<(u64, Metadata)>> {
        let mut out = Vec::new();
        for h in self.heights()? {
            match fs::read(self.done(h).join("metadata"))
                .map_err(|e| e.to_string())
                .and_then(|b| Metadata::decode(&b).map_err(|e| e.to_string()))
            {
                Ok(m) => out.push((h, m)),
                Err(e) => tracing::warn!(height = h, error = %e, "unreadable snapshot skipped"),
            }
        }
        Ok(out)
    }

    /// Chunk `index` of the snapshot of `height`, if there is one.
    pub fn chunk(&self, height: u64, index: u32) -> Option<Vec<u8>> {
        fs::read(self.done(height).join(format!("chunk-{index}"))).ok()
    }

    /// Keeps the `keep` newest snapshots and deletes the rest.
    pub fn prune(&self, keep: usize) -> std::io::Result<()> {
        let heights = self.heights()?;
        let drop = heights.len().saturating_sub(keep);
        for h in heights.iter().take(drop) {
            fs::remove_dir_all(self.done(*h))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta() -> Metadata {
        Metadata {
            app_hash: [1; 32],
            chunk_hashes: vec![[2; 32]],
            entries: 1,
            bytes: 2,
        }
    }

    #[test]
    fn only_finished_snapshots_are_listed_and_pruning_keeps_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let f = SnapshotFiles::open(dir.path()).unwrap();
        for h in [10, 20, 30] {
            f.begin(h).unwrap();
            f.put_chunk(h, 0, b"c").unwrap();
            f.finish(h, &meta()).unwrap();
        }
        f.begin(40).unwrap();
        f.put_chunk(40, 0, b"half").unwrap();
        assert_eq!(f.heights().unwrap(), vec![10, 20, 30]);
        assert_eq!(f.chunk(40, 0), None, "a partial build is not served");
        assert_eq!(f.chunk(20, 0).as_deref(), Some(&b"c"[..]));
        f.prune(2).unwrap();
        assert_eq!(f.heights().unwrap(), vec![20, 30]);
        assert_eq!(f.list().unwrap()[0], (20, meta()));
        let again = SnapshotFiles::open(dir.path()).unwrap();
        assert!(
            !dir.path().join(".partial-40").exists(),
            "partial removed at open"
        );
        assert_eq!(again.heights().unwrap(), vec![20, 30]);
    }
}

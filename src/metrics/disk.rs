//! Free and total bytes of the file systems that hold the node's stores
//! (`dir` = `chain`, `local`, `content`), read with `statvfs` each time
//! `/metrics` is scraped: a node that runs out of space stops (exit 70,
//! `disk full (ENOSPC)`), so the operator needs to see it coming.

use std::path::PathBuf;
use std::sync::OnceLock;

use prometheus::{IntGaugeVec, Opts, Registry};

/// `stave_disk_free_bytes{dir}` and `stave_disk_size_bytes{dir}`.
pub struct DiskMetrics {
    pub free: IntGaugeVec,
    pub size: IntGaugeVec,
}

pub fn register(registry: &Registry) -> Result<DiskMetrics, prometheus::Error> {
    let vec = |name: &str, help: &str| -> Result<IntGaugeVec, prometheus::Error> {
        let g = IntGaugeVec::new(Opts::new(name, help), &["dir"])?;
        registry.register(Box::new(g.clone()))?;
        Ok(g)
    };
    Ok(DiskMetrics {
        free: vec(
            "disk_free_bytes",
            "Bytes an unprivileged process may still write on the file system holding dir",
        )?,
        size: vec(
            "disk_size_bytes",
            "Size of the file system holding dir, bytes",
        )?,
    })
}

static WATCHED: OnceLock<Vec<(&'static str, PathBuf)>> = OnceLock::new();

/// Names the directories to report (the first call wins).
pub fn watch(dirs: Vec<(&'static str, PathBuf)>) {
    let _ = WATCHED.set(dirs);
}

impl DiskMetrics {
    /// Reads every watched directory's file system; one that cannot be read
    /// keeps its last values.
    pub fn refresh(&self) {
        for (name, dir) in WATCHED.get().map(Vec::as_slice).unwrap_or_default() {
            if let Some((free, size)) = space(dir) {
                self.free.with_label_values(&[name]).set(free);
                self.size.with_label_values(&[name]).set(size);
            }
        }
    }
}

/// (available, total) bytes of the file system holding `dir`.
fn space(dir: &std::path::Path) -> Option<(i64, i64)> {
    let s = rustix::fs::statvfs(dir).ok()?;
    let bytes = |blocks: u64| i64::try_from(blocks.saturating_mul(s.f_frsize)).unwrap_or(i64::MAX);
    Some((bytes(s.f_bavail), bytes(s.f_blocks)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_reports_its_file_system() {
        let dir = tempfile::tempdir().unwrap();
        let (free, size) = space(dir.path()).unwrap();
        assert!(size > 0 && free >= 0 && free <= size, "{free} of {size}");
        assert_eq!(space(&dir.path().join("missing")), None);
    }
}

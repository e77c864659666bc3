//! Unix sockets that only the node's user can connect to: bound under a
//! temporary name, set to mode 0600, then renamed into place, so the path
//! never exists with looser permissions (review m6).

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

/// Binds `path` (replacing a stale socket left by a killed process) with
/// mode 0600.
pub fn bind_private(path: &Path) -> anyhow::Result<UnixListener> {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let shown = path.display();
    if path.exists() {
        std::fs::remove_file(path)
            .map_err(|e| anyhow::anyhow!("removing stale socket {shown}: {e}"))?;
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    // short: the temporary path must fit sun_path wherever `path` does
    let tmp = dir.join(format!(
        ".{}{}",
        SEQ.fetch_add(1, Ordering::Relaxed),
        std::process::id() % 10_000
    ));
    let _ = std::fs::remove_file(&tmp);
    let l = UnixListener::bind(&tmp)
        .map_err(|e| anyhow::anyhow!("binding unix socket {}: {e}", tmp.display()))?;
    let placed = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&tmp);
        anyhow::bail!("placing unix socket {shown} with mode 0600: {e}");
    }
    Ok(l)
}

/// The mode bits of `path` (for checks and tests).
pub fn mode(path: &Path) -> std::io::Result<u32> {
    Ok(std::fs::metadata(path)?.permissions().mode() & 0o777)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bound_socket_is_0600_and_replaces_a_stale_one() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.sock");
        std::fs::write(&p, b"stale").unwrap();
        let l = bind_private(&p).unwrap();
        assert_eq!(mode(&p).unwrap(), 0o600);
        let c = std::os::unix::net::UnixStream::connect(&p).unwrap();
        let (s, _) = l.accept().unwrap();
        drop((c, s));
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary name is left"
        );
    }
}

//! The `threads` server's listener: accepts CometBFT's connections on a Unix
//! or TCP socket and gives each its own thread running
//! [`server::run_connection`].

use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::server::{self, Handlers};

/// Most connections served at once. CometBFT opens four; the rest of the
/// room is for a CometBFT restart whose old connections are still closing.
pub const MAX_CONNECTIONS: usize = 16;

/// Accept failures in a row (about 10 s of them) after which serving stops.
const MAX_ACCEPT_FAILURES: u32 = 100;

/// Where `[abci] listen` points: `unix:///path`, or `tcp://host:port` (the
/// scheme may be left out for TCP).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addr<'a> {
    Unix(&'a str),
    Tcp(&'a str),
}

impl<'a> Addr<'a> {
    pub fn parse(listen: &'a str) -> Self {
        match listen.strip_prefix("unix://") {
            Some(path) => Addr::Unix(path),
            None => Addr::Tcp(listen.strip_prefix("tcp://").unwrap_or(listen)),
        }
    }
}

/// Removes a socket file left by a killed process.
pub fn remove_stale_socket(path: &str) -> anyhow::Result<()> {
    if std::path::Path::new(path).exists() {
        std::fs::remove_file(path)
            .map_err(|e| anyhow::anyhow!("abci: removing stale socket {path}: {e}"))?;
    }
    Ok(())
}

/// Warns that a non-loopback ABCI address lets anyone who reaches it send
/// `FinalizeBlock` and `Commit`.
pub fn warn_unless_loopback(addr: std::net::SocketAddr) {
    if !addr.ip().to_canonical().is_loopback() {
        tracing::warn!(%addr, "abci: listening on a non-loopback address; any client that reaches it can drive consensus. Use unix:// or 127.0.0.1");
    }
}

/// The bound ABCI socket.
pub enum Listener {
    Unix(UnixListener),
    Tcp(std::net::TcpListener),
}

enum Conn {
    Unix(UnixStream),
    Tcp(std::net::TcpStream),
}

impl Listener {
    /// Binds a Unix socket with mode 0600 (a stale one is replaced), or a
    /// TCP address (warned about unless it is loopback): any client of this
    /// socket can drive consensus (review m6).
    pub fn bind(addr: Addr) -> anyhow::Result<Self> {
        match addr {
            Addr::Unix(path) => {
                let l = crate::net::unix::bind_private(std::path::Path::new(path))
                    .map_err(|e| anyhow::anyhow!("abci: {e:#}"))?;
                Ok(Listener::Unix(l))
            }
            Addr::Tcp(addr) => {
                let l = std::net::TcpListener::bind(addr)
                    .map_err(|e| anyhow::anyhow!("abci: binding tcp {addr}: {e}"))?;
                if let Ok(local) = l.local_addr() {
                    warn_unless_loopback(local);
                }
                Ok(Listener::Tcp(l))
            }
        }
    }

    fn accept(&self) -> std::io::Result<Conn> {
        match self {
            Listener::Unix(l) => l.accept().map(|(s, _)| Conn::Unix(s)),
            Listener::Tcp(l) => l.accept().map(|(s, peer)| {
                // No Nagle stall between an answer and CometBFT's next read.
                if let Err(e) = s.set_nodelay(true) {
                    tracing::warn!(error = %e, %peer, "abci: TCP_NODELAY not set");
                }
                Conn::Tcp(s)
            }),
        }
    }

    /// Accepts connections, each onto its own thread, at most
    /// [`MAX_CONNECTIONS`] at once. Returns only when accepting has failed
    /// [`MAX_ACCEPT_FAILURES`] times in a row.
    pub fn accept_loop(self, h: Handlers) -> anyhow::Result<()> {
        let live = Arc::new(AtomicUsize::new(0));
        let mut failures = 0u32;
        for id in 0u64.. {
            match self.accept() {
                Ok(conn) => {
                    failures = 0;
                    if live.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
                        tracing::error!(
                            id,
                            max = MAX_CONNECTIONS,
                            "abci: too many connections; closing the new one"
                        );
                        continue; // dropping `conn` closes it
                    }
                    spawn_connection(id, conn, h.clone(), live.clone());
                }
                Err(e) => {
                    // Out of descriptors and the like: wait, then go on.
                    failures += 1;
                    tracing::error!(error = %e, failures, "abci: accepting a connection failed");
                    if failures >= MAX_ACCEPT_FAILURES {
                        anyhow::bail!("abci: accepting failed {failures} times in a row: {e}");
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
        Ok(())
    }
}

/// Runs one connection on its own thread; if no thread can be had, the
/// connection is closed and the node goes on.
fn spawn_connection(id: u64, conn: Conn, h: Handlers, live: Arc<AtomicUsize>) {
    live.fetch_add(1, Ordering::SeqCst);
    let slot = Slot(live.clone());
    let spawned = std::thread::Builder::new()
        .name(format!("stave-abci-{id}"))
        .spawn(move || {
            let _slot = slot; // freed however the thread ends, a panic included
            tracing::info!(id, "abci: connection opened");
            let res = match conn {
                Conn::Unix(s) => server::run_connection(s, &h),
                Conn::Tcp(s) => server::run_connection(s, &h),
            };
            match res {
                Ok(()) => tracing::info!(id, "abci: connection closed by the peer"),
                Err(e) => tracing::error!(id, error = %e, "abci: closing the connection"),
            }
        });
    if let Err(e) = spawned {
        // The closure, and the slot in it, were dropped with the error.
        tracing::error!(id, error = %e, "abci: no thread for a new connection; closed it");
    }
}

/// One live connection, counted until dropped.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::Addr;

    #[test]
    fn listen_addresses_parse_by_scheme() {
        assert_eq!(
            Addr::parse("unix:///h/abci.sock"),
            Addr::Unix("/h/abci.sock")
        );
        assert_eq!(
            Addr::parse("tcp://127.0.0.1:26658"),
            Addr::Tcp("127.0.0.1:26658")
        );
        assert_eq!(Addr::parse("127.0.0.1:26658"), Addr::Tcp("127.0.0.1:26658"));
    }
}

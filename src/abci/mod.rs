//! The ABCI++ server. By default ([`server`], `[abci] server = "threads"`)
//! each of CometBFT's four connections is answered on its own OS thread;
//! `server = "tower"` uses tower-abci's tokio server instead. Consensus
//! requests go to one actor that owns the mutable app; Info, Query, CheckTx
//! and Snapshot read committed state. The request handlers are tower
//! services of tower-abci's `v038` types.
//!
//! # Invariants
//! No service ever returns `Err`: the server would close the connection, and
//! CometBFT v0.38 exits when any ABCI connection drops. Bad input is a
//! response with a code.

pub mod consensus;
pub mod convert;
pub mod frame;
pub mod info;
pub mod listen;
pub mod mempool;
pub mod query;
pub mod server;
pub mod snapshot;

use crate::app::App;
use crate::config::{AbciSection, AbciServer};
use server::Handlers;

/// Serves ABCI on `abci.listen` (`unix:///path` or `tcp://host:port`) with
/// the server `abci.server` names. Returns only on a failure to serve: the
/// listener keeps failing to accept (`threads`), or tower-abci's server stops.
pub async fn serve(app: App, abci: &AbciSection) -> anyhow::Result<()> {
    let listen = abci.listen.as_str();
    let handlers = Handlers::new(app, tokio::runtime::Handle::current());
    if abci.server == AbciServer::Tower {
        tracing::info!(%listen, "ABCI server (tower-abci) listening");
        return serve_tower(handlers, listen).await;
    }
    let listener = listen::Listener::bind(listen::Addr::parse(listen))?;
    tracing::info!(%listen, "ABCI server (a thread per connection) listening");
    // A plain thread, not `spawn_blocking`: the runtime would wait for a
    // blocking task at shutdown, and this one never ends on its own.
    let (done, failed) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("stave-abci-accept".into())
        .spawn(move || {
            let _ = done.send(listener.accept_loop(handlers));
        })
        .map_err(|e| anyhow::anyhow!("abci: spawning the accept thread: {e}"))?;
    failed
        .await
        .map_err(|_| anyhow::anyhow!("abci: the accept thread died"))?
}

/// tower-abci binds its own socket: set it to 0600 as soon as it appears
/// (the `threads` server binds it with 0600 from the start).
async fn chmod_when_bound(path: String) {
    use std::os::unix::fs::PermissionsExt;
    for _ in 0..500 {
        if std::path::Path::new(&path).exists() {
            let mode = std::fs::Permissions::from_mode(0o600);
            if let Err(e) = std::fs::set_permissions(&path, mode) {
                tracing::error!(%path, error = %e, "abci: socket mode 0600 not set");
            }
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tracing::error!(%path, "abci: socket did not appear; mode 0600 not set");
}

/// tower-abci's server: a tokio task per connection, CheckTx on its own
/// thread behind a channel.
async fn serve_tower(h: Handlers, listen: &str) -> anyhow::Result<()> {
    use tower::ServiceBuilder;
    let server = tower_abci::v038::Server::builder()
        .consensus(h.consensus)
        .mempool(mempool::MempoolService::new(h.mempool))
        .info(ServiceBuilder::new().buffer(1_000).service(h.info))
        .snapshot(h.snapshot)
        .finish()
        .ok_or_else(|| anyhow::anyhow!("abci server builder is missing a service"))?;
    match listen::Addr::parse(listen) {
        listen::Addr::Unix(path) => {
            listen::remove_stale_socket(path)?;
            tokio::spawn(chmod_when_bound(path.to_string()));
            server.listen_unix(path).await
        }
        listen::Addr::Tcp(addr) => {
            if let Ok(a) = addr.parse() {
                listen::warn_unless_loopback(a);
            }
            server.listen_tcp(addr).await
        }
    }
    .map_err(|e| anyhow::anyhow!("abci ({listen}): {e}"))
}

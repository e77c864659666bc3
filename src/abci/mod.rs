//! The ABCI++ server (tower-abci, module `v038`): four services, one per
//! CometBFT connection. Consensus requests go to one actor that owns the
//! mutable app; Info, Query, CheckTx and Snapshot read committed state.
//!
//! # Invariants
//! No service ever returns `Err`: tower-abci would drop the connection and
//! CometBFT v0.38 exits when any ABCI connection drops. Bad input is a
//! response with a code.

pub mod consensus;
pub mod convert;
pub mod info;
pub mod mempool;
pub mod query;
pub mod snapshot;

use tower::ServiceBuilder;
use tower_abci::v038::Server;

use crate::app::App;

/// Serves ABCI on `listen` (`unix:///path` or `tcp://host:port`) until error.
pub async fn serve(app: App, listen: &str) -> anyhow::Result<()> {
    let store = app.store().clone();
    let mempool = app.mempool();
    let consensus = consensus::Consensus::spawn(app);
    let server = Server::builder()
        .consensus(consensus)
        // Cloneable and always ready: no tower Buffer (a task hop per CheckTx).
        .mempool(mempool::MempoolService::new(mempool.clone()))
        .info(
            ServiceBuilder::new()
                .buffer(1_000)
                .service(info::InfoService { store }),
        )
        .snapshot(snapshot::SnapshotService)
        .finish()
        .ok_or_else(|| anyhow::anyhow!("abci server builder is missing a service"))?;
    if let Some(path) = listen.strip_prefix("unix://") {
        if std::path::Path::new(path).exists() {
            std::fs::remove_file(path)?; // a stale socket from a killed process
        }
        server
            .listen_unix(path)
            .await
            .map_err(|e| anyhow::anyhow!("abci unix server: {e}"))
    } else {
        let addr = listen.strip_prefix("tcp://").unwrap_or(listen);
        server
            .listen_tcp(addr)
            .await
            .map_err(|e| anyhow::anyhow!("abci tcp server: {e}"))
    }
}

//! `stave.toml` and the home directory layout. Only node-local matters live
//! here (ports, paths, retention, mempool policy); anything that changes what
//! a tx does is a genesis param.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::app::AppConfig;
use crate::store::PruneConfig;

/// Paths inside a Stave home.
#[derive(Debug, Clone)]
pub struct Home {
    pub root: PathBuf,
}

impl Home {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Home { root: root.into() }
    }
    pub fn config_dir(&self) -> PathBuf {
        self.root.join("config")
    }
    pub fn config_file(&self) -> PathBuf {
        self.config_dir().join("stave.toml")
    }
    pub fn operator_key(&self) -> PathBuf {
        self.config_dir().join("operator_key.json")
    }
    pub fn x25519_key(&self) -> PathBuf {
        self.config_dir().join("x25519_key.json")
    }
    /// The new operator key while `stave tx validator rotate-operator-key`
    /// waits for its commit.
    pub fn operator_next_key(&self) -> PathBuf {
        self.config_dir().join("operator_key.next.json")
    }
    /// The operator key the last rotation retired (it signs nothing any
    /// more; delete it once the node runs on the new key).
    pub fn operator_retired_key(&self) -> PathBuf {
        self.config_dir().join("operator_key.retired.json")
    }
    /// The next X25519 key while a rotation is under way
    /// ([`crate::local::keyring`]).
    pub fn x25519_next_key(&self) -> PathBuf {
        self.config_dir().join("x25519_key.next.json")
    }
    /// The node-local key-encryption key of processing scratch (0600).
    pub fn kek_file(&self) -> PathBuf {
        self.config_dir().join("local_kek.json")
    }
    pub fn genesis_fragment(&self) -> PathBuf {
        self.config_dir().join("genesis-fragment.json")
    }
    pub fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }
    pub fn chain_dir(&self) -> PathBuf {
        self.data_dir().join("chain")
    }
    pub fn local_dir(&self) -> PathBuf {
        self.data_dir().join("local")
    }
    pub fn snapshots_dir(&self) -> PathBuf {
        self.data_dir().join("snapshots")
    }
    pub fn content_dir(&self) -> PathBuf {
        self.root.join("content")
    }
    /// Upload jobs' scratch: inside the content directory, so a finished
    /// blob moves into the content store by rename.
    pub fn processing_dir(&self) -> PathBuf {
        self.content_dir().join(".processing")
    }
    pub fn default_abci(&self) -> String {
        format!("unix://{}", self.root.join("abci.sock").display())
    }
    /// The admin socket serving `LocalService` (mode 0600).
    pub fn admin_socket(&self) -> PathBuf {
        self.root.join("admin.sock")
    }
}

/// `config/stave.toml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub moniker: String,
    pub abci: AbciSection,
    /// The public client API (Tx, Query, Rights, KV, Casbin, Governance).
    pub grpc: ListenSection,
    /// The validator-to-validator `PeerService`, allow-listed to the
    /// addresses of ACTIVE and UNBONDING validators. A config written
    /// before this section existed gets the default, not an empty address
    /// (which would silently serve no `PeerService`).
    #[serde(default = "default_peer")]
    pub peer: ListenSection,
    pub metrics: ListenSection,
    pub cometbft: CometSection,
    #[serde(default)]
    pub pruning: PruningSection,
    #[serde(default)]
    pub mempool: MempoolSection,
    #[serde(default)]
    pub storage: StorageSection,
    /// The in-process caches' budgets.
    #[serde(default)]
    pub caches: CachesSection,
    #[serde(default)]
    pub limits: crate::net::Limits,
    /// The upload pipeline (`ContentService`).
    #[serde(default)]
    pub upload: crate::content::UploadConfig,
    /// Access and delivery (`RequestAccess`, `Download`).
    #[serde(default)]
    pub access: crate::access::AccessConfig,
    /// State-sync snapshots this node takes and serves.
    #[serde(default)]
    pub snapshots: crate::snapshot::SnapshotConfig,
    /// Replicated node-local data (CAD037 over UEP-20 anti-entropy).
    #[serde(default)]
    pub replica: crate::replica::ReplicaConfig,
    /// The local store's reconciler.
    #[serde(default)]
    pub reconcile: ReconcileSection,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ReconcileSection {
    /// Blocks after a takedown is CONFIRMED before this node deletes the
    /// upload's files and wrapped DEK (`local::purge`). 0: at once.
    pub takedown_retention_blocks: u64,
}

impl Default for ReconcileSection {
    fn default() -> Self {
        ReconcileSection {
            takedown_retention_blocks: crate::local::purge::DEFAULT_RETENTION_BLOCKS,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AbciSection {
    /// `unix:///path/abci.sock` (default) or `tcp://127.0.0.1:26658`.
    pub listen: String,
    /// Which socket server answers CometBFT (default `threads`).
    #[serde(default)]
    pub server: AbciServer,
}

/// The ABCI socket server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AbciServer {
    /// One OS thread per connection, CheckTx batched on the mempool
    /// connection's thread (`abci::server`).
    #[default]
    Threads,
    /// tower-abci's own tokio server, with a CheckTx thread behind it. About
    /// 19% more CPU per tx under load (BENCHMARKS.md (b)); kept as a fallback.
    Tower,
}

fn default_peer() -> ListenSection {
    ListenSection {
        listen: DEFAULT_PEER_LISTEN.into(),
    }
}

/// `[peer] listen` when `stave.toml` does not say.
pub const DEFAULT_PEER_LISTEN: &str = "127.0.0.1:9092";

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListenSection {
    /// `host:port`; empty disables the listener.
    pub listen: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CometSection {
    /// The local CometBFT's RPC, used to broadcast txs.
    pub rpc: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PruningSection {
    /// JMT versions kept, counting the latest; 0 keeps all.
    pub keep_recent: u64,
    /// Prune every this many heights.
    pub interval: u64,
    /// Blocks CometBFT must keep (Commit's retain_height); 0 keeps all.
    pub retain_blocks: u64,
}

impl Default for PruningSection {
    fn default() -> Self {
        PruningSection {
            keep_recent: 1000,
            interval: 10,
            retain_blocks: 0,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MempoolSection {
    /// Pending txs one account may have in this node's mempool.
    pub max_pending_per_account: u32,
}

impl Default for MempoolSection {
    fn default() -> Self {
        MempoolSection {
            max_pending_per_account: 10_000,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct StorageSection {
    /// RocksDB block cache of the chain store, MiB.
    pub cache_mb: usize,
    /// All memtables of the chain store together, MiB.
    pub memtable_mb: usize,
}

impl Default for StorageSection {
    fn default() -> Self {
        let m = crate::store::db::Memory::default();
        StorageSection {
            cache_mb: m.cache_bytes >> 20,
            memtable_mb: m.memtable_bytes >> 20,
        }
    }
}

/// Budgets of the in-process caches. None of them changes a result, only
/// how often work is done again; gas is charged as if it were done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CachesSection {
    /// The decode cache's accounted bytes, MiB (an entry is accounted at
    /// 20 times its tx's bytes plus 512, several times what it holds).
    pub decode_mb: usize,
    /// The decode cache's entry bound.
    pub decode_entries: usize,
    /// Casbin compiled models on the consensus path, MiB.
    pub casbin_consensus_mb: usize,
    /// Casbin compiled models for public queries, MiB.
    pub casbin_query_mb: usize,
}

impl Default for CachesSection {
    fn default() -> Self {
        use crate::keyspaces::casbin::cache::{CONSENSUS_BUDGET, QUERY_BUDGET};
        CachesSection {
            decode_mb: crate::app::DECODE_CACHE_BYTES >> 20,
            decode_entries: crate::app::DECODE_CACHE_ENTRIES,
            casbin_consensus_mb: CONSENSUS_BUDGET >> 20,
            casbin_query_mb: QUERY_BUDGET >> 20,
        }
    }
}

impl StorageSection {
    /// The chain store's RocksDB memory budget.
    pub fn memory(&self) -> crate::store::db::Memory {
        crate::store::db::Memory {
            cache_bytes: self.cache_mb.saturating_mul(1 << 20),
            memtable_bytes: self.memtable_mb.max(4).saturating_mul(1 << 20),
        }
    }
}

impl Config {
    /// Defaults for a home: ABCI on `<home>/abci.sock`, standard ports.
    pub fn default_for(home: &Home, moniker: &str) -> Self {
        Config {
            moniker: moniker.to_string(),
            abci: AbciSection {
                listen: home.default_abci(),
                server: AbciServer::default(),
            },
            grpc: ListenSection {
                listen: "127.0.0.1:9090".into(),
            },
            peer: default_peer(),
            metrics: ListenSection {
                listen: "127.0.0.1:9091".into(),
            },
            cometbft: CometSection {
                rpc: "http://127.0.0.1:26657".into(),
            },
            pruning: PruningSection::default(),
            mempool: MempoolSection::default(),
            storage: StorageSection::default(),
            caches: CachesSection::default(),
            limits: crate::net::Limits::default(),
            upload: crate::content::UploadConfig::default(),
            access: crate::access::AccessConfig::default(),
            snapshots: crate::snapshot::SnapshotConfig::default(),
            replica: crate::replica::ReplicaConfig::default(),
            reconcile: ReconcileSection::default(),
        }
    }

    pub fn load(path: &Path) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading {}: {e}", path.display()))?;
        let config: Config = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("parsing {}: {e}", path.display()))?;
        config
            .validate()
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        Ok(config)
    }

    /// Rejects settings that would break the node or its peers. (Commit
    /// never lets CometBFT prune blocks younger than the evidence max age,
    /// whatever `retain_blocks` says.)
    pub fn validate(&self) -> Result<(), String> {
        let p = &self.pruning;
        if p.keep_recent > 0 && p.interval == 0 {
            return Err("pruning.interval must be positive when keep_recent is set".into());
        }
        self.limits.validate()
    }

    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, toml::to_string_pretty(self)?)?;
        Ok(())
    }

    pub fn app_config(&self) -> AppConfig {
        AppConfig {
            prune: PruneConfig {
                keep_recent: self.pruning.keep_recent,
                interval: self.pruning.interval,
            },
            retain_blocks: self.pruning.retain_blocks,
            max_pending_per_account: self.mempool.max_pending_per_account,
            decode_cache_bytes: self.caches.decode_mb.saturating_mul(1 << 20),
            decode_cache_entries: self.caches.decode_entries.max(1),
        }
    }

    /// Sets the process-wide Casbin compiled-model cache budgets.
    pub fn apply_cache_budgets(&self) {
        use crate::keyspaces::casbin::cache::{set_budget, Use};
        set_budget(
            Use::Consensus,
            self.caches.casbin_consensus_mb.saturating_mul(1 << 20),
        );
        set_budget(
            Use::Query,
            self.caches.casbin_query_mb.saturating_mul(1 << 20),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_round_trips_through_toml() {
        let home = Home::new("/tmp/h");
        let c = Config::default_for(&home, "n0");
        let text = toml::to_string_pretty(&c).unwrap();
        let back: Config = toml::from_str(&text).unwrap();
        assert_eq!(c, back);
        assert_eq!(back.abci.listen, "unix:///tmp/h/abci.sock");
        assert!(back.validate().is_ok());
        let mut bad = back.clone();
        bad.pruning.interval = 0;
        assert!(bad.validate().is_err(), "keep_recent without an interval");
        // a config from before `[peer]` existed still serves PeerService
        let old = text.replace("[peer]\nlisten = \"127.0.0.1:9092\"\n", "");
        assert_ne!(old, text, "{text}");
        let upgraded: Config = toml::from_str(&old).unwrap();
        assert_eq!(upgraded.peer.listen, DEFAULT_PEER_LISTEN);
        // one from before the replica params moved to genesis still loads
        assert!(!text.contains("pow_base"), "not written any more");
        let old = text.replace(
            "[replica]
",
            "[replica]
pow_base = 1
horizon_hours = 24
",
        );
        assert_ne!(old, text);
        let upgraded: Config = toml::from_str(&old).unwrap();
        assert_eq!(upgraded.replica.pow_base, Some(1));
    }

    #[test]
    fn abci_server_defaults_to_threads_and_can_name_tower() {
        let parse = |extra: &str| {
            toml::from_str::<AbciSection>(&format!("listen = \"unix:///s\"\n{extra}"))
        };
        assert_eq!(parse("").unwrap().server, AbciServer::Threads);
        assert_eq!(
            parse("server = \"tower\"").unwrap().server,
            AbciServer::Tower
        );
        assert_eq!(
            parse("server = \"threads\"").unwrap().server,
            AbciServer::Threads
        );
        assert!(parse("server = \"fibres\"").is_err());
    }

    #[test]
    fn memory_budgets_come_from_the_config_file() {
        let c: StorageSection = toml::from_str("cache_mb = 32\nmemtable_mb = 16").unwrap();
        assert_eq!(c.memory().cache_bytes, 32 << 20);
        assert_eq!(c.memory().memtable_bytes, 16 << 20);
        let home = Home::new("/tmp/h");
        let mut config = Config::default_for(&home, "n0");
        config.caches = toml::from_str("decode_mb = 8\ndecode_entries = 100").unwrap();
        let app = config.app_config();
        assert_eq!(
            (app.decode_cache_bytes, app.decode_cache_entries),
            (8 << 20, 100)
        );
        assert_eq!(
            config.caches.casbin_consensus_mb, 256,
            "unset keys keep their default"
        );
        assert!(toml::from_str::<CachesSection>("decode_gb = 1").is_err());
    }
}

//! The peer listener's allow-list: the IPs of the `address` of every
//! ACTIVE and UNBONDING validator in the latest committed state, refreshed
//! after every Commit. A host name in a record is resolved at refresh.

use std::collections::BTreeSet;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::keyspaces::validators::query::peer_addresses;
use crate::store::{ChainStore, StoreError};

/// The IPs allowed to connect to the peer listener.
#[derive(Debug, Default)]
pub struct AllowList {
    ips: RwLock<BTreeSet<IpAddr>>,
}

impl AllowList {
    pub fn contains(&self, ip: IpAddr) -> bool {
        self.ips.read().contains(&ip.to_canonical())
    }

    pub fn replace(&self, ips: BTreeSet<IpAddr>) {
        *self.ips.write() = ips;
    }

    pub fn snapshot(&self) -> BTreeSet<IpAddr> {
        self.ips.read().clone()
    }

    /// Re-reads the list from the latest committed state. Blocking (store
    /// reads and name resolution): run it off the async runtime.
    pub fn refresh(&self, store: &ChainStore) -> Result<usize, StoreError> {
        let addresses = peer_addresses(&store.view())?;
        let ips: BTreeSet<IpAddr> = addresses.iter().flat_map(|a| ips_of(a)).collect();
        let n = ips.len();
        if *self.ips.read() != ips {
            tracing::info!(?ips, "peer allow-list updated");
            self.replace(ips);
        }
        Ok(n)
    }
}

/// The IPs of `host:port` (a literal, or a name resolved now); none if it
/// does not parse or resolve.
fn ips_of(address: &str) -> Vec<IpAddr> {
    let hostport = address.split_once("://").map_or(address, |(_, rest)| rest);
    match hostport.to_socket_addrs() {
        Ok(addrs) => addrs.map(|a| a.ip().to_canonical()).collect(),
        Err(e) => {
            tracing::warn!(%address, error = %e, "validator address does not resolve; not allow-listed");
            Vec::new()
        }
    }
}

/// Refreshes `allow` now and after every committed height.
pub async fn keep_fresh(
    allow: Arc<AllowList>,
    store: ChainStore,
    mut heights: tokio::sync::watch::Receiver<u64>,
) {
    loop {
        let (a, s) = (allow.clone(), store.clone());
        match tokio::task::spawn_blocking(move || a.refresh(&s)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::error!(error = %e, "peer allow-list: reading validators"),
            Err(e) => tracing::error!(error = %e, "peer allow-list: refresh task"),
        }
        if heights.changed().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_give_their_ips() {
        assert_eq!(
            ips_of("127.0.0.2:9092"),
            vec!["127.0.0.2".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(
            ips_of("http://127.0.0.3:1"),
            vec!["127.0.0.3".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(
            ips_of("[::ffff:127.0.0.4]:1"),
            vec!["127.0.0.4".parse::<IpAddr>().unwrap()]
        );
        assert!(ips_of("no port").is_empty());
    }
}

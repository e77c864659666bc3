//! `[limits]` of `stave.toml`: connection caps, per-IP rates and HTTP/2
//! settings of the three listeners. Node-local; nothing here changes what a
//! tx does.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// `[limits]`. Every key has a default; see README "Listeners and limits".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Connections the public client listener holds at once; more are
    /// accepted and closed at once.
    pub client_max_connections: usize,
    /// Connections the peer listener holds at once.
    pub peer_max_connections: usize,
    /// Connections the admin socket holds at once.
    pub admin_max_connections: usize,
    /// Connections the metrics endpoint serves at once.
    pub metrics_max_connections: usize,
    /// Connections one IP may hold open at once (client and peer), so no
    /// single address takes every place of a listener's cap.
    pub per_ip_max_connections: usize,
    /// New connections one IP may open per second (client and peer).
    pub per_ip_connections_per_sec: u32,
    /// Burst of new connections one IP may open at once.
    pub per_ip_connection_burst: u32,
    /// Requests one IP may send per second (client and peer).
    pub per_ip_requests_per_sec: u32,
    /// Burst of requests one IP may send at once.
    pub per_ip_request_burst: u32,
    /// Requests one connection may have in flight (tonic
    /// `concurrency_limit_per_connection`).
    pub concurrency_per_connection: usize,
    /// HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS` per connection.
    pub max_concurrent_streams: u32,
    /// A connection is closed (gracefully) after this many seconds.
    pub max_connection_age_secs: u64,
    /// A unary call is cut off after this many seconds. Streams are bounded
    /// by their handlers' idle and minimum-throughput timeouts instead.
    pub request_timeout_secs: u64,
    /// HTTP/2 keepalive ping interval, seconds.
    pub keepalive_interval_secs: u64,
    /// A connection that does not answer a ping within this many seconds
    /// is closed.
    pub keepalive_timeout_secs: u64,
    /// Threads the gRPC queries may use at once (the query pool); ABCI
    /// Info/Query never wait behind them.
    pub query_threads: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            client_max_connections: 2048,
            peer_max_connections: 128,
            admin_max_connections: 8,
            metrics_max_connections: 16,
            per_ip_max_connections: 64,
            per_ip_connections_per_sec: 20,
            per_ip_connection_burst: 64,
            per_ip_requests_per_sec: 200,
            per_ip_request_burst: 400,
            concurrency_per_connection: 32,
            max_concurrent_streams: 64,
            max_connection_age_secs: 3600,
            request_timeout_secs: 60,
            keepalive_interval_secs: 10,
            keepalive_timeout_secs: 20,
            query_threads: 8,
        }
    }
}

impl Limits {
    /// Rejects zeros that would make a listener refuse everything.
    pub fn validate(&self) -> Result<(), String> {
        let positive = [
            ("client_max_connections", self.client_max_connections as u64),
            ("peer_max_connections", self.peer_max_connections as u64),
            ("admin_max_connections", self.admin_max_connections as u64),
            (
                "metrics_max_connections",
                self.metrics_max_connections as u64,
            ),
            ("per_ip_max_connections", self.per_ip_max_connections as u64),
            (
                "per_ip_connections_per_sec",
                self.per_ip_connections_per_sec.into(),
            ),
            (
                "per_ip_connection_burst",
                self.per_ip_connection_burst.into(),
            ),
            (
                "per_ip_requests_per_sec",
                self.per_ip_requests_per_sec.into(),
            ),
            ("per_ip_request_burst", self.per_ip_request_burst.into()),
            (
                "concurrency_per_connection",
                self.concurrency_per_connection as u64,
            ),
            ("max_concurrent_streams", self.max_concurrent_streams.into()),
            ("max_connection_age_secs", self.max_connection_age_secs),
            ("request_timeout_secs", self.request_timeout_secs),
            ("keepalive_interval_secs", self.keepalive_interval_secs),
            ("keepalive_timeout_secs", self.keepalive_timeout_secs),
            ("query_threads", self.query_threads as u64),
        ];
        match positive.iter().find(|(_, v)| *v == 0) {
            Some((k, _)) => Err(format!("limits.{k} must be positive, got 0")),
            None => Ok(()),
        }
    }

    pub fn request_timeout(&self) -> Duration {
        Duration::from_secs(self.request_timeout_secs)
    }
    pub fn max_connection_age(&self) -> Duration {
        Duration::from_secs(self.max_connection_age_secs)
    }
    pub fn keepalive_interval(&self) -> Duration {
        Duration::from_secs(self.keepalive_interval_secs)
    }
    pub fn keepalive_timeout(&self) -> Duration {
        Duration::from_secs(self.keepalive_timeout_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_a_zero_is_named() {
        assert!(Limits::default().validate().is_ok());
        let bad = Limits {
            peer_max_connections: 0,
            ..Limits::default()
        };
        let e = bad.validate().unwrap_err();
        assert!(e.contains("peer_max_connections"), "{e}");
    }

    #[test]
    fn a_partial_section_keeps_the_other_defaults() {
        let l: Limits = toml::from_str("client_max_connections = 7").unwrap();
        assert_eq!(l.client_max_connections, 7);
        assert_eq!(l.query_threads, Limits::default().query_threads);
        assert!(toml::from_str::<Limits>("no_such_key = 1").is_err());
    }
}

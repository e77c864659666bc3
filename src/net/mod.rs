//! The network surface's limits, shared by the three gRPC listeners
//! (public client, peer, admin) and the metrics endpoint:
//! - [`incoming`]: accept streams with a connection cap, the peer
//!   allow-list and a per-IP connection rate;
//! - [`allow`]: the peer allow-list, read from committed state after every
//!   Commit;
//! - [`rate`]: per-IP token buckets (`governor`);
//! - [`limits`]: `[limits]` of `stave.toml`;
//! - [`rlimit`]: `RLIMIT_NOFILE` raised at start;
//! - [`unix`]: Unix sockets bound with mode 0600 (admin, ABCI).
//!
//! docs/network.md is the operator's reference.

pub mod allow;
pub mod incoming;
pub mod limits;
pub mod rate;
pub mod rlimit;
pub mod unix;

pub use limits::Limits;

//! Per-IP rate limits (`governor`, keyed by IP): new connections at
//! accept, and requests in a tonic interceptor.

// tonic's `Status` is large; it is the error type tonic's handlers return.
#![allow(clippy::result_large_err)]

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// Checks between two sweeps of IPs whose buckets are full again.
const SWEEP_EVERY: u64 = 4096;

/// `per_sec` sustained and `burst` at once, zeros read as 1.
pub fn quota(per_sec: u32, burst: u32) -> Quota {
    let one = NonZeroU32::MIN;
    Quota::per_second(NonZeroU32::new(per_sec).unwrap_or(one))
        .allow_burst(NonZeroU32::new(burst).unwrap_or(one))
}

/// A token bucket per IP.
pub struct IpRate {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
    checks: AtomicU64,
}

impl IpRate {
    /// `per_sec` sustained, `burst` at once (zeros are read as 1).
    pub fn new(per_sec: u32, burst: u32) -> Self {
        IpRate {
            limiter: RateLimiter::keyed(quota(per_sec, burst)),
            checks: AtomicU64::new(0),
        }
    }

    /// Takes one token of `ip`'s bucket; false if it is empty.
    pub fn check(&self, ip: IpAddr) -> bool {
        if self.checks.fetch_add(1, Ordering::Relaxed) % SWEEP_EVERY == SWEEP_EVERY - 1 {
            self.limiter.retain_recent();
        }
        self.limiter.check_key(&subject(ip)).is_ok()
    }
}

/// What per-IP limits count as one client: an IPv4 address, or an IPv6
/// /64 (one host usually holds a whole /64, so single IPv6 addresses would
/// give one attacker millions of buckets).
pub fn subject(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let mut o = v6.octets();
            o[8..].fill(0);
            IpAddr::V6(o.into())
        }
        v4 => v4,
    }
}

/// A tonic interceptor refusing a caller's requests past its IP's rate
/// with `RESOURCE_EXHAUSTED`. Requests with no IP (Unix sockets) pass.
pub fn interceptor(
    rate: Arc<IpRate>,
    listener: &'static str,
) -> impl FnMut(tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> + Clone {
    move |req: tonic::Request<()>| match req.remote_addr() {
        Some(a) if !rate.check(a.ip()) => {
            crate::metrics::metrics()
                .listener_refused
                .with_label_values(&[listener, "request_rate"])
                .inc();
            Err(tonic::Status::resource_exhausted(format!(
                "{} sends requests faster than this node's per-IP limit",
                a.ip()
            )))
        }
        _ => Ok(req),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_allowed_then_refused_per_ip() {
        let r = IpRate::new(1, 3);
        let (x, y): (IpAddr, IpAddr) = (
            "2001:db8::1".parse().unwrap(),
            "2001:db8::ffff:2".parse().unwrap(),
        );
        assert_eq!(subject(x), subject(y), "one /64, one subject");
        let z: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(subject(z), "10.0.0.1".parse::<IpAddr>().unwrap());
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        assert!((0..3).all(|_| r.check(a)));
        assert!(!r.check(a), "the fourth at once is over the burst");
        assert!(r.check(b), "another IP has its own bucket");
    }
}

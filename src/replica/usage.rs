//! What each owner's records take on this node, and the quota that bounds
//! it: a validator, however much work it spends, cannot fill its peers'
//! disks. `[replica] max_records_per_owner` and `max_bytes_per_owner`
//! (metadata and value bytes, a shared value counted for each record).

use super::md::{Metadata, MD_BYTES};

/// One owner's records as held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub records: u64,
    pub bytes: u64,
}

/// The most one owner's records may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quota {
    pub records: u64,
    pub bytes: u64,
}

impl Quota {
    pub const UNLIMITED: Quota = Quota {
        records: u64::MAX,
        bytes: u64::MAX,
    };
}

/// The bytes a record counts for.
pub fn cost(md: &Metadata) -> u64 {
    MD_BYTES as u64 + u64::from(md.size)
}

/// `u` with `new` replacing `old` (if any), or `None` when that grows it
/// past `q` (a change that does not grow a figure always fits it).
pub fn admit(u: Usage, q: Quota, old: Option<&Metadata>, new: &Metadata) -> Option<Usage> {
    let old_cost = old.map_or(0, cost);
    let next = Usage {
        records: u.records + u64::from(old.is_none()),
        bytes: u.bytes.saturating_sub(old_cost).saturating_add(cost(new)),
    };
    let over_records = old.is_none() && next.records > q.records;
    let over_bytes = cost(new) > old_cost && next.bytes > q.bytes;
    (!over_records && !over_bytes).then_some(next)
}

/// `u` without the record `md`.
pub fn release(u: Usage, md: &Metadata) -> Usage {
    Usage {
        records: u.records.saturating_sub(1),
        bytes: u.bytes.saturating_sub(cost(md)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(size: u32) -> Metadata {
        Metadata {
            ts: 1,
            flags: 1,
            size,
            hash: [0; 32],
            sig: [0; 64],
            ttl_begin: 1,
            ttl: 1,
            pow_nonce: 0,
        }
    }

    #[test]
    fn quotas_refuse_growth_only() {
        let q = Quota {
            records: 2,
            bytes: 1_000,
        };
        let u = admit(Usage::default(), q, None, &md(100)).unwrap();
        assert_eq!(
            u,
            Usage {
                records: 1,
                bytes: 228
            }
        );
        let u = admit(u, q, None, &md(500)).unwrap();
        assert_eq!(u.records, 2);
        assert_eq!(admit(u, q, None, &md(0)), None, "a third record");
        // Replacing a record with a larger one past the bytes: refused;
        // with a smaller one: fits.
        assert_eq!(admit(u, q, Some(&md(100)), &md(700)), None);
        let smaller = admit(u, q, Some(&md(500)), &md(10)).unwrap();
        assert_eq!(
            smaller,
            Usage {
                records: 2,
                bytes: 228 + 138
            }
        );
        assert_eq!(
            release(smaller, &md(10)),
            Usage {
                records: 1,
                bytes: 228
            }
        );
        // Already over (the quota was lowered): shrinking still fits.
        let over = Usage {
            records: 5,
            bytes: 5_000,
        };
        assert!(admit(over, q, Some(&md(500)), &md(100)).is_some());
    }
}

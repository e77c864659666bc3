//! `Download`: the encrypted blob, or a range of it aligned to its STREAM
//! chunks, from any replica.
//!
//! - **Who.** A consumer's signed request the access decision allows (its
//!   `validator` empty or this node; the uploader always), or no request
//!   for PUBLIC content. The blob is useless without the DEK, so a request
//!   is not consumed: it may be used again within its window.
//! - **Ranges.** `offset` is 0 (the header first) or a chunk's start;
//!   the range ends at a chunk's end or the blob's end. Each message
//!   carries the header or exactly one sealed chunk, so the client opens
//!   each as it arrives ([`crate::crypto::chunks`]) and resumes at any
//!   chunk.
//! - **Limits.** `max_downloads` at once and `max_downloads_per_ip` per
//!   client IP (else `ACCESS_BUSY`); one byte bucket per client IP shared
//!   by its streams (`per_ip_bytes_per_sec`); a reader that takes nothing
//!   for `idle_timeout_secs`, or averages under `min_bytes_per_sec` after a
//!   minute's grace, is cut off and its slot freed.

use std::collections::BTreeMap;
use std::io::SeekFrom;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::{Duration, Instant};

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio::sync::mpsc;

use super::{AccessConfig, AccessError};
use crate::crypto::chunks::{span, starting_at, SEALED_CHUNK};
use crate::crypto::stream::HEADER_LEN;
use crate::proto::content::DownloadChunk;

/// Seconds a download may go at any rate before the minimum rate counts.
pub const GRACE_SECS: u64 = 60;

/// The pieces `[start, end)` a range is sent as: the header (when it
/// starts at 0), then whole sealed chunks.
///
/// # Errors
/// `RANGE_INVALID` when the range starts inside a chunk, ends past the
/// blob, or ends inside a chunk.
pub fn plan(total: u64, offset: u64, length: u64) -> Result<Vec<(u64, u64)>, AccessError> {
    let bad = |reason: &str| AccessError::Range {
        offset,
        length,
        total,
        reason: reason.into(),
    };
    let end = if length == 0 {
        total
    } else {
        offset.checked_add(length).ok_or_else(|| bad("overflows"))?
    };
    if end > total || offset >= total {
        return Err(bad("outside the blob"));
    }
    let header = HEADER_LEN as u64;
    let first = match offset {
        0 => 0,
        o => starting_at(o, total).ok_or_else(|| bad("does not start at a chunk"))?,
    };
    if end != total
        && end != header
        && (end < header || !(end - header).is_multiple_of(SEALED_CHUNK))
    {
        return Err(bad("does not end at a chunk's end or the blob's end"));
    }
    let mut pieces = Vec::new();
    if offset == 0 {
        pieces.push((0, header.min(end)));
    }
    let mut i = first;
    loop {
        let (s, e) = span(i, total);
        if s >= end {
            break;
        }
        pieces.push((s, e));
        i += 1;
    }
    Ok(pieces)
}

/// The caps and byte buckets of downloads.
pub struct Downloads {
    open: Arc<tokio::sync::Semaphore>,
    per_ip: Arc<Mutex<BTreeMap<IpAddr, usize>>>,
    max_per_ip: usize,
    bytes: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    /// Slots taken, to prune the byte buckets of IPs gone quiet now and then.
    taken: std::sync::atomic::AtomicU64,
}

/// One open download; frees its places when dropped.
pub struct Slot {
    _permit: tokio::sync::OwnedSemaphorePermit,
    ip: IpAddr,
    per_ip: Arc<Mutex<BTreeMap<IpAddr, usize>>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut map = self.per_ip.lock();
        if let Some(n) = map.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                map.remove(&self.ip);
            }
        }
    }
}

impl Downloads {
    pub fn new(cfg: &AccessConfig) -> Self {
        // a chunk must fit one burst
        let per_sec = cfg.per_ip_bytes_per_sec.max(SEALED_CHUNK as u32);
        let quota = Quota::per_second(NonZeroU32::new(per_sec).unwrap_or(NonZeroU32::MIN));
        Downloads {
            open: Arc::new(tokio::sync::Semaphore::new(cfg.max_downloads.max(1))),
            per_ip: Arc::default(),
            max_per_ip: cfg.max_downloads_per_ip.max(1),
            bytes: Arc::new(RateLimiter::keyed(quota)),
            taken: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// A slot for one download by `ip`, or `ACCESS_BUSY`.
    pub fn slot(&self, ip: IpAddr) -> Result<Slot, AccessError> {
        let ip = crate::net::rate::subject(ip);
        let n = self
            .taken
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n % 1024 == 1023 {
            self.bytes.retain_recent();
        }
        let permit = self
            .open
            .clone()
            .try_acquire_owned()
            .map_err(|_| AccessError::Busy("this node's downloads are all in use".into()))?;
        let mut map = self.per_ip.lock();
        let n = map.entry(ip).or_insert(0);
        if *n >= self.max_per_ip {
            return Err(AccessError::Busy(format!(
                "{ip} has {} downloads open, the most one client may",
                self.max_per_ip
            )));
        }
        *n += 1;
        Ok(Slot {
            _permit: permit,
            ip,
            per_ip: self.per_ip.clone(),
        })
    }
}

/// How one download is sent (from [`super::Access::open_download`]).
pub struct Sending {
    pub file: tokio::fs::File,
    pub pieces: Vec<(u64, u64)>,
    pub total: u64,
    pub slot: Slot,
    pub bytes: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    pub idle: Duration,
    pub min_rate: u64,
}

/// The error the reader sees when a stream is cut.
fn cut(why: String) -> tonic::Status {
    AccessError::TooSlow(why).refusal()
}

/// Reads piece `(s, e)` of `file`.
async fn read_piece(file: &mut tokio::fs::File, s: u64, e: u64) -> std::io::Result<Vec<u8>> {
    let len = usize::try_from(e.saturating_sub(s)).unwrap_or(0);
    let mut buf = vec![0u8; len];
    file.seek(SeekFrom::Start(s)).await?;
    file.read_exact(&mut buf).await?;
    Ok(buf)
}

/// Sends the pieces in order, each after the client IP's bucket allows it
/// and within the idle timeout; ends the stream (`STREAM_TOO_SLOW`) when
/// the reader stalls or falls under the minimum rate after the grace.
pub async fn send(mut s: Sending, tx: mpsc::Sender<Result<DownloadChunk, tonic::Status>>) {
    let started = Instant::now();
    let mut sent = 0u64;
    let ip = s.slot.ip;
    for (start, end) in std::mem::take(&mut s.pieces) {
        let n = u32::try_from(end - start).unwrap_or(u32::MAX);
        if let Some(n) = NonZeroU32::new(n) {
            // a piece never exceeds the burst (Downloads::new)
            let _ = s.bytes.until_key_n_ready(&ip, n).await;
        }
        let item = match read_piece(&mut s.file, start, end).await {
            Ok(data) => Ok(DownloadChunk {
                offset: start,
                data,
                total: s.total,
            }),
            Err(e) => Err(AccessError::Local(format!("reading the blob: {e}")).to_status()),
        };
        let failed = item.is_err();
        match tokio::time::timeout(s.idle, tx.send(item)).await {
            Ok(Ok(())) if !failed => {}
            Ok(_) => return,
            Err(_) => {
                let why = format!("the reader took nothing for {} s", s.idle.as_secs());
                let _ = tx.try_send(Err(cut(why)));
                return;
            }
        }
        sent += end - start;
        crate::metrics::metrics()
            .access
            .download_bytes
            .inc_by(end - start);
        let secs = started.elapsed().as_secs();
        if secs > GRACE_SECS && sent / secs.max(1) < s.min_rate {
            let why = format!("{sent} bytes in {secs} s is under {} B/s", s.min_rate);
            let _ = tx.try_send(Err(cut(why)));
            return;
        }
    }
}

impl super::Access {
    /// Checks a download request against the latest committed state and
    /// opens its range (reads chain state: run it on a blocking thread).
    ///
    /// # Errors
    /// `ACCESS_UNAVAILABLE`, every refusal of the request and the access
    /// decision, `NOT_HELD` (with the replicas) when this node does not
    /// hold the blob, `RANGE_INVALID`, `ACCESS_BUSY`.
    pub fn open_download(
        &self,
        req: &crate::proto::content::DownloadRequest,
        ip: IpAddr,
    ) -> Result<Sending, AccessError> {
        self.ready()?;
        let view = self.node.chain.view();
        let upload = match &req.access {
            Some(signed) => {
                let at = super::deliver::At::read(&view)?;
                let (r, u) = self.verified(&view, &at, signed, false)?;
                let ok = self.decide(&view, &at, r, u, true)?;
                let u = ok.upload;
                if !req.cid.is_empty() && req.cid != u.flac_cid && req.cid != u.encrypted_cid {
                    return Err(AccessError::Invalid(format!(
                        "the download names cid {} and its request cid {}",
                        hex::encode(&req.cid),
                        hex::encode(&ok.req.cid)
                    )));
                }
                u
            }
            None => self.public(&view, &req.cid)?,
        };
        let held = self.node.content.size(&upload.encrypted_cid);
        let Some(total) = held.filter(|s| *s == upload.encrypted_size) else {
            return Err(AccessError::NotAReplica {
                me: hex::encode(self.node.me()),
                cid: hex::encode(&upload.encrypted_cid),
                replicas: upload.replication_set.iter().map(hex::encode).collect(),
            });
        };
        let pieces = plan(total, req.offset, req.length)?;
        let slot = self.downloads.slot(ip)?;
        let path = self.node.content.path_of(&upload.encrypted_cid);
        let file = std::fs::File::open(&path)
            .map_err(|e| AccessError::Local(format!("opening {}: {e}", path.display())))?;
        Ok(Sending {
            file: tokio::fs::File::from_std(file),
            pieces,
            total,
            slot,
            bytes: self.downloads.bytes.clone(),
            idle: Duration::from_secs(self.cfg.idle_timeout_secs.max(1)),
            min_rate: self.cfg.min_bytes_per_sec,
        })
    }

    /// The upload of `cid` when its content is PUBLIC and open to anyone:
    /// published, under no takedown, its policy PUBLIC.
    fn public(
        &self,
        view: &crate::store::View<'_>,
        cid: &[u8],
    ) -> Result<crate::proto::rights::Upload, AccessError> {
        use crate::keyspaces::rights::{access, block_secs, RightsError};
        use crate::keyspaces::uploads::UploadsRead;
        let unknown = || AccessError::Denied(RightsError::UnknownCid(hex::encode(cid)));
        let upload = match view.upload(cid)? {
            Some(u) => u,
            None => view.upload_by_content(cid)?.ok_or_else(unknown)?,
        };
        let now = block_secs(view.commit_info()?.block_time_ns()?);
        let anyone = access::AccessRequest {
            cid: &upload.flac_cid,
            consumer: &[0; 32],
            territory: "",
            use_type: 0,
            now,
            context: &[],
        };
        let d = access::decide_with(view, &anyone, crate::keyspaces::casbin::CacheUse::Query)?;
        d.outcome.map_err(AccessError::Denied)?;
        if d.policy_type != crate::proto::rights::PolicyType::Public {
            return Err(AccessError::Denied(RightsError::AccessDenied(format!(
                "cid {} is {}, not PUBLIC: a consumer's signed request is needed",
                hex::encode(cid),
                d.policy_type.as_str_name()
            ))));
        }
        Ok(upload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tx::Code;

    const H: u64 = HEADER_LEN as u64;

    #[test]
    fn ranges_are_whole_chunks_and_inside_the_blob() {
        let total = H + 2 * SEALED_CHUNK + 100;
        let all = plan(total, 0, 0).unwrap();
        assert_eq!(
            all,
            vec![
                (0, H),
                (H, H + SEALED_CHUNK),
                (H + SEALED_CHUNK, H + 2 * SEALED_CHUNK),
                (H + 2 * SEALED_CHUNK, total)
            ]
        );
        assert_eq!(plan(total, H + SEALED_CHUNK, 0).unwrap(), all[2..].to_vec());
        assert_eq!(plan(total, H, SEALED_CHUNK).unwrap(), all[1..2].to_vec());
        assert_eq!(plan(total, 0, H).unwrap(), all[..1].to_vec());
        let code = |o, l| plan(total, o, l).unwrap_err().code();
        assert_eq!(code(1, 0), Code::RangeInvalid, "inside the header");
        assert_eq!(code(H + 1, 0), Code::RangeInvalid, "inside a chunk");
        assert_eq!(code(H, 10), Code::RangeInvalid, "ends inside a chunk");
        assert_eq!(code(total, 0), Code::RangeInvalid, "at the end");
        assert_eq!(code(0, total + 1), Code::RangeInvalid, "past the end");
        assert_eq!(code(H, u64::MAX), Code::RangeInvalid, "overflows");
    }

    #[test]
    fn downloads_are_capped_per_ip_and_in_all() {
        let cfg = AccessConfig {
            max_downloads: 3,
            max_downloads_per_ip: 2,
            ..AccessConfig::default()
        };
        let d = Downloads::new(&cfg);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let s1 = d.slot(a).unwrap();
        let _s2 = d.slot(a).unwrap();
        assert_eq!(d.slot(a).err().map(|e| e.code()), Some(Code::AccessBusy));
        let _s3 = d.slot(b).unwrap();
        assert_eq!(
            d.slot(b).err().map(|e| e.code()),
            Some(Code::AccessBusy),
            "all in use"
        );
        drop(s1);
        assert!(d.slot(a).is_ok(), "a freed slot is taken again");
    }
}

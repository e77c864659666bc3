//! The consumer's side of access and delivery, for application developers:
//! find the DEK holders and replicas of a cid from chain state alone
//! (upload records and validators' `client_endpoint`), ask a holder for the
//! key (`RequestAccess`), download the encrypted blob from any replica
//! chunk by chunk, verifying each chunk as it arrives, and check the whole
//! against `encrypted_cid` and the plaintext against `flac_cid`.
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! use stave::client::content::{Consumer, fetch};
//! let consumer = Consumer::generate();
//! let cid = vec![0u8; 36]; // an upload's flac_cid
//! let fetched = fetch("http://127.0.0.1:9090", &consumer, &cid, "GB", &[],
//!     std::path::Path::new("track.flac"), &mut |_, _| {}).await?;
//! println!("{} bytes from {}", fetched.bytes, fetched.holder);
//! # Ok(()) }
//! ```
//! A complete program is `examples/fetch_content.rs`.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use ed25519_dalek::SigningKey;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;
use x25519_dalek::StaticSecret;

use super::StaveClient;
use crate::access::{code_of, receipt, sign_request};
use crate::crypto::chunks::{self, Opener};
use crate::crypto::wrap::{unwrap_dek, WrappedDek};
use crate::crypto::{dek_commitment, Dek};
use crate::proto::content as pb;
use crate::proto::rights::{Condition, Upload};
use crate::tx::Code;

/// A consumer's keys: the ed25519 identity entitlements name, and the
/// X25519 key DEKs are wrapped to; and the use its requests ask for
/// (`stave.ddex.v1.UseType`, 0 = on-demand stream).
pub struct Consumer {
    pub key: SigningKey,
    pub x25519: StaticSecret,
    pub use_type: i32,
}

impl Consumer {
    /// Fresh random keys.
    pub fn generate() -> Self {
        Consumer {
            key: SigningKey::generate(&mut rand::rngs::OsRng),
            x25519: StaticSecret::random_from_rng(rand::rngs::OsRng),
            use_type: 0,
        }
    }

    pub fn pubkey(&self) -> [u8; 32] {
        self.key.verifying_key().to_bytes()
    }

    /// A signed request for `cid`, asked of `validator` (`None`: any
    /// replica, for Download).
    pub fn request(
        &self,
        chain_id: &str,
        cid: &[u8],
        validator: Option<[u8; 32]>,
        territory: &str,
        context: &[Condition],
    ) -> pb::SignedAccessRequest {
        use rand::RngCore;
        let mut nonce = vec![0u8; crate::access::request::NONCE_LEN];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        sign_request(
            &self.key,
            pb::AccessRequest {
                chain_id: chain_id.to_string(),
                timestamp_ms: crate::content::now_ms(),
                nonce,
                cid: cid.to_vec(),
                consumer_pubkey: Vec::new(),
                consumer_x25519: x25519_dalek::PublicKey::from(&self.x25519)
                    .to_bytes()
                    .to_vec(),
                validator: validator.map(|v| v.to_vec()).unwrap_or_default(),
                territory: territory.to_string(),
                context: context.to_vec(),
                use_type: self.use_type,
            },
        )
    }
}

/// A validator and where its public API is, from chain state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    /// Its name: the operator key its record is stored under.
    pub key: [u8; 32],
    /// `http://host:port`, or empty when it publishes none.
    pub endpoint: String,
    /// The key that signs its receipts: `key` unless a `RotateOperatorKey`
    /// handed signing to another.
    pub signer: [u8; 32],
}

impl Peer {
    /// A validator whose operator key was never rotated.
    pub fn unrotated(key: [u8; 32], endpoint: String) -> Self {
        Peer {
            key,
            endpoint,
            signer: key,
        }
    }
}

/// The chain id the node `c` serves.
pub async fn chain_id(c: &mut StaveClient) -> anyhow::Result<String> {
    Ok(c.content
        .node(pb::NodeRequest {})
        .await?
        .into_inner()
        .chain_id)
}

/// The upload record of `cid` (its flac_cid).
pub async fn upload_of(c: &mut StaveClient, cid: &[u8]) -> anyhow::Result<Upload> {
    let r = c
        .rights
        .get_upload(crate::proto::rights::CidRequest {
            cid: cid.to_vec(),
            ..Default::default()
        })
        .await
        .with_context(|| format!("GetUpload {}", hex::encode(cid)))?
        .into_inner();
    r.upload
        .ok_or_else(|| anyhow!("no upload has cid {}", hex::encode(cid)))
}

/// The validators `keys` with their published client endpoints.
pub async fn peers(c: &mut StaveClient, keys: &[Vec<u8>]) -> anyhow::Result<Vec<Peer>> {
    let mut out = Vec::with_capacity(keys.len());
    for k in keys {
        let Ok(key) = <[u8; 32]>::try_from(k.as_slice()) else {
            continue;
        };
        let v = c
            .governance
            .validator(crate::proto::governance::ValidatorRequest {
                operator_key: k.clone(),
                ..Default::default()
            })
            .await?
            .into_inner();
        let record = v.validator.and_then(|v| v.record).unwrap_or_default();
        let signer = crate::keyspaces::validators::signing::signing_key(&key, &record);
        let endpoint = record
            .validator
            .map(|g| g.client_endpoint)
            .unwrap_or_default();
        let endpoint = match endpoint.as_str() {
            "" => String::new(),
            e if e.starts_with("http") => e.to_string(),
            e => format!("http://{e}"),
        };
        out.push(Peer {
            key,
            endpoint,
            signer,
        });
    }
    Ok(out)
}

/// `peers` with the validators the node `c` says announce `cid` first
/// (least loaded first), the rest after in their order. A node that
/// cannot say leaves the order as it is.
pub async fn announcing_first(c: &mut StaveClient, cid: &[u8], mut peers: Vec<Peer>) -> Vec<Peer> {
    let req = crate::proto::replica::HoldersRequest { cid: cid.to_vec() };
    let Ok(r) = c.replica.holders(req).await else {
        return peers;
    };
    let rank: Vec<[u8; 32]> = r
        .into_inner()
        .holders
        .iter()
        .filter_map(|h| <[u8; 32]>::try_from(h.operator_key.as_slice()).ok())
        .collect();
    rank_by(&mut peers, &rank);
    peers
}

/// Orders `peers` as `rank` lists them, the unlisted after in their order.
fn rank_by(peers: &mut [Peer], rank: &[[u8; 32]]) {
    peers.sort_by_key(|p| rank.iter().position(|k| *k == p.key).unwrap_or(usize::MAX));
}

/// The key a holder delivered, with its answer (receipt included).
pub struct Key {
    pub dek: Dek,
    pub granted: pb::AccessGranted,
    pub holder: [u8; 32],
}

/// Asks `holder` for the key of `cid`, checks the receipt (signed by the
/// holder, for this request and this wrapped key) and unwraps the DEK.
///
/// # Errors
/// The holder's refusal (its code in the message, [`code_of`]), or an
/// answer that does not check out.
pub async fn request_access(
    holder: &Peer,
    consumer: &Consumer,
    signed: pb::SignedAccessRequest,
) -> Result<Key, tonic::Status> {
    let mut c = StaveClient::connect(&holder.endpoint)
        .await
        .map_err(|e| tonic::Status::unavailable(format!("{e:#}")))?;
    let want_hash: [u8; 32] = Sha256::digest(crate::access::request::sign_bytes(
        signed
            .request
            .as_ref()
            .unwrap_or(&pb::AccessRequest::default()),
    ))
    .into();
    let asked = signed
        .request
        .as_ref()
        .map(|r| r.cid.clone())
        .unwrap_or_default();
    let g = c.content.request_access(signed).await?.into_inner();
    let bad =
        |why: &str| tonic::Status::data_loss(format!("holder {}: {why}", hex::encode(holder.key)));
    let r = g.receipt.clone().ok_or_else(|| bad("no receipt"))?;
    if g.cid != asked && g.encrypted_cid != asked {
        return Err(bad("the answer names another cid"));
    }
    if r.validator != holder.key
        || r.request_hash != want_hash
        || r.consumer_pubkey != consumer.pubkey()
        || r.use_type != consumer.use_type
    {
        return Err(bad(
            "the receipt names another holder, request, consumer or use",
        ));
    }
    if !receipt::verify(
        &holder.signer,
        &r,
        &g.receipt_signature,
        &g.ephemeral_pubkey,
        &g.wrapped_dek,
    ) {
        return Err(bad("the receipt's signature does not verify"));
    }
    let eph =
        <[u8; 32]>::try_from(g.ephemeral_pubkey.as_slice()).map_err(|_| bad("ephemeral key"))?;
    let w = WrappedDek {
        ephemeral_pubkey: eph,
        ciphertext: g.wrapped_dek.clone(),
    };
    let dek = unwrap_dek(&consumer.x25519, &w, &g.cid).map_err(|e| bad(&e.to_string()))?;
    Ok(Key {
        dek,
        granted: g,
        holder: holder.key,
    })
}

/// Whether a refusal is the answer for every holder (the decision denies,
/// the request is bad), so asking the next holder is pointless.
fn is_final(s: &tonic::Status) -> bool {
    matches!(
        code_of(s),
        Some(
            Code::AccessDenied
                | Code::TakedownActive
                | Code::UnknownCid
                | Code::CasbinEvaluationFailed
                | Code::UnsupportedPolicyType
                | Code::AccessRequestInvalid
                | Code::AccessSignature
                | Code::BadX25519Key
        )
    )
}

/// Asks the cid's DEK holders, in set order, until one delivers; stops at
/// the first refusal that every holder would give.
///
/// # Errors
/// The last refusal, or no holder with an endpoint.
pub async fn access(
    c: &mut StaveClient,
    consumer: &Consumer,
    upload: &Upload,
    territory: &str,
    context: &[Condition],
) -> anyhow::Result<Key> {
    let chain_id = chain_id(c).await?;
    let mut last = anyhow!(
        "no DEK holder of {} publishes a client endpoint",
        hex::encode(&upload.flac_cid)
    );
    for h in peers(c, &upload.dek_holder_set).await? {
        if h.endpoint.is_empty() {
            continue;
        }
        let signed = consumer.request(&chain_id, &upload.flac_cid, Some(h.key), territory, context);
        match request_access(&h, consumer, signed).await {
            Ok(k) => {
                if dek_commitment(&k.dek, &upload.encrypted_cid).as_slice() != upload.dek_commitment
                {
                    last = anyhow!(
                        "holder {}: the DEK does not match dek_commitment",
                        hex::encode(h.key)
                    );
                    continue;
                }
                return Ok(k);
            }
            Err(s) if is_final(&s) => bail!("{}", s.message()),
            Err(s) => last = anyhow!("holder {}: {}", hex::encode(h.key), s.message()),
        }
    }
    Err(last)
}

/// What a download wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub path: PathBuf,
    /// Plaintext (FLAC) bytes.
    pub bytes: u64,
    /// The holder that delivered the key (hex), or "recovery".
    pub holder: String,
}

/// The state of one download across replicas.
struct Progress {
    opener: Option<Opener>,
    next: u64,
    chunks: u64,
    enc: Sha256,
    plain: Sha256,
    written: u64,
    out: tokio::fs::File,
}

/// Takes one message of the stream; errors name what did not verify.
async fn take(p: &mut Progress, m: pb::DownloadChunk, dek: &Dek, total: u64) -> anyhow::Result<()> {
    if m.total != total {
        bail!(
            "the replica's blob is {} bytes, the chain says {total}",
            m.total
        );
    }
    if m.offset == 0 && p.opener.is_none() {
        p.opener = Some(Opener::new(dek, &m.data)?);
        p.enc.update(&m.data);
        return Ok(());
    }
    let (start, _) = chunks::span(p.next, total);
    if m.offset != start {
        bail!("chunk at {} where {start} was due", m.offset);
    }
    let opener = p
        .opener
        .as_ref()
        .ok_or_else(|| anyhow!("a chunk before the header"))?;
    let plain = opener.open(p.next, p.next + 1 == p.chunks, &m.data)?;
    p.enc.update(&m.data);
    p.plain.update(&plain);
    p.out.write_all(&plain).await?;
    p.written += plain.len() as u64;
    p.next += 1;
    Ok(())
}

/// Downloads the upload's blob from `replicas` (resuming at the next chunk
/// on the next replica when one fails), decrypts it with `dek` into `out`
/// and checks both cids. `signed`: a request with no validator (None for
/// PUBLIC content). `progress(done, total)` follows the encrypted bytes.
///
/// # Errors
/// Every replica failed, a chunk did not open, or a cid did not match
/// (`out` is then removed).
pub async fn download(
    replicas: &[Peer],
    signed: Option<pb::SignedAccessRequest>,
    upload: &Upload,
    dek: &Dek,
    out: &Path,
    progress: &mut (dyn FnMut(u64, u64) + Send),
) -> anyhow::Result<u64> {
    let total = upload.encrypted_size;
    let part = out.with_extension("part");
    let mut p = Progress {
        opener: None,
        next: 0,
        chunks: chunks::count(total),
        enc: Sha256::new(),
        plain: Sha256::new(),
        written: 0,
        out: tokio::fs::File::create(&part)
            .await
            .with_context(|| format!("creating {}", part.display()))?,
    };
    let mut errors = Vec::new();
    for r in replicas.iter().filter(|r| !r.endpoint.is_empty()) {
        if p.next >= p.chunks {
            break;
        }
        if let Err(e) = from_replica(r, &signed, upload, dek, &mut p, progress).await {
            errors.push(format!("{}: {e:#}", hex::encode(r.key)));
            if p.next == 0 {
                // no chunk opened under this replica's header: ask the next
                // one for its own
                p.opener = None;
                p.enc = Sha256::new();
            }
        }
    }
    let done = p.next >= p.chunks;
    let finished = finish(p, upload, done, &errors);
    match finished {
        Ok(n) => {
            tokio::fs::rename(&part, out).await?;
            Ok(n)
        }
        Err(e) => {
            let _ = tokio::fs::remove_file(&part).await;
            Err(e)
        }
    }
}

fn finish(p: Progress, upload: &Upload, done: bool, errors: &[String]) -> anyhow::Result<u64> {
    if !done {
        bail!("no replica delivered the whole blob: {}", errors.join("; "));
    }
    let enc: [u8; 32] = p.enc.finalize().into();
    let plain: [u8; 32] = p.plain.finalize().into();
    if crate::media::cid::raw_cid_of_digest(&enc).as_slice() != upload.encrypted_cid {
        bail!(
            "the blob's hash is not encrypted_cid {}",
            hex::encode(&upload.encrypted_cid)
        );
    }
    if crate::media::cid::raw_cid_of_digest(&plain).as_slice() != upload.flac_cid {
        bail!(
            "the decrypted file's hash is not flac_cid {}",
            hex::encode(&upload.flac_cid)
        );
    }
    Ok(p.written)
}

async fn from_replica(
    r: &Peer,
    signed: &Option<pb::SignedAccessRequest>,
    upload: &Upload,
    dek: &Dek,
    p: &mut Progress,
    progress: &mut (dyn FnMut(u64, u64) + Send),
) -> anyhow::Result<()> {
    let total = upload.encrypted_size;
    let offset = if p.opener.is_none() {
        0
    } else {
        chunks::span(p.next, total).0
    };
    let mut c = StaveClient::connect(&r.endpoint).await?;
    let mut s = c
        .content
        .download(pb::DownloadRequest {
            access: signed.clone(),
            cid: upload.encrypted_cid.clone(),
            offset,
            length: 0,
        })
        .await
        .map_err(|s| anyhow!("{}", s.message()))?
        .into_inner();
    while let Some(m) = s.message().await.map_err(|s| anyhow!("{}", s.message()))? {
        let end = m.offset.saturating_add(m.data.len() as u64);
        take(p, m, dek, total).await?;
        progress(end, total);
    }
    p.out.flush().await?;
    Ok(())
}

/// Access, then download: the key from a holder, the blob from the
/// replicas, verified, into `out`. `node`: any node's public API, for
/// chain reads.
///
/// # Errors
/// The refusal, or a download that failed or did not verify.
pub async fn fetch(
    node: &str,
    consumer: &Consumer,
    cid: &[u8],
    territory: &str,
    context: &[Condition],
    out: &Path,
    progress: &mut (dyn FnMut(u64, u64) + Send),
) -> anyhow::Result<Fetched> {
    let mut c = StaveClient::connect(node).await?;
    let upload = upload_of(&mut c, cid).await?;
    let key = access(&mut c, consumer, &upload, territory, context).await?;
    let chain_id = chain_id(&mut c).await?;
    let signed = consumer.request(&chain_id, cid, None, territory, context);
    let replicas = peers(&mut c, &upload.replication_set).await?;
    let replicas = announcing_first(&mut c, &upload.encrypted_cid, replicas).await;
    let bytes = download(&replicas, Some(signed), &upload, &key.dek, out, progress).await?;
    Ok(Fetched {
        path: out.to_path_buf(),
        bytes,
        holder: hex::encode(key.holder),
    })
}

/// The uploader's recovery (`territory`: where the uploader declares it
/// is): the DEK from `deks/{cid}` on chain, unwrapped
/// with the recovery key derived from `uploader`, checked against
/// `dek_commitment`; then the blob from any replica (the uploader may
/// always download its own content), decrypted and checked.
///
/// # Errors
/// No recovery copy, a key that does not unwrap it, or a failed download.
pub async fn recover(
    node: &str,
    uploader: &SigningKey,
    cid: &[u8],
    territory: &str,
    out: &Path,
    progress: &mut (dyn FnMut(u64, u64) + Send),
) -> anyhow::Result<Fetched> {
    let mut c = StaveClient::connect(node).await?;
    let upload = upload_of(&mut c, cid).await?;
    let rec = c
        .rights
        .get_dek(crate::proto::rights::CidRequest {
            cid: cid.to_vec(),
            ..Default::default()
        })
        .await?
        .into_inner()
        .dek
        .ok_or_else(|| anyhow!("no recovery DEK on chain for {}", hex::encode(cid)))?;
    let eph = <[u8; 32]>::try_from(rec.ephemeral_pubkey.as_slice())
        .map_err(|_| anyhow!("the recovery DEK's ephemeral key is not 32 bytes"))?;
    let w = WrappedDek {
        ephemeral_pubkey: eph,
        ciphertext: rec.wrapped_dek,
    };
    let secret = crate::content::client::recovery_secret(uploader);
    let dek = unwrap_dek(&secret, &w, cid)
        .context("unwrapping the recovery DEK (is this the uploader's key?)")?;
    if dek_commitment(&dek, &upload.encrypted_cid).as_slice() != upload.dek_commitment {
        bail!("the recovery DEK does not match dek_commitment");
    }
    let chain_id = chain_id(&mut c).await?;
    let me = Consumer {
        key: uploader.clone(),
        x25519: secret,
        use_type: 0,
    };
    let signed = me.request(&chain_id, cid, None, territory, &[]);
    let replicas = peers(&mut c, &upload.replication_set).await?;
    let replicas = announcing_first(&mut c, &upload.encrypted_cid, replicas).await;
    let bytes = download(&replicas, Some(signed), &upload, &dek, out, progress).await?;
    Ok(Fetched {
        path: out.to_path_buf(),
        bytes,
        holder: "recovery".into(),
    })
}

#[cfg(test)]
mod order {
    use super::*;

    #[test]
    fn announcing_holders_come_first_least_loaded_first() {
        let peer = |b: u8| Peer::unrotated([b; 32], String::new());
        let mut peers: Vec<_> = [1, 2, 3, 4].into_iter().map(peer).collect();
        // holders as the node ranks them: 3 (least loaded), then 1
        rank_by(&mut peers, &[[3; 32], [1; 32], [9; 32]]);
        let got: Vec<u8> = peers.iter().map(|p| p.key[0]).collect();
        assert_eq!(got, vec![3, 1, 2, 4]);
    }
}

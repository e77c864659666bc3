//! The DEK holder's answer to `RequestAccess`:
//! 1. the node has committed a block since it started (else
//!    `ACCESS_UNAVAILABLE`: block time would be unknown);
//! 2. the request verifies ([`Request::verify`]) and names this validator;
//!    its cid names an upload (`UNKNOWN_CID`);
//! 3. this validator is ACTIVE and in the cid's DEK holder set (else
//!    `NOT_A_HOLDER`, listing the holders);
//! 4. the nonce was not answered before (`ACCESS_REPLAYED`);
//! 5. the access decision allows it on the latest committed state, at its
//!    block time (the same function `RecordGrant` runs in FinalizeBlock;
//!    no exception for the uploader: every delivery must be recordable);
//! 6. this validator's wrapped DEK unwraps and matches `dek_commitment`;
//! 7. the DEK is wrapped to the consumer's X25519 key, the receipt signed;
//! 8. under one lock, the nonce is checked again and the pending
//!    deliveries against the cap (`ACCESS_BUSY`), then the nonce and the
//!    pending grant are written in one synced batch; only then does the
//!    answer leave.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::watch;

use super::download::Downloads;
use super::request::Check;
use super::{receipt, AccessConfig, AccessError, Request};
use crate::crypto::wrap::wrap_dek;
use crate::crypto::{dek_commitment, Dek};
use crate::keyspaces::casbin::CacheUse;
use crate::keyspaces::params::{Params, ParamsRead};
use crate::keyspaces::rights::{access, block_secs, RightsError};
use crate::keyspaces::uploads::UploadsRead;
use crate::keyspaces::validators::ValidatorsRead;
use crate::local::deks::{wrapped_of, DeksExt};
use crate::local::grants::GrantsExt;
use crate::local::node::LocalNode;
use crate::proto::content as pb;
use crate::proto::local::PendingGrant;
use crate::proto::rights::Upload;
use crate::store::View;

/// The access service's state, shared by its handlers and the recorder.
pub struct Access {
    pub node: Arc<LocalNode>,
    pub cfg: AccessConfig,
    /// Committed heights since this process started: 0 until the first.
    heights: watch::Receiver<u64>,
    /// The next pending grant's sequence number and how many are pending;
    /// held across the nonce check and the synced write.
    ledger: Mutex<Ledger>,
    pub downloads: Downloads,
}

#[derive(Debug, Default)]
struct Ledger {
    next_seq: u64,
    pending: u64,
}

/// What the decision read: the request, the upload, the committed height
/// and block time, and why it allows.
pub(crate) struct Allowed {
    pub req: Request,
    pub upload: Upload,
    pub height: u64,
    pub block_time: u64,
    pub policy_type: String,
    pub reason: String,
}

/// The committed state's commit info and params, read once per request.
pub(crate) struct At {
    pub info: crate::store::CommitInfo,
    pub params: Params,
}

impl At {
    pub(crate) fn read(view: &View<'_>) -> Result<Self, AccessError> {
        Ok(At {
            info: view.commit_info()?,
            params: view.params()?.unwrap_or_default(),
        })
    }
}

fn hexes(keys: &[Vec<u8>]) -> Vec<String> {
    keys.iter().map(hex::encode).collect()
}

impl Access {
    /// The service over `node`, its pending grants counted from the local
    /// store.
    ///
    /// # Errors
    /// A local store failure.
    pub fn new(
        node: Arc<LocalNode>,
        cfg: AccessConfig,
        heights: watch::Receiver<u64>,
    ) -> Result<Self, AccessError> {
        use crate::keyspaces::grants::GrantsRead;
        let rows = node.local.pending_grants()?;
        // never below what the chain recorded (a local store rebuilt empty)
        let recorded = node.chain.view().grant_seq(&node.me())?;
        let ledger = Ledger {
            next_seq: rows
                .last()
                .map_or(0, |(s, _)| s.saturating_add(1))
                .max(recorded),
            pending: rows.len() as u64,
        };
        Ok(Access {
            downloads: Downloads::new(&cfg),
            node,
            cfg,
            heights,
            ledger: Mutex::new(ledger),
        })
    }

    /// Deliveries not yet recorded on chain.
    pub fn pending(&self) -> u64 {
        self.ledger.lock().pending
    }

    /// `recorded` pending grants left the queue (recorded or refused).
    pub(crate) fn settled(&self, recorded: u64) {
        let mut l = self.ledger.lock();
        l.pending = l.pending.saturating_sub(recorded);
        publish_pending(l.pending);
    }

    /// `ACCESS_UNAVAILABLE` until a block was committed since start.
    pub(crate) fn ready(&self) -> Result<(), AccessError> {
        if *self.heights.borrow() == 0 {
            return Err(AccessError::Unavailable(
                "no block committed since this node started; block time is unknown".into(),
            ));
        }
        Ok(())
    }

    /// Answers `RequestAccess`.
    ///
    /// # Errors
    /// Every refusal of the module doc, each with its code.
    pub fn request_access(
        &self,
        signed: &pb::SignedAccessRequest,
    ) -> Result<pb::AccessGranted, AccessError> {
        self.ready()?;
        let view = self.node.chain.view();
        let at = At::read(&view)?;
        let (req, upload) = self.verified(&view, &at, signed, true)?;
        let me = self.node.me();
        let holder = upload.dek_holder_set.iter().any(|k| k.as_slice() == me);
        if !holder || !view.is_active_validator(&me)? {
            return Err(AccessError::NotAHolder {
                me: hex::encode(me),
                cid: hex::encode(&req.cid),
                holders: hexes(&upload.dek_holder_set),
            });
        }
        if self.node.local.nonce_seen(&req.replay_key())? {
            return Err(replayed(&req));
        }
        let ok = self.decide(&view, &at, req, upload, false)?;
        let cap = self.cap(&at.params);
        let dek = self.own_dek(&ok.upload, &ok.req.cid)?;
        let granted = self.wrap(&ok, &dek, &at.info.chain_id)?;
        let recorded = {
            use crate::keyspaces::grants::GrantsRead;
            view.grant_seq(&me)?
        };
        self.record(&ok, cap, recorded)?;
        Ok(granted)
    }

    /// Verifies `signed` against the latest committed state and finds its
    /// upload (by flac or encrypted cid). `must_name_me`: the request
    /// names this validator (RequestAccess) or may name none (Download).
    pub(crate) fn verified(
        &self,
        view: &View<'_>,
        at: &At,
        signed: &pb::SignedAccessRequest,
        must_name_me: bool,
    ) -> Result<(Request, Upload), AccessError> {
        let check = Check {
            chain_id: &at.info.chain_id,
            me: self.node.me(),
            now_ms: crate::content::now_ms(),
            window_ms: self.cfg.window_secs.saturating_mul(1000),
            rights: &at.params.rights,
            must_name_me,
        };
        let req = Request::verify(signed, &check)?;
        // a key a rotation retired signs for no one any more
        if crate::keyspaces::validators::signing::refuse_retired(view, &req.consumer).is_err() {
            return Err(AccessError::Signature {
                consumer: format!("{} (a retired operator key)", hex::encode(req.consumer)),
            });
        }
        let upload = match view.upload(&req.cid)? {
            Some(u) => u,
            None => view.upload_by_content(&req.cid)?.ok_or_else(|| {
                AccessError::Denied(RightsError::UnknownCid(hex::encode(&req.cid)))
            })?,
        };
        Ok((req, upload))
    }

    /// Runs the access decision for `req` on `upload` at the committed
    /// block time. `uploader_ok`: the uploader is allowed whatever the
    /// decision (Download: recovery must not depend on the rights it
    /// governs; never a key delivery, which must be recordable).
    pub(crate) fn decide(
        &self,
        view: &View<'_>,
        at: &At,
        req: Request,
        upload: Upload,
        uploader_ok: bool,
    ) -> Result<Allowed, AccessError> {
        let block_time = block_secs(at.info.block_time_ns()?);
        let d = access::decide_with(
            view,
            &access::AccessRequest {
                cid: &upload.flac_cid,
                consumer: &req.consumer,
                territory: &req.territory,
                use_type: req.use_type,
                now: block_time,
                context: &req.context,
            },
            CacheUse::Query,
        )?;
        let reason = match d.outcome {
            Ok(r) => r,
            Err(_) if uploader_ok && upload.uploader_pubkey == req.consumer => {
                "the uploader".to_string()
            }
            Err(e) => return Err(AccessError::Denied(e)),
        };
        Ok(Allowed {
            req,
            upload,
            height: at.info.height.unwrap_or(0),
            block_time,
            policy_type: d.policy_type.as_str_name().to_string(),
            reason,
        })
    }

    /// How many deliveries may await recording: `pending_blocks` blocks of
    /// `max_grants_per_validator_per_block`.
    fn cap(&self, params: &Params) -> u64 {
        let per_block = params.rights.max_grants_per_validator_per_block;
        self.cfg.pending_blocks.saturating_mul(u64::from(per_block))
    }

    /// This validator's DEK of the upload, checked against its
    /// `dek_commitment`.
    fn own_dek(&self, upload: &Upload, cid: &[u8]) -> Result<Dek, AccessError> {
        let dek_err = |reason: String| AccessError::Dek {
            cid: hex::encode(cid),
            reason,
        };
        let held = self
            .node
            .local
            .dek(&upload.flac_cid)?
            .ok_or_else(|| dek_err("not held yet (the reconciler fetches it)".into()))?;
        let w = wrapped_of(&held).map_err(|e| dek_err(e.to_string()))?;
        let dek = (self.node.x25519)
            .unwrap(&w, &upload.flac_cid)
            .map_err(|e| dek_err(e.to_string()))?;
        if dek_commitment(&dek, &upload.encrypted_cid).as_slice() != upload.dek_commitment {
            return Err(AccessError::DekMismatch {
                cid: hex::encode(cid),
            });
        }
        Ok(dek)
    }

    /// The DEK wrapped to the consumer, with the signed receipt.
    fn wrap(
        &self,
        ok: &Allowed,
        dek: &Dek,
        chain_id: &str,
    ) -> Result<pb::AccessGranted, AccessError> {
        let cid = &ok.upload.flac_cid;
        let w = wrap_dek(dek, &ok.req.consumer_x25519, cid)
            .map_err(|e| AccessError::BadX25519(e.to_string()))?;
        let r = pb::AccessReceipt {
            chain_id: chain_id.to_string(),
            validator: self.node.me().to_vec(),
            request_hash: ok.req.hash.to_vec(),
            cid: cid.clone(),
            consumer_pubkey: ok.req.consumer.to_vec(),
            consumer_x25519: ok.req.consumer_x25519.to_vec(),
            territory: ok.req.territory.clone(),
            height: ok.height,
            block_time: ok.block_time,
            policy_type: ok.policy_type.clone(),
            reason: ok.reason.clone(),
            wrapped_dek_hash: receipt::wrapped_hash(&w.ephemeral_pubkey, &w.ciphertext),
            use_type: ok.req.use_type,
        };
        Ok(pb::AccessGranted {
            cid: cid.clone(),
            receipt_signature: receipt::sign(&self.node.operator, &r),
            receipt: Some(r),
            ephemeral_pubkey: w.ephemeral_pubkey.to_vec(),
            wrapped_dek: w.ciphertext,
            encrypted_cid: ok.upload.encrypted_cid.clone(),
            encrypted_size: ok.upload.encrypted_size,
        })
    }

    /// The nonce and the pending grant, in one synced batch, under the
    /// ledger's lock: the nonce is checked once more there (two copies of
    /// one request race here), and so is the cap (`ACCESS_BUSY`), so
    /// concurrent requests cannot overshoot it.
    fn record(&self, ok: &Allowed, cap: u64, recorded: u64) -> Result<(), AccessError> {
        let key = ok.req.replay_key();
        let window_ms = self.cfg.window_secs.saturating_mul(1000);
        let until = ok.req.timestamp_ms.saturating_add(window_ms);
        let g = PendingGrant {
            cid: ok.upload.flac_cid.clone(),
            consumer_pubkey: ok.req.consumer.to_vec(),
            territory: ok.req.territory.clone(),
            context: ok.req.context.clone(),
            delivered_ms: crate::content::now_ms(),
            request_hash: ok.req.hash.to_vec(),
            use_type: ok.req.use_type,
        };
        let mut l = self.ledger.lock();
        // never a number the chain counts as recorded (a store rebuilt
        // while the chain view lagged at start-up)
        l.next_seq = l.next_seq.max(recorded);
        if self.node.local.nonce_seen(&key)? {
            return Err(replayed(&ok.req));
        }
        if l.pending >= cap {
            return Err(AccessError::Busy(format!(
                "{} deliveries await recording on chain (cap {cap}); retry in a few blocks",
                l.pending
            )));
        }
        self.node.local.put_delivery(&key, until, l.next_seq, &g)?;
        l.next_seq += 1;
        l.pending += 1;
        let m = &crate::metrics::metrics().access;
        m.delivered.inc();
        publish_pending(l.pending);
        Ok(())
    }
}

/// `stave_access_pending_grants`.
fn publish_pending(n: u64) {
    let gauge = &crate::metrics::metrics().access.pending;
    gauge.set(i64::try_from(n).unwrap_or(i64::MAX));
}

fn replayed(req: &Request) -> AccessError {
    AccessError::Replayed {
        consumer: hex::encode(req.consumer),
        nonce: hex::encode(req.nonce),
    }
}

//! `KvTokenCreate`, `KvTokenUpdate`, `KvTokenDelete`: the tuple lifecycle.
//!
//! Checks, in order: formats (stateless), the controller's signature
//! (stateless, with the tx's chain id), then against state: the generation
//! (a used generation is a replay), the live token, caps and quota.

use super::state::{postings, Posting, StoredToken, Tuple, POSTING_BYTES};
use super::{
    check_key, check_protocol_id, check_tags, controller_key, token_id, tuple_hash, verify,
    KvToken, Op, SignFields, TokenRead, TokenWrite,
};
use crate::keyspaces::kv::quota::charge;
use crate::keyspaces::kv::{KvError, KvTokenParams};
use crate::keyspaces::params::Params;
use crate::keyspaces::{Event, TxContext};
use crate::proto::kv as pb;
use crate::store::StateWrite;
use crate::tx::TxError;
use prost::Message;

/// Mints the tuple's live token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvTokenCreate {
    pub token: KvToken,
    pub generation: u64,
}

/// Replaces the live token `replaces` with `token`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvTokenUpdate {
    pub token: KvToken,
    pub generation: u64,
    pub replaces: [u8; 32],
}

/// Spends the live token `token_id` without replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvTokenDelete {
    pub protocol_id: String,
    pub key: String,
    pub controller: String,
    pub generation: u64,
    pub token_id: [u8; 32],
    pub signature: [u8; 64],
}

fn id32(field: &str, b: &[u8]) -> Result<[u8; 32], KvError> {
    b.try_into()
        .map_err(|_| KvError::BadField(format!("{field} is {} bytes, not 32", b.len())))
}

fn token_of(t: Option<pb::KvToken>) -> Result<KvToken, KvError> {
    t.ok_or_else(|| KvError::BadField("token is missing".into()))?
        .try_into()
}

impl TryFrom<pb::KvTokenCreate> for KvTokenCreate {
    type Error = KvError;
    fn try_from(p: pb::KvTokenCreate) -> Result<Self, KvError> {
        Ok(KvTokenCreate {
            token: token_of(p.token)?,
            generation: p.generation,
        })
    }
}
impl From<KvTokenCreate> for pb::KvTokenCreate {
    fn from(d: KvTokenCreate) -> Self {
        pb::KvTokenCreate {
            token: Some(d.token.into()),
            generation: d.generation,
        }
    }
}
impl TryFrom<pb::KvTokenUpdate> for KvTokenUpdate {
    type Error = KvError;
    fn try_from(p: pb::KvTokenUpdate) -> Result<Self, KvError> {
        Ok(KvTokenUpdate {
            token: token_of(p.token)?,
            generation: p.generation,
            replaces: id32("replaces", &p.replaces)?,
        })
    }
}
impl From<KvTokenUpdate> for pb::KvTokenUpdate {
    fn from(d: KvTokenUpdate) -> Self {
        pb::KvTokenUpdate {
            token: Some(d.token.into()),
            generation: d.generation,
            replaces: d.replaces.to_vec(),
        }
    }
}
impl TryFrom<pb::KvTokenDelete> for KvTokenDelete {
    type Error = KvError;
    fn try_from(p: pb::KvTokenDelete) -> Result<Self, KvError> {
        Ok(KvTokenDelete {
            protocol_id: p.protocol_id,
            key: p.key,
            controller: p.controller,
            generation: p.generation,
            token_id: id32("token_id", &p.token_id)?,
            signature: p.signature.as_slice().try_into().map_err(|_| {
                KvError::BadField(format!("signature is {} bytes, not 64", p.signature.len()))
            })?,
        })
    }
}
impl From<KvTokenDelete> for pb::KvTokenDelete {
    fn from(d: KvTokenDelete) -> Self {
        pb::KvTokenDelete {
            protocol_id: d.protocol_id,
            key: d.key,
            controller: d.controller,
            generation: d.generation,
            token_id: d.token_id.to_vec(),
            signature: d.signature.to_vec(),
        }
    }
}

fn check_tuple(
    pid: &str,
    key: &str,
    ctl: &str,
    generation: u64,
    p: &KvTokenParams,
) -> Result<(), KvError> {
    check_protocol_id(pid, p)?;
    check_key(key, p)?;
    controller_key(ctl)?;
    if generation == 0 {
        return Err(KvError::BadField("generation starts at 1".into()));
    }
    Ok(())
}

fn check_token(t: &KvToken, generation: u64, p: &KvTokenParams) -> Result<(), KvError> {
    check_tuple(&t.protocol_id, &t.key, &t.controller, generation, p)?;
    if t.value.is_empty() {
        // BRC-35 readers treat an empty value as absent: a token that says
        // nothing is a delete, which has its own action.
        return Err(KvError::BadField(
            "value is empty; an empty value reads as absent, so send KvTokenDelete instead".into(),
        ));
    }
    if t.value.len() > p.max_value_bytes as usize {
        return Err(KvError::ValueTooLarge {
            len: t.value.len(),
            max: p.max_value_bytes,
        });
    }
    check_tags(&t.tags, p)
}

fn fields<'a>(
    chain_id: &'a str,
    op: Op,
    t: &'a KvToken,
    generation: u64,
    replaces: &'a [u8],
) -> SignFields<'a> {
    SignFields {
        chain_id,
        op,
        protocol_id: &t.protocol_id,
        key: &t.key,
        value: &t.value,
        controller: &t.controller,
        tags: &t.tags,
        generation,
        replaces,
    }
}

impl KvTokenCreate {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        Ok(check_token(
            &self.token,
            self.generation,
            &params.kv_tokens,
        )?)
    }
    /// The controller's signature, over the tx's chain id.
    pub fn verify(&self, chain_id: &str) -> Result<(), TxError> {
        Ok(verify(&self.sign_fields(chain_id), &self.token.signature)?)
    }
    pub fn sign_fields<'a>(&'a self, chain_id: &'a str) -> SignFields<'a> {
        fields(chain_id, Op::Create, &self.token, self.generation, &[])
    }
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let t = &self.token;
        let tuple = tuple_hash(&t.protocol_id, &t.key, &t.controller);
        let mut rec = state.tuple(&tuple)?;
        check_generation(&rec, self.generation)?;
        if let Some(live) = rec.live {
            return Err(KvError::TokenLiveExists {
                live: hex::encode(live),
            }
            .into());
        }
        let (new, after) = mint(state, ctx, &mut rec, tuple, t, self.generation, None)?;
        state.reindex(None, Some((&new, &after)));
        Ok(())
    }
}

impl KvTokenUpdate {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        Ok(check_token(
            &self.token,
            self.generation,
            &params.kv_tokens,
        )?)
    }
    pub fn verify(&self, chain_id: &str) -> Result<(), TxError> {
        Ok(verify(&self.sign_fields(chain_id), &self.token.signature)?)
    }
    pub fn sign_fields<'a>(&'a self, chain_id: &'a str) -> SignFields<'a> {
        fields(
            chain_id,
            Op::Update,
            &self.token,
            self.generation,
            &self.replaces,
        )
    }
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let t = &self.token;
        let tuple = tuple_hash(&t.protocol_id, &t.key, &t.controller);
        let mut rec = state.tuple(&tuple)?;
        check_generation(&rec, self.generation)?;
        check_live(&rec, &self.replaces)?;
        let old = named_token(state, &self.replaces)?;
        let before = postings(&old.token, &ctx.params.kv_tokens);
        let (new, after) = mint(
            state,
            ctx,
            &mut rec,
            tuple,
            t,
            self.generation,
            Some(self.replaces),
        )?;
        state.reindex(Some((&old, &before)), Some((&new, &after)));
        // The replaced token is not rewritten: the tuple record no longer
        // names it, and its history entry's successor marks it spent.
        release_postings(state, ctx, &old)?;
        Ok(())
    }
}

impl KvTokenDelete {
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        let p = &params.kv_tokens;
        Ok(check_tuple(
            &self.protocol_id,
            &self.key,
            &self.controller,
            self.generation,
            p,
        )?)
    }
    pub fn sign_fields<'a>(&'a self, chain_id: &'a str) -> SignFields<'a> {
        SignFields {
            chain_id,
            op: Op::Delete,
            protocol_id: &self.protocol_id,
            key: &self.key,
            value: &[],
            controller: &self.controller,
            tags: "",
            generation: self.generation,
            replaces: &self.token_id,
        }
    }
    pub fn verify(&self, chain_id: &str) -> Result<(), TxError> {
        Ok(verify(&self.sign_fields(chain_id), &self.signature)?)
    }
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let tuple = tuple_hash(&self.protocol_id, &self.key, &self.controller);
        let mut rec = state.tuple(&tuple)?;
        check_generation(&rec, self.generation)?;
        check_live(&rec, &self.token_id)?;
        rec.generation = self.generation;
        rec.live = None;
        state.put_tuple(&tuple, &rec);
        let mut old = named_token(state, &self.token_id)?;
        let before = postings(&old.token, &ctx.params.kv_tokens);
        state.reindex(Some((&old, &before)), None);
        let ctl = release_postings(state, ctx, &old)?;
        old.spent_height = ctx.height;
        old.spent_by = None;
        state.put_stored_token(&old);
        let live = state.live_tokens_of(&ctl)?;
        state.put_live_tokens_of(&ctl, live.saturating_sub(1));
        ctx.emit(
            Event::new("kv.token.delete")
                .indexed("token_id", hex::encode(self.token_id))
                .indexed("controller", self.controller.clone())
                .plain("generation", self.generation.to_string()),
        );
        Ok(())
    }
}

/// A used generation is a replay; a skipped one is refused too.
fn check_generation(rec: &Tuple, got: u64) -> Result<(), KvError> {
    let expected = rec.generation.saturating_add(1);
    if got != expected {
        return Err(KvError::TokenReplayed { expected, got });
    }
    Ok(())
}

fn check_live(rec: &Tuple, named: &[u8; 32]) -> Result<(), KvError> {
    match rec.live {
        None => Err(KvError::TokenNoLive {
            named: hex::encode(named),
        }),
        Some(live) if live != *named => Err(KvError::TokenStale {
            named: hex::encode(named),
            live: hex::encode(live),
        }),
        Some(_) => Ok(()),
    }
}

/// Stores a new live token of the tuple and its history entry (an update
/// when it `replaces` one). Returns it with its postings, which the caller
/// moves to it.
fn mint<S: StateWrite>(
    state: &mut S,
    ctx: &mut TxContext,
    rec: &mut Tuple,
    tuple: [u8; 32],
    t: &KvToken,
    generation: u64,
    replaces: Option<[u8; 32]>,
) -> Result<(StoredToken, Vec<Posting>), TxError> {
    let p = &ctx.params.kv_tokens;
    let ctl = controller_key(&t.controller)?;
    let op = if replaces.is_some() {
        Op::Update
    } else {
        Op::Create
    };
    if op == Op::Create {
        let live = state.live_tokens_of(&ctl)?;
        if live >= p.max_live_tokens_per_controller {
            return Err(KvError::TooManyTokens {
                controller: t.controller.clone(),
                live,
                max: p.max_live_tokens_per_controller,
            }
            .into());
        }
        state.put_live_tokens_of(&ctl, live + 1);
    }
    let id = token_id(&ctx.tx_id, ctx.action_index);
    let after = postings(t, p);
    let posting_bytes = after.len() as u64 * POSTING_BYTES;
    let stored = StoredToken {
        token: t.clone(),
        id,
        generation,
        created_height: ctx.height,
        seq: state.next_token_seq()?,
        spent_height: 0,
        spent_by: None,
        op: op as u32,
        index_bytes: posting_bytes,
        replaces,
    };
    // Record (plus room for the spend marks a delete stamps) and history
    // entry stay for good.
    let record = pb::StoredToken::from(&stored).encode_to_vec();
    charge(
        state,
        ctx,
        &ctl,
        record.len() as u64 + 48 + 56 + posting_bytes,
        0,
    )?;
    state.put_encoded_token(&id, record);
    state.put_history_entry(&tuple, rec.history_len, &id);
    rec.history_len += 1;
    rec.generation = generation;
    rec.live = Some(id);
    state.put_tuple(&tuple, rec);
    ctx.emit(
        Event::new(if op == Op::Create {
            "kv.token.create"
        } else {
            "kv.token.update"
        })
        .indexed("token_id", hex::encode(id))
        .indexed("controller", t.controller.clone())
        .indexed("tuple", hex::encode(tuple))
        .plain("generation", generation.to_string()),
    );
    Ok((stored, after))
}

/// The token a tuple record names as live (it must exist).
fn named_token<S: StateWrite>(state: &S, id: &[u8; 32]) -> Result<StoredToken, TxError> {
    Ok(state
        .stored_token(id)?
        .ok_or_else(|| KvError::TokenNoLive {
            named: hex::encode(id),
        })?)
}

/// Releases the quota a spent token's postings held; returns its controller.
fn release_postings<S: StateWrite>(
    state: &mut S,
    ctx: &TxContext,
    s: &StoredToken,
) -> Result<[u8; 32], TxError> {
    let ctl = controller_key(&s.token.controller)?;
    charge(state, ctx, &ctl, 0, s.index_bytes)?;
    Ok(ctl)
}

//! `ApplyValidator`: the signer (its operator key) becomes a CANDIDATE and
//! an admission election opens.

use super::key32;
use crate::keyspaces::params::Params;
use crate::keyspaces::validators::endpoint::check_endpoints;
use crate::keyspaces::validators::lifecycle::known_to_comet;
use crate::keyspaces::validators::{
    election, expiry, is_jurisdiction, transition, x25519_contributory, GovError, ValidatorEvent,
    ValidatorStatus, ValidatorsRead, ValidatorsWrite,
};
use crate::keyspaces::{Event, TxContext};
use crate::proto::genesis as gen;
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// Domain tag of the consensus key's proof of possession.
pub const POP_TAG: &[u8] = b"stave/validator-pop/v1";

/// The bytes the consensus key signs: tag, chain id (length-prefixed) and
/// the applicant's operator key.
pub fn pop_message(chain_id: &str, operator: &[u8; 32]) -> Vec<u8> {
    let mut m = Vec::with_capacity(POP_TAG.len() + 4 + chain_id.len() + 32);
    m.extend_from_slice(POP_TAG);
    m.extend_from_slice(&(chain_id.len() as u32).to_be_bytes());
    m.extend_from_slice(chain_id.as_bytes());
    m.extend_from_slice(operator);
    m
}

/// An application to become a validator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyValidator {
    pub consensus_key: [u8; 32],
    pub consensus_key_signature: [u8; 64],
    /// Kept as sent: its length is a governance check of its own.
    pub x25519_key: Vec<u8>,
    pub address: String,
    pub jurisdictions: Vec<String>,
    pub identity: String,
    /// host:port of the public client API; empty publishes none.
    pub client_endpoint: String,
}

impl TryFrom<pb::ApplyValidator> for ApplyValidator {
    type Error = String;
    fn try_from(p: pb::ApplyValidator) -> Result<Self, String> {
        let consensus_key = <[u8; 32]>::try_from(p.consensus_key.as_slice()).map_err(|_| {
            format!(
                "consensus_key is {} bytes, expected 32",
                p.consensus_key.len()
            )
        })?;
        let consensus_key_signature = <[u8; 64]>::try_from(p.consensus_key_signature.as_slice())
            .map_err(|_| {
                format!(
                    "consensus_key_signature is {} bytes, expected 64",
                    p.consensus_key_signature.len()
                )
            })?;
        Ok(ApplyValidator {
            consensus_key,
            consensus_key_signature,
            x25519_key: p.x25519_key,
            address: p.address,
            jurisdictions: p.jurisdictions,
            identity: p.identity,
            client_endpoint: p.client_endpoint,
        })
    }
}

impl From<ApplyValidator> for pb::ApplyValidator {
    fn from(a: ApplyValidator) -> Self {
        pb::ApplyValidator {
            consensus_key: a.consensus_key.to_vec(),
            consensus_key_signature: a.consensus_key_signature.to_vec(),
            x25519_key: a.x25519_key,
            address: a.address,
            jurisdictions: a.jurisdictions,
            identity: a.identity,
            client_endpoint: a.client_endpoint,
        }
    }
}

/// ISO 3166-1 codes, at least one, no repeats, within the cap.
pub(crate) fn check_jurisdictions(codes: &[String], max: u32) -> Result<(), TxError> {
    if codes.is_empty() || codes.len() > max as usize {
        return Err(TxError::InvalidArgument(format!(
            "{} jurisdictions; allowed 1..={max}",
            codes.len()
        )));
    }
    for (i, c) in codes.iter().enumerate() {
        if !is_jurisdiction(c) {
            return Err(GovError::UnknownJurisdiction(c.clone()).into());
        }
        if codes[..i].contains(c) {
            return Err(TxError::InvalidArgument(format!("jurisdiction {c} twice")));
        }
    }
    Ok(())
}

/// An X25519 public key of exactly 32 bytes that is not of low order.
pub(crate) fn check_x25519(key: &[u8]) -> Result<[u8; 32], GovError> {
    let bad = |reason| GovError::BadX25519Key {
        key: hex::encode(key),
        reason,
    };
    let k = <[u8; 32]>::try_from(key).map_err(|_| bad("not 32 bytes"))?;
    if !x25519_contributory(&k) {
        return Err(bad("a low-order point"));
    }
    Ok(k)
}

/// `BadProofOfPossession` unless `signature` is the consensus key's
/// signature over [`pop_message`]`(chain_id, operator)`.
pub(crate) fn check_pop(
    consensus_key: &[u8; 32],
    signature: &[u8; 64],
    chain_id: &str,
    operator: &[u8; 32],
) -> Result<(), GovError> {
    let bad = |reason: String| GovError::BadProofOfPossession {
        consensus_key: hex::encode(consensus_key),
        reason,
    };
    let (_, vk) = crate::tx::identity_key(consensus_key).map_err(|e| bad(e.to_string()))?;
    let sig = ed25519_consensus::Signature::from(*signature);
    crate::gas::work::count(crate::gas::work::Kind::Signature);
    vk.verify(&sig, &pop_message(chain_id, operator))
        .map_err(|_| {
            bad(format!(
                "signature over chain {chain_id:?} and operator {} does not verify",
                hex::encode(operator)
            ))
        })
}

impl ApplyValidator {
    /// Keys, sizes and codes against the params.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        let g = &params.governance;
        crate::tx::identity_key(&self.consensus_key).map_err(|e| {
            TxError::InvalidArgument(format!(
                "consensus key {}: {e}",
                hex::encode(self.consensus_key)
            ))
        })?;
        check_x25519(&self.x25519_key)?;
        check_endpoints(&self.address, &self.client_endpoint, g.max_address_bytes)?;
        if self.identity.len() > g.max_identity_bytes as usize {
            return Err(TxError::InvalidArgument(format!(
                "identity is {} bytes, over {}",
                self.identity.len(),
                g.max_identity_bytes
            )));
        }
        check_jurisdictions(&self.jurisdictions, g.max_jurisdictions)
    }

    fn check_pop(&self, chain_id: &str, operator: &[u8; 32]) -> Result<(), GovError> {
        check_pop(
            &self.consensus_key,
            &self.consensus_key_signature,
            chain_id,
            operator,
        )
    }

    /// # Errors
    /// `BadProofOfPossession`, `ConsensusKeyInUse`, `InvalidTransition`
    /// (a record that is not REMOVED), `GovernanceCap` (records), `Conflict`
    /// (a REMOVED record's old or retiring consensus key that CometBFT still
    /// knows).
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let op = ctx.signer;
        self.check_pop(&ctx.chain_id, &op)?;
        let old = state.validator(&op)?;
        let status = transition(&op, state.validator_status(&op)?, ValidatorEvent::Apply)?;
        if let Some(holder) = state.validator_by_consensus(&self.consensus_key)? {
            if holder != op {
                return Err(GovError::ConsensusKeyInUse {
                    consensus_key: hex::encode(self.consensus_key),
                    holder: hex::encode(holder),
                }
                .into());
            }
        }
        let mut totals = state.validator_totals()?;
        let g = &ctx.params.governance;
        // open applications have a cap of their own, so that applications
        // (which cost nothing) can never hold the places of admitted ones
        GovError::room(
            "open validator applications",
            u64::from(totals.candidates),
            u64::from(g.max_candidates),
        )?;
        // the transition above allows only a new record or one back from REMOVED
        GovError::room(
            "validator records",
            u64::from(totals.records),
            u64::from(g.max_validator_records),
        )?;
        totals.records += 1;
        totals.candidates += 1;
        state.put_validator_totals(&totals);
        if let Some(prev) = old.as_ref().and_then(|r| r.validator.as_ref()) {
            if prev.consensus_key.as_slice() != self.consensus_key {
                let prev_key = key32("consensus key", &prev.consensus_key)?;
                // while CometBFT still knows the old key, the record that
                // names it must stay: apply with that key, or after it left
                if known_to_comet(state, &prev_key)? {
                    return Err(TxError::Conflict(format!(
                        "consensus key {} of this operator is still in CometBFT's set or queued; apply with it, or after it left",
                        hex::encode(prev_key)
                    )));
                }
                state.delete_validator_by_consensus(&prev_key);
            }
        }
        if let Some(g) = old.as_ref().and_then(|r| r.governance.as_ref()) {
            super::rotate::release_retired(state, &op, &g.retiring_consensus_key)?;
        }
        let previous = old
            .as_ref()
            .and_then(|r| r.governance.as_ref())
            .and_then(|g| g.election.as_ref());
        let record = gen::ValidatorRecord {
            validator: Some(gen::GenesisValidator {
                operator_key: op.to_vec(),
                consensus_key: self.consensus_key.to_vec(),
                x25519_key: self.x25519_key.clone(),
                address: self.address.clone(),
                power: ctx.params.governance.elected_validator_power,
                moniker: String::new(),
                client_endpoint: self.client_endpoint.clone(),
            }),
            status: status as u32,
            admitted_height: 0,
            // a re-application keeps the key a rotation handed signing to;
            // with no record left (a forgotten CANDIDATE's is deleted, its
            // `operator_keys/` rows are not) it names the key that signs
            operator_signing_key: match old.as_ref() {
                Some(r) if !r.operator_signing_key.is_empty() => r.operator_signing_key.clone(),
                _ if ctx.signing_key != op => ctx.signing_key.to_vec(),
                _ => Vec::new(),
            },
            governance: Some(pb::ValidatorGovernance {
                jurisdictions: self.jurisdictions.clone(),
                identity: self.identity.clone(),
                applied_at: ctx.height,
                unbonding_until: 0,
                removed_at: 0,
                election: Some(election::open(
                    pb::ElectionKind::Admit,
                    previous,
                    ctx.height,
                )),
                retiring_consensus_key: Vec::new(),
            }),
        };
        debug_assert_eq!(status, ValidatorStatus::Candidate);
        if let Some(e) = record.governance.as_ref().and_then(|g| g.election.as_ref()) {
            let subject = expiry::Subject::Validator(op);
            expiry::schedule(state, &subject, e, &ctx.params.governance);
        }
        state.put_validator(&op, &record);
        state.put_validator_by_consensus(&self.consensus_key, &op);
        ctx.emit(
            Event::new("validator.applied")
                .indexed("operator", hex::encode(op))
                .indexed("consensus_key", hex::encode(self.consensus_key))
                .plain("jurisdictions", self.jurisdictions.join(","))
                .plain("identity", self.identity.clone()),
        );
        Ok(())
    }
}

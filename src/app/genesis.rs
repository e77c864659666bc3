//! Genesis `app_state`: params, accounts and validators, written as JMT
//! version 0.

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::keyspaces::accounts::AccountsWrite;
use crate::keyspaces::params::{Params, ParamsWrite};
use crate::keyspaces::validators::{GenesisValidator, ValidatorsWrite};
use crate::store::{Changes, MemState, Overlay};

/// An account present at genesis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenesisAccount {
    /// ed25519 public key, hex.
    pub pubkey: String,
}

/// The `app_state` of CometBFT's genesis.json.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AppState {
    #[serde(default)]
    pub params: Params,
    #[serde(default)]
    pub accounts: Vec<GenesisAccount>,
    #[serde(default)]
    pub validators: Vec<GenesisValidator>,
}

#[derive(Debug, Error)]
pub enum GenesisError {
    #[error("app_state is not valid JSON for Stave: {0}")]
    Json(#[from] serde_json::Error),
    #[error("invalid params: {0}")]
    Params(String),
    #[error("genesis initial_height is {0}; Stave requires 1 (JMT version 0 is genesis)")]
    InitialHeight(u64),
    #[error("invalid genesis account {pubkey}: {reason}")]
    Account { pubkey: String, reason: String },
    #[error("invalid genesis validator: {0}")]
    Validator(String),
    #[error("duplicate {what} {key} in genesis")]
    Duplicate { what: &'static str, key: String },
    #[error(
        "CometBFT's genesis sets consensus_params.block.max_gas = {comet}, but \
         app_state.params.gas.max_block_gas is {app}: set max_gas to {app} or to -1"
    )]
    MaxGas { comet: i64, app: u64 },
}

/// The `consensus_params.block.max_gas` InitChain returns: the app's
/// `max_block_gas`. CometBFT's genesis may leave `max_gas` at -1 (no limit),
/// in which case InitChain sets it; any other value must agree.
///
/// # Errors
/// [`GenesisError::MaxGas`] when CometBFT's genesis names another limit, and
/// the parse errors of [`AppState::parse`].
pub fn block_max_gas(app_state: &[u8], comet_max_gas: i64) -> Result<i64, GenesisError> {
    let app = AppState::parse(app_state)?.params.gas.max_block_gas;
    // `GasParams::validate` keeps it within i64.
    let as_i64 = i64::try_from(app).map_err(|_| GenesisError::MaxGas {
        comet: comet_max_gas,
        app,
    })?;
    if comet_max_gas != -1 && comet_max_gas != as_i64 {
        return Err(GenesisError::MaxGas {
            comet: comet_max_gas,
            app,
        });
    }
    Ok(as_i64)
}

impl AppState {
    /// Parses `app_state` bytes; empty bytes mean the defaults.
    pub fn parse(bytes: &[u8]) -> Result<Self, GenesisError> {
        let trimmed = std::str::from_utf8(bytes).map(str::trim).unwrap_or("x");
        if bytes.is_empty() || trimmed == "null" || trimmed.is_empty() {
            return Ok(AppState::default());
        }
        Ok(serde_json::from_slice(bytes)?)
    }

    /// Checks that `validators` names the same (consensus key, power) set as
    /// CometBFT's genesis. An empty `validators` section checks nothing.
    pub fn check_validator_set(&self, comet: &[(Vec<u8>, u64)]) -> Result<(), GenesisError> {
        if self.validators.is_empty() {
            return Ok(());
        }
        let mut ours = Vec::with_capacity(self.validators.len());
        for v in &self.validators {
            let key = hex::decode(&v.consensus_key).map_err(|e| {
                GenesisError::Validator(format!("consensus_key {:?}: {e}", v.consensus_key))
            })?;
            ours.push((key, v.power));
        }
        let mut theirs = comet.to_vec();
        ours.sort();
        theirs.sort();
        if ours != theirs {
            return Err(GenesisError::Validator(format!(
                "app_state.validators {:?} do not match CometBFT's genesis validators {:?}",
                ours.iter()
                    .map(|(k, p)| (hex::encode(k), p))
                    .collect::<Vec<_>>(),
                theirs
                    .iter()
                    .map(|(k, p)| (hex::encode(k), p))
                    .collect::<Vec<_>>()
            )));
        }
        Ok(())
    }

    /// The state changes genesis writes.
    pub fn changes(&self, genesis_time_ns: i64) -> Result<Changes, GenesisError> {
        self.params.validate().map_err(GenesisError::Params)?;
        let base = MemState::default();
        let mut state = Overlay::new(&base);
        state.put_params(&self.params);
        for a in &self.accounts {
            let bad = |reason: String| GenesisError::Account {
                pubkey: a.pubkey.clone(),
                reason,
            };
            let bytes = hex::decode(&a.pubkey).map_err(|e| bad(e.to_string()))?;
            let (pk, _) = crate::tx::identity_key(&bytes).map_err(|e| bad(e.to_string()))?;
            if state
                .changes()
                .state
                .contains_key(&crate::keyspaces::accounts::account_key(&pk))
            {
                return Err(GenesisError::Duplicate {
                    what: "account",
                    key: a.pubkey.clone(),
                });
            }
            state.put_account(
                &pk,
                &crate::keyspaces::accounts::storage::new_account(0, genesis_time_ns),
            );
        }
        let mut records = Vec::with_capacity(self.validators.len());
        for v in &self.validators {
            let (operator, record) = v
                .to_record(&self.params.governance)
                .map_err(GenesisError::Validator)?;
            let key = crate::keyspaces::validators::validator_key(&operator);
            if state.changes().state.contains_key(&key) {
                return Err(GenesisError::Duplicate {
                    what: "validator",
                    key: v.operator_key.clone(),
                });
            }
            state.put_validator(&operator, &record);
            records.push((operator, record));
        }
        crate::keyspaces::validators::genesis_bookkeeping(
            &mut state,
            &records,
            &self.params.governance,
        )
        .map_err(GenesisError::Validator)?;
        Ok(state.into_changes())
    }
}

//! What applying a tx or a block produced.

use crate::keyspaces::Event;
use crate::tx::{Code, TxError};

/// The two failure classes of BRIEF §4, plus success.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxClass {
    /// Authenticated and every action applied.
    Applied,
    /// Authenticated, an action failed: the nonce is consumed, nothing else.
    ActionFailed,
    /// Did not decode or authenticate: nothing changed at all.
    Rejected,
}

/// The result of one tx.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxOutcome {
    pub class: TxClass,
    pub code: Code,
    pub log: String,
    pub events: Vec<Event>,
    /// `sha256(body_bytes)`, when the tx decoded.
    pub tx_id: Option<[u8; 32]>,
    /// The declared gas limit (0 when the tx did not decode).
    pub gas_wanted: u64,
    /// Gas charged: intrinsic plus execution; the limit when it ran out;
    /// 0 for a tx that did not decode or authenticate.
    pub gas_used: u64,
}

impl TxOutcome {
    pub fn ok(tx_id: [u8; 32], events: Vec<Event>) -> Self {
        TxOutcome {
            class: TxClass::Applied,
            code: Code::Ok,
            log: String::new(),
            events,
            tx_id: Some(tx_id),
            gas_wanted: 0,
            gas_used: 0,
        }
    }

    /// Sets the gas fields.
    pub fn with_gas(mut self, wanted: u64, used: u64) -> Self {
        self.gas_wanted = wanted;
        self.gas_used = used;
        self
    }

    /// A tx that did not decode or authenticate.
    pub fn err(tx_id: Option<[u8; 32]>, e: &TxError) -> Self {
        TxOutcome {
            class: TxClass::Rejected,
            code: e.code(),
            log: truncate(e.to_string()),
            events: Vec::new(),
            tx_id,
            gas_wanted: 0,
            gas_used: 0,
        }
    }

    /// An authenticated tx whose action failed.
    pub fn action_failed(tx_id: [u8; 32], e: &TxError) -> Self {
        TxOutcome {
            class: TxClass::ActionFailed,
            ..Self::err(Some(tx_id), e)
        }
    }

    pub fn is_ok(&self) -> bool {
        self.code == Code::Ok
    }
}

/// Longest log stored with a result; offending values are cut beyond it, so
/// a result never costs much more than its tx.
const MAX_LOG: usize = 512;

fn truncate(mut s: String) -> String {
    if s.len() > MAX_LOG {
        let mut cut = MAX_LOG;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// The result of FinalizeBlock.
#[derive(Debug, Clone)]
pub struct BlockOutcome {
    pub height: u64,
    pub app_hash: [u8; 32],
    pub txs: Vec<TxOutcome>,
    /// CometBFT validator updates: (ed25519 consensus key, power).
    pub validator_updates: Vec<([u8; 32], u64)>,
    /// Events of the block itself (end of block), not of one tx.
    pub events: Vec<Event>,
    /// An upgrade applied at this block: the new app version and CometBFT's
    /// consensus params carrying it (protobuf; empty when not recorded).
    pub upgrade: Option<(u64, Vec<u8>)>,
}

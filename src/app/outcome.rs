//! What applying a tx or a block produced.

use crate::keyspaces::Event;
use crate::tx::{Code, TxError};

/// The result of one tx.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxOutcome {
    pub code: Code,
    pub log: String,
    pub events: Vec<Event>,
    /// `sha256(body_bytes)`, when the tx decoded.
    pub tx_id: Option<[u8; 32]>,
}

impl TxOutcome {
    pub fn ok(tx_id: [u8; 32], events: Vec<Event>) -> Self {
        TxOutcome {
            code: Code::Ok,
            log: String::new(),
            events,
            tx_id: Some(tx_id),
        }
    }

    pub fn err(tx_id: Option<[u8; 32]>, e: &TxError) -> Self {
        TxOutcome {
            code: e.code(),
            log: e.to_string(),
            events: Vec::new(),
            tx_id,
        }
    }

    pub fn is_ok(&self) -> bool {
        self.code == Code::Ok
    }
}

/// The result of FinalizeBlock.
#[derive(Debug, Clone)]
pub struct BlockOutcome {
    pub height: u64,
    pub app_hash: [u8; 32],
    pub txs: Vec<TxOutcome>,
}

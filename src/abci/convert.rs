//! Domain results to ABCI types, at the edge.

use bytes::Bytes;
use tendermint::abci::{types::ExecTxResult, Event as AbciEvent};

use crate::app::TxOutcome;
use crate::keyspaces::Event;
use crate::tx::{Code, CODESPACE};

pub fn event(e: &Event) -> AbciEvent {
    AbciEvent::new(e.kind.clone(), e.attributes.iter().cloned())
}

pub fn codespace(code: Code) -> String {
    if code == Code::Ok {
        String::new()
    } else {
        CODESPACE.to_string()
    }
}

/// A tx's FinalizeBlock result. `data` carries the tx id; an indexed
/// `tx.id` event lets `tx_search` find it by Stave's id.
pub fn exec_result(o: &TxOutcome) -> ExecTxResult {
    let mut events: Vec<AbciEvent> = o.events.iter().map(event).collect();
    if let Some(id) = o.tx_id {
        events.push(AbciEvent::new(
            "stave.tx",
            [
                ("id".to_string(), hex::encode(id), true),
                ("code".to_string(), o.code.value().to_string(), false),
            ],
        ));
    }
    ExecTxResult {
        code: o.code.value().into(),
        data: o
            .tx_id
            .map(|id| Bytes::copy_from_slice(&id))
            .unwrap_or_default(),
        log: o.log.clone(),
        info: o.code.name().to_string(),
        gas_wanted: 0,
        gas_used: 0,
        events,
        codespace: codespace(o.code),
    }
}

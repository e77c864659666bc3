//! What an action handler knows about the tx and block it runs in.

/// An event a handler emits. Converted to an ABCI event at the edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub kind: String,
    /// (key, value, indexed): indexed attributes are searchable with CometBFT's `tx_search`.
    pub attributes: Vec<(String, String, bool)>,
}

impl Event {
    pub fn new(kind: &str) -> Self {
        Event {
            kind: kind.to_string(),
            attributes: Vec::new(),
        }
    }

    /// Adds an attribute that CometBFT indexes.
    pub fn indexed(mut self, key: &str, value: impl Into<String>) -> Self {
        self.attributes.push((key.to_string(), value.into(), true));
        self
    }

    /// Adds an attribute that is not indexed.
    pub fn plain(mut self, key: &str, value: impl Into<String>) -> Self {
        self.attributes.push((key.to_string(), value.into(), false));
        self
    }
}

/// The context of one tx: block height and time (never the wall clock), the
/// authenticated signer, the tx id and the params in force.
#[derive(Debug, Clone)]
pub struct TxContext {
    pub height: u64,
    /// Block time, unix nanoseconds.
    pub time_ns: i64,
    /// Whom the tx acts as: the key that signed it, or the validator a
    /// rotated operator key signs for (`validators::signing`).
    pub signer: [u8; 32],
    /// The key that signed the tx (a release's publisher signature is
    /// checked under it).
    pub signing_key: [u8; 32],
    pub tx_id: [u8; 32],
    /// The chain the tx was signed for (content manifests and validator
    /// proofs of possession name it too).
    pub chain_id: String,
    /// The tx's ed25519 signature (a release records it).
    pub signature: [u8; 64],
    /// The position of the running action in the tx (ids derive from it).
    pub action_index: u32,
    pub params: crate::keyspaces::params::Params,
    pub events: Vec<Event>,
    /// Bytes charged in this tx to unsponsored accounts other than the
    /// signer (a KV token's controller, an upload's uploader), new records
    /// included. The executor takes them from the block's unsponsored
    /// budget, whoever signs.
    pub unsponsored_others: std::cell::Cell<u64>,
}

impl TxContext {
    pub fn emit(&mut self, e: Event) {
        self.events.push(e);
    }
}

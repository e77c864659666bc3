//! ABCI Query paths. Point reads at any retained height, with proofs
//! (`prove = true`) against that height's app hash: ICS23, or jmt's own
//! where ICS23 cannot hold ([`crate::proof::choose`]; an empty key or value,
//! or an empty neighbour in a proof of absence).
//!
//! | path | data | value |
//! | --- | --- | --- |
//! | `/store` | raw state key | raw stored bytes |
//! | `/accounts/{pubkey hex}` | — | `stave.accounts.v1.Account` |
//! | `/casbin/models/{owner hex}/{name}` | — | `stave.casbin.v1.CasbinModel` |
//! | `/casbin/rules/{owner hex}/{name}/{rule index}` | — | `stave.casbin.v1.CasbinRule` |
//! | `/uploads/…`, `/deks/…`, `/releases/…`, `/policies/…`, `/entitlements/…`, `/grants/…` | — | see [`crate::keyspaces::rights::query`] |
//! | governance paths | — | see `keyspaces::validators::query::abci_state_key` |
//! | `/kv/{signer hex}/{key hex}` | — | `stave.kv.v1.KvEntry` (default database) |
//! | `/kvdb/{owner hex}/{db}/{key hex}` | — | `stave.kv.v1.KvEntry` (raw: check `expire_ms`) |
//! | `/kvtok/token/{id hex}` | — | `stave.kv.v1.StoredToken` (as stored: a token replaced by an update still reads `spent_height` 0; prove liveness with the tuple path) |
//! | `/kvtok/tuple/{protocol_id}/{key}/{controller}` (each hex of its UTF-8) | — | `stave.kv.v1.TupleRecord` |

use prost::Message;
use tendermint::abci::{request, response};
use tendermint::merkle::proof::{ProofOp, ProofOps};

use crate::keyspaces::{accounts::account_key, kv::kv_key};
use crate::proof::ChosenProof;
use crate::store::{ChainStore, StoreError};
use crate::tx::{Code, CODESPACE};

/// The proof op type of JMT ICS23 proofs.
pub const PROOF_TYPE: &str = "ics23:jmt";

/// The proof op type of jmt's own proofs (`SparseMerkleProof<Sha256>`,
/// borsh-encoded), sent where ICS23 cannot hold: ICS23 refuses an empty key
/// or value, the key's own or, in a proof of absence, a neighbour's (kvdb
/// set members, for one, are stored empty). Standard ICS23 verifiers
/// (CometBFT's light proxy, IBC) do not know this type.
pub const JMT_PROOF_TYPE: &str = "jmt:sparse-merkle-sha256";

fn hex32(s: &str) -> Result<[u8; 32], String> {
    let v = hex::decode(s).map_err(|e| format!("{s:?}: {e}"))?;
    v.as_slice()
        .try_into()
        .map_err(|_| format!("{s:?}: not 32 bytes"))
}

/// Resolves a query path (and data) to a state key.
pub fn state_key(path: &str, data: &[u8]) -> Result<Vec<u8>, String> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    if let Some(k) = crate::keyspaces::rights::query::state_key(&parts) {
        return k;
    }
    if let Some(k) = crate::keyspaces::validators::query::abci_state_key(&parts) {
        return k;
    }
    match parts.as_slice() {
        ["store"] => Ok(data.to_vec()),
        ["accounts", pk] => Ok(account_key(&hex32(pk)?)),
        ["kv", signer, key] => {
            let key = hex::decode(key).map_err(|e| format!("key {key:?}: {e}"))?;
            Ok(kv_key(&hex32(signer)?, &key))
        }
        ["kvdb" | "kvtok", ..] => crate::keyspaces::kv::query::state_key(&parts),
        ["casbin", rest @ ..] => crate::keyspaces::casbin::query::state_key(rest),
        _ => Err(format!("unknown query path {path:?}")),
    }
}

fn fail(code: Code, log: String) -> response::Query {
    response::Query {
        code: code.value().into(),
        log,
        codespace: CODESPACE.into(),
        ..Default::default()
    }
}

/// Answers one ABCI query. Never fails: errors are codes.
pub fn query(store: &ChainStore, q: &request::Query) -> response::Query {
    let key = match state_key(&q.path, &q.data) {
        Ok(k) => k,
        Err(e) => return fail(Code::InvalidArgument, e),
    };
    let height = match q.height.value() {
        0 => None,
        h => Some(h),
    };
    let answer = if q.prove {
        proven(store, &key, height)
    } else {
        store
            .get_at(&key, height)
            .map(|pv| (pv.height, pv.value, None))
    };
    match answer {
        Ok((at, value, proof)) => response::Query {
            code: Code::Ok.value().into(),
            log: if value.is_some() { "exists" } else { "absent" }.into(),
            key: key.into(),
            value: value.unwrap_or_default().into(),
            proof: proof.map(|op| ProofOps { ops: vec![op] }),
            height: at.try_into().unwrap_or_default(),
            ..Default::default()
        },
        Err(e @ StoreError::HeightUnavailable { .. }) => fail(Code::NotFound, e.to_string()),
        Err(e) => fail(Code::NotReady, e.to_string()),
    }
}

/// A read's height, value and proof op.
type Answer = (u64, Option<Vec<u8>>, Option<ProofOp>);

/// `key` at `height` (`None`: the latest) with the proof that holds for it
/// ([`crate::proof::choose`]), all read through one snapshot.
fn proven(store: &ChainStore, key: &[u8], height: Option<u64>) -> Result<Answer, StoreError> {
    let view = store.view();
    let h = ChainStore::height_in(&view, height)?;
    let chosen = crate::proof::choose(store, &view, key, h)?;
    let (field_type, data) = match chosen.proof {
        ChosenProof::Ics23(cp) => (PROOF_TYPE, cp.encode_to_vec()),
        ChosenProof::Jmt(data) => (JMT_PROOF_TYPE, data),
    };
    let label = if field_type == PROOF_TYPE {
        "ics23"
    } else {
        "jmt"
    };
    crate::metrics::metrics()
        .query_proofs
        .with_label_values(&[label])
        .inc();
    let op = ProofOp {
        field_type: field_type.into(),
        key: Vec::new(),
        data,
    };
    Ok((h, chosen.value, Some(op)))
}

//! ABCI `Query` paths of the content and rights keyspaces (point reads at
//! any retained height, with proofs): hex path segments to state keys.
//!
//! | path | value |
//! | --- | --- |
//! | `/uploads/{cid}` | `stave.rights.v1.Upload` |
//! | `/deks/{cid}` | `stave.rights.v1.WrappedDek` |
//! | `/releases/{cid}` | `stave.rights.v1.Release` |
//! | `/policies/{cid}` | `stave.rights.v1.Policy` |
//! | `/entitlements/{cid}/{pubkey}` | `stave.rights.v1.Entitlement` |
//! | `/grants/{cid}/{consumer}/{height}` | `stave.rights.v1.Grant` |

use crate::keyspaces::{deks, entitlements, grants, policies, releases, uploads};

/// The first path segments this module answers.
pub const PATHS: [&str; 6] = [
    "uploads",
    "deks",
    "releases",
    "policies",
    "entitlements",
    "grants",
];

fn hexed(what: &str, s: &str) -> Result<Vec<u8>, String> {
    hex::decode(s).map_err(|e| format!("{what} {s:?}: {e}"))
}

fn key32(what: &str, s: &str) -> Result<[u8; 32], String> {
    hexed(what, s)?
        .as_slice()
        .try_into()
        .map_err(|_| format!("{what} {s:?}: not 32 bytes"))
}

/// The state key of a rights query path (split on `/`), or `None` when
/// the path is not one of [`PATHS`].
pub fn state_key(parts: &[&str]) -> Option<Result<Vec<u8>, String>> {
    let r = match parts {
        ["uploads", cid] => hexed("cid", cid).map(|c| uploads::upload_key(&c)),
        ["deks", cid] => hexed("cid", cid).map(|c| deks::dek_key(&c)),
        ["releases", cid] => hexed("cid", cid).map(|c| releases::release_key(&c)),
        ["policies", cid] => hexed("cid", cid).map(|c| policies::policy_key(&c)),
        ["entitlements", cid, pk] => hexed("cid", cid)
            .and_then(|c| Ok(entitlements::entitlement_key(&c, &key32("pubkey", pk)?))),
        ["grants", cid, pk, h] => hexed("cid", cid).and_then(|c| {
            let h: u64 = h.parse().map_err(|e| format!("height {h:?}: {e}"))?;
            Ok(grants::grant_key(&c, &key32("consumer", pk)?, h))
        }),
        [first, ..] if PATHS.contains(first) => Err(format!("malformed {first} path {parts:?}")),
        _ => return None,
    };
    Some(r)
}

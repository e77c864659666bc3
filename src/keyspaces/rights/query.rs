//! ABCI `Query` paths of the content and rights keyspaces (point reads at
//! any retained height, with proofs): hex path segments to state keys.
//!
//! | path | value |
//! | --- | --- |
//! | `/uploads/{cid}` | `stave.rights.v1.Upload` |
//! | `/deks/{cid}` | `stave.rights.v1.WrappedDek` |
//! | `/releases/{release_id}` | `stave.ddex.v1.ReleaseRecord` |
//! | `/release_versions/{release_id}/{n}` | `stave.ddex.v1.ReleaseRecord` |
//! | `/releases_by_cid/{cid}/{release_id}` | `stave.ddex.v1.CidDeals` |
//! | `/policies/{cid}` | `stave.rights.v1.Policy` |
//! | `/entitlements/{cid}/{pubkey}` | `stave.rights.v1.Entitlement` |
//! | `/grants/{cid}/{consumer}/{height}` | `stave.rights.v1.Grant` |

use crate::keyspaces::{deks, entitlements, grants, policies, releases, uploads};

/// The first path segments this module answers.
pub const PATHS: [&str; 8] = [
    "uploads",
    "deks",
    "releases",
    "release_versions",
    "releases_by_cid",
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
        ["releases", id] => Ok(releases::release_key(id)),
        ["release_versions", id, n] => n
            .parse::<u32>()
            .map(|n| releases::version_key(id, n))
            .map_err(|e| format!("version {n:?}: {e}")),
        ["releases_by_cid", cid, id] => hexed("cid", cid).map(|c| releases::by_cid_key(&c, id)),
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

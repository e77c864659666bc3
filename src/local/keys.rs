//! Key builders of the local store. Every key starts with `local/`.

const DEKS: &[u8] = b"local/deks/";
const PROCESSING: &[u8] = b"local/processing/";
const SYNC_CONTENT: &[u8] = b"local/sync/content/";
const SYNC_DEKS: &[u8] = b"local/sync/deks/";
const PURGED: &[u8] = b"local/purged/";
const META_LAST_RECONCILE: &[u8] = b"local/meta/last_reconcile_height";
const META_REPLICA_SIGNER: &[u8] = b"local/meta/replica_signer";
const INTENTS: &[u8] = b"local/intents/";
const ACCESS_NONCES: &[u8] = b"local/access/nonces/";
const PENDING_GRANTS: &[u8] = b"local/access/pending/";
const REFUSED_GRANTS: &[u8] = b"local/access/refused";
const KV: &[u8] = b"local/kv/";
const REPLICA_MD: &[u8] = b"local/replica/md/";
const REPLICA_VAL: &[u8] = b"local/replica/val/";
const REPLICA_REF: &[u8] = b"local/replica/ref/";
const REPLICA_IDX: &[u8] = b"local/replica/idx/";

fn join(prefix: &[u8], id: &[u8]) -> Vec<u8> {
    [prefix, id].concat()
}

/// `local/deks/`.
pub fn deks_prefix() -> Vec<u8> {
    DEKS.to_vec()
}
/// `local/deks/{cid}`.
pub fn dek(cid: &[u8]) -> Vec<u8> {
    join(DEKS, cid)
}
/// `local/processing/`.
pub fn processing_prefix() -> Vec<u8> {
    PROCESSING.to_vec()
}
/// `local/processing/{job_id}`.
pub fn processing(job_id: &[u8]) -> Vec<u8> {
    join(PROCESSING, job_id)
}
/// `local/sync/content/`.
pub fn sync_content_prefix() -> Vec<u8> {
    SYNC_CONTENT.to_vec()
}
/// `local/sync/content/{cid}`.
pub fn sync_content(cid: &[u8]) -> Vec<u8> {
    join(SYNC_CONTENT, cid)
}
/// `local/sync/deks/`.
pub fn sync_deks_prefix() -> Vec<u8> {
    SYNC_DEKS.to_vec()
}
/// `local/sync/deks/{cid}`.
pub fn sync_dek(cid: &[u8]) -> Vec<u8> {
    join(SYNC_DEKS, cid)
}
/// `local/purged/`.
pub fn purged_prefix() -> Vec<u8> {
    PURGED.to_vec()
}
/// `local/purged/{cid}`: an upload taken down whose data this node deleted.
pub fn purged(cid: &[u8]) -> Vec<u8> {
    join(PURGED, cid)
}
/// `local/meta/last_reconcile_height` (value: u64 big-endian).
pub fn last_reconcile_height() -> Vec<u8> {
    META_LAST_RECONCILE.to_vec()
}

/// `local/meta/replica_signer` (value: the 32-byte key that signs this
/// node's replicated records, then, while it re-signs those an earlier key
/// signed after an operator-key rotation, since when: u64 big-endian ms).
pub fn replica_signer() -> Vec<u8> {
    META_REPLICA_SIGNER.to_vec()
}

/// `local/intents/`.
pub fn intents_prefix() -> Vec<u8> {
    INTENTS.to_vec()
}
/// `local/intents/{uploader ‖ nonce}` (value: u64 big-endian, the Unix
/// milliseconds after which the entry may be forgotten).
pub fn intent(replay_key: &[u8]) -> Vec<u8> {
    join(INTENTS, replay_key)
}

/// The id part of a key under `prefix`.
pub fn id_of<'a>(prefix: &[u8], key: &'a [u8]) -> Option<&'a [u8]> {
    key.strip_prefix(prefix)
}

/// `local/access/nonces/`.
pub fn access_nonces_prefix() -> Vec<u8> {
    ACCESS_NONCES.to_vec()
}
/// `local/access/nonces/{consumer ‖ nonce}` (value: u64 big-endian, the
/// Unix milliseconds after which the entry may be forgotten).
pub fn access_nonce(replay_key: &[u8]) -> Vec<u8> {
    join(ACCESS_NONCES, replay_key)
}
/// `local/access/pending/`.
pub fn pending_grants_prefix() -> Vec<u8> {
    PENDING_GRANTS.to_vec()
}
/// `local/access/pending/{seq}` (seq: u64 big-endian, in delivery order).
pub fn pending_grant(seq: u64) -> Vec<u8> {
    join(PENDING_GRANTS, &seq.to_be_bytes())
}
/// `local/access/refused` (value: u64 big-endian, deliveries whose grant
/// the chain refused).
pub fn refused_grants() -> Vec<u8> {
    REFUSED_GRANTS.to_vec()
}

/// `local/kv/{context}/`: one context's entries. The context holds no `/`
/// (`local::kv` checks it), so the prefix is unambiguous.
pub fn kv_prefix(context: &str) -> Vec<u8> {
    [KV, context.as_bytes(), b"/"].concat()
}
/// `local/kv/{context}/{key}`.
pub fn kv(context: &str, key: &[u8]) -> Vec<u8> {
    [kv_prefix(context).as_slice(), key].concat()
}

/// `local/replica/md/`: every record held, by datakey.
pub fn replica_md_prefix() -> Vec<u8> {
    REPLICA_MD.to_vec()
}
/// `local/replica/md/{datakey}` (32 bytes; key order is datakey order, so
/// a prefix of datakeys is a prefix of keys).
pub fn replica_md(datakey_prefix: &[u8]) -> Vec<u8> {
    join(REPLICA_MD, datakey_prefix)
}
/// `local/replica/val/`.
pub fn replica_values_prefix() -> Vec<u8> {
    REPLICA_VAL.to_vec()
}
/// `local/replica/val/{sha256}`: a value, stored once however many
/// records name it.
pub fn replica_value(hash: &[u8; 32]) -> Vec<u8> {
    join(REPLICA_VAL, hash)
}
/// `local/replica/ref/{sha256}` (value: u32 big-endian, how many records
/// name the value).
pub fn replica_refs(hash: &[u8; 32]) -> Vec<u8> {
    join(REPLICA_REF, hash)
}
/// `local/replica/idx/{len(db):u8}{db}`: one database's keys.
pub fn replica_idx_prefix(db: &str) -> Vec<u8> {
    [REPLICA_IDX, &[db.len() as u8], db.as_bytes()].concat()
}
/// `local/replica/idx/{len(db):u8}{db}{key}`.
pub fn replica_idx(db: &str, key: &[u8]) -> Vec<u8> {
    [replica_idx_prefix(db).as_slice(), key].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyspaces_never_overlap_and_ids_round_trip() {
        let cid = [0xffu8; 34];
        let keys = [
            (deks_prefix(), dek(&cid)),
            (processing_prefix(), processing(&cid)),
            (sync_content_prefix(), sync_content(&cid)),
            (sync_deks_prefix(), sync_dek(&cid)),
            (purged_prefix(), purged(&cid)),
            (intents_prefix(), intent(&cid)),
            (replica_md_prefix(), replica_md(&cid)),
        ];
        for (i, (p, k)) in keys.iter().enumerate() {
            assert_eq!(id_of(p, k), Some(&cid[..]));
            for (j, (q, _)) in keys.iter().enumerate() {
                assert_eq!(k.starts_with(q), i == j, "{i} under {j}");
            }
            assert!(!last_reconcile_height().starts_with(p));
            assert!(!replica_signer().starts_with(p));
        }
    }

    #[test]
    fn a_kv_context_is_its_own_prefix() {
        assert_eq!(kv("ops", b"k/x"), b"local/kv/ops/k/x");
        assert!(kv("ops", b"k").starts_with(&kv_prefix("ops")));
        // A context that extends another is not under it.
        assert!(!kv("ops.b", b"k").starts_with(&kv_prefix("ops")));
        assert!(!kv("ops", b"k").starts_with(&deks_prefix()));
    }

    #[test]
    fn replica_keys_are_apart_and_db_prefixes_unambiguous() {
        let h = [7u8; 32];
        let rows = [
            replica_md(&h),
            replica_value(&h),
            replica_refs(&h),
            replica_idx("db", b"k"),
        ];
        for (i, a) in rows.iter().enumerate() {
            for (j, b) in rows.iter().enumerate() {
                assert_eq!(a.starts_with(b), i == j);
            }
        }
        // A database whose name extends another's is not under it.
        assert!(!replica_idx("ab", b"c").starts_with(&replica_idx_prefix("a")));
        assert!(replica_idx("a", b"bc").starts_with(&replica_idx_prefix("a")));
    }

    #[test]
    fn key_order_follows_id_byte_order() {
        let mut ids: Vec<Vec<u8>> = vec![vec![2, 0], vec![1, 255], vec![1], vec![0, 0, 1]];
        let mut ks: Vec<Vec<u8>> = ids.iter().map(|i| sync_content(i)).collect();
        ids.sort();
        ks.sort();
        let back: Vec<Vec<u8>> = ks
            .iter()
            .map(|k| id_of(&sync_content_prefix(), k).unwrap().to_vec())
            .collect();
        assert_eq!(back, ids);
    }
}

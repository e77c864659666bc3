//! Key builders of the casbin/ keyspaces. The only place their keys are built.
//!
//! - `casbin/models/{model_id}` (state)
//! - `casbin/rules/{model_id}/{rule_index}` (state; index u32 big-endian)
//! - `casbin/rules_by_sub/{model_id}/{subject_len:2}{subject}{rule_index:4}`
//!   (index space; one empty row per rule, so consensus writes it blind)

use super::ModelId;

const MODELS: &[u8] = b"casbin/models/";
const RULES: &[u8] = b"casbin/rules/";
const RULES_BY_SUB: &[u8] = b"casbin/rules_by_sub/";

fn join(prefix: &[u8], id: &ModelId, extra: usize) -> Vec<u8> {
    let mut k = Vec::with_capacity(prefix.len() + id.as_str().len() + 1 + extra);
    k.extend_from_slice(prefix);
    k.extend_from_slice(id.as_str().as_bytes());
    k
}

/// `casbin/models/{model_id}`.
pub fn model_key(id: &ModelId) -> Vec<u8> {
    join(MODELS, id, 0)
}

/// `casbin/rules/{model_id}/`: the prefix of one model's rules.
pub fn rules_prefix(id: &ModelId) -> Vec<u8> {
    let mut k = join(RULES, id, 4);
    k.push(b'/');
    k
}

/// `casbin/rules/{model_id}/{rule_index}`, the index fixed-width big-endian
/// so that key order is slot order.
pub fn rule_key(id: &ModelId, index: u32) -> Vec<u8> {
    let mut k = rules_prefix(id);
    k.extend_from_slice(&index.to_be_bytes());
    k
}

/// The slot of a `casbin/rules/{model_id}/{rule_index}` key of `id`.
pub fn split_rule_key(id: &ModelId, key: &[u8]) -> Option<u32> {
    slot_after(&rules_prefix(id), key)
}

/// The big-endian u32 slot that is all of `key` after `prefix`.
fn slot_after(prefix: &[u8], key: &[u8]) -> Option<u32> {
    let rest = key.strip_prefix(prefix)?;
    Some(u32::from_be_bytes(rest.try_into().ok()?))
}

/// `casbin/rules_by_sub/{model_id}/{subject_len:2}{subject}`: the prefix of
/// one subject's rows (index space). The length makes a subject's prefix
/// never the prefix of another subject's rows. A subject is a rule value,
/// at most `max_value_bytes` (≤ 4096) long.
pub fn rules_by_sub_prefix(id: &ModelId, subject: &str) -> Vec<u8> {
    let mut k = join(RULES_BY_SUB, id, 2 + subject.len() + 4);
    k.push(b'/');
    let len = u16::try_from(subject.len()).unwrap_or(u16::MAX);
    k.extend_from_slice(&len.to_be_bytes());
    k.extend_from_slice(subject.as_bytes());
    k
}

/// `casbin/rules_by_sub/{model_id}/{subject_len:2}{subject}{rule_index:4}`:
/// rule `index` of `id` has `subject` as v0 (index space, empty value).
pub fn rules_by_sub_key(id: &ModelId, subject: &str, index: u32) -> Vec<u8> {
    let mut k = rules_by_sub_prefix(id, subject);
    k.extend_from_slice(&index.to_be_bytes());
    k
}

/// The slot of a [`rules_by_sub_key`] under `prefix`.
pub fn split_rules_by_sub_key(prefix: &[u8], key: &[u8]) -> Option<u32> {
    slot_after(prefix, key)
}

/// `casbin/rules/`: every model's rules (verifiable state).
pub fn rules_root() -> &'static [u8] {
    RULES
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn rule_keys_sort_in_slot_order_and_round_trip(a in any::<u32>(), b in any::<u32>()) {
            let id = ModelId::new(&[3; 32], "m").unwrap();
            prop_assert_eq!(a.cmp(&b), rule_key(&id, a).cmp(&rule_key(&id, b)));
            prop_assert_eq!(split_rule_key(&id, &rule_key(&id, a)), Some(a));
        }

        #[test]
        fn one_models_rules_never_share_another_models_prefix(
            n1 in "[a-z0-9._-]{1,12}", n2 in "[a-z0-9._-]{1,12}", i in any::<u32>()) {
            prop_assume!(n1 != n2);
            let a = ModelId::new(&[3; 32], &n1).unwrap();
            let b = ModelId::new(&[3; 32], &n2).unwrap();
            prop_assert!(!rule_key(&a, i).starts_with(&rules_prefix(&b)));
            prop_assert_eq!(split_rule_key(&b, &rule_key(&a, i)), None);
        }

        #[test]
        fn one_subjects_rows_never_share_another_subjects_prefix(
            s1 in ".{0,24}", s2 in ".{0,24}", i in any::<u32>()) {
            prop_assume!(s1 != s2);
            let id = ModelId::new(&[3; 32], "m").unwrap();
            let (p1, p2) = (rules_by_sub_prefix(&id, &s1), rules_by_sub_prefix(&id, &s2));
            prop_assert!(!rules_by_sub_key(&id, &s1, i).starts_with(&p2));
            prop_assert_eq!(split_rules_by_sub_key(&p1, &rules_by_sub_key(&id, &s1, i)), Some(i));
        }
    }

    #[test]
    fn keys_keep_the_documents_shape() {
        let id = ModelId::new(&[0xab; 32], "m1").unwrap();
        let h = "ab".repeat(32);
        assert_eq!(model_key(&id), format!("casbin/models/{h}/m1").into_bytes());
        assert_eq!(
            rule_key(&id, 258),
            [format!("casbin/rules/{h}/m1/").as_bytes(), &[0, 0, 1, 2]].concat()
        );
        assert_eq!(
            rules_by_sub_key(&id, "alice", 258),
            [
                format!("casbin/rules_by_sub/{h}/m1/").as_bytes(),
                &[0, 5],
                b"alice",
                &[0, 0, 1, 2]
            ]
            .concat()
        );
    }
}

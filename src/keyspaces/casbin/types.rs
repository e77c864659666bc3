//! Domain types of the casbin/ keyspaces: model ids, stored models and rules.

use std::fmt;

use crate::proto::casbin as pb;

/// Longest model name (the part after `{owner_hex}/`).
pub const MAX_NAME_BYTES: usize = 64;

/// A model id, `{owner_hex}/{name}`: 64 lowercase hex characters of the
/// owner's ed25519 key, a slash, and a name of `[A-Za-z0-9._-]{1,64}`. The
/// owner is part of the id, so nobody can claim an id in another's name, and
/// no id is a prefix of another's keys (names have no `/`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ModelId {
    id: String,
    owner: [u8; 32],
}

impl ModelId {
    /// # Errors
    /// A message naming the offending id when it is not `{owner_hex}/{name}`.
    pub fn parse(id: &str) -> Result<Self, String> {
        let (owner_hex, name) = id
            .split_once('/')
            .ok_or_else(|| format!("model id {id:?} is not \"{{owner_hex}}/{{name}}\""))?;
        let lower = owner_hex.len() == 64
            && owner_hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        let owner: [u8; 32] = hex::decode(owner_hex)
            .ok()
            .filter(|_| lower)
            .and_then(|v| v.try_into().ok())
            .ok_or_else(|| format!("model id {id:?}: owner must be 64 lowercase hex characters"))?;
        let name_ok = !name.is_empty()
            && name.len() <= MAX_NAME_BYTES
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-');
        if !name_ok {
            return Err(format!(
                "model id {id:?}: name must be 1..={MAX_NAME_BYTES} of [A-Za-z0-9._-]"
            ));
        }
        Ok(ModelId {
            id: id.to_string(),
            owner,
        })
    }

    /// The id of `name` owned by `owner`.
    pub fn new(owner: &[u8; 32], name: &str) -> Result<Self, String> {
        Self::parse(&format!("{}/{name}", hex::encode(owner)))
    }

    pub fn as_str(&self) -> &str {
        &self.id
    }

    pub fn owner(&self) -> &[u8; 32] {
        &self.owner
    }
}

impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id)
    }
}

/// A rule's type: `p` (policy) or `g` (role assignment, `g = _, _`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PType {
    P,
    G,
}

impl PType {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "p" => Ok(PType::P),
            "g" => Ok(PType::G),
            other => Err(format!("ptype {other:?} is not \"p\" or \"g\"")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PType::P => "p",
            PType::G => "g",
        }
    }
}

/// One rule: its type and its values (`v0..`), `v0` being the subject.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rule {
    pub ptype: PType,
    pub values: Vec<String>,
}

impl Rule {
    /// The subject the `rules_by_sub` index files this rule under.
    pub fn subject(&self) -> &str {
        self.values.first().map(String::as_str).unwrap_or_default()
    }

    /// Stored bytes the rule counts against its owner's quota.
    pub fn stored_size(&self) -> u64 {
        self.values.iter().map(|v| v.len() as u64).sum::<u64>() + 1
    }

    pub fn to_proto(&self, model_id: &ModelId) -> pb::CasbinRule {
        let mut v: [String; 6] = Default::default();
        for (slot, value) in v.iter_mut().zip(&self.values) {
            slot.clone_from(value);
        }
        let [v0, v1, v2, v3, v4, v5] = v;
        pb::CasbinRule {
            model_id: model_id.to_string(),
            ptype: self.ptype.as_str().to_string(),
            v0,
            v1,
            v2,
            v3,
            v4,
            v5,
        }
    }
}

impl TryFrom<pb::CasbinRule> for Rule {
    type Error = String;
    fn try_from(r: pb::CasbinRule) -> Result<Self, String> {
        let ptype = PType::parse(&r.ptype)?;
        let all = [r.v0, r.v1, r.v2, r.v3, r.v4, r.v5];
        let used = all.iter().rposition(|v| !v.is_empty()).map_or(0, |i| i + 1);
        let values: Vec<String> = all.into_iter().take(used).collect();
        if values.is_empty() || values.iter().any(String::is_empty) {
            return Err(format!("rule values {values:?} are missing or have a gap"));
        }
        Ok(Rule { ptype, values })
    }
}

/// A stored model (domain type of `stave.casbin.v1.CasbinModel`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CasbinModel {
    pub model_id: ModelId,
    pub owner: [u8; 32],
    pub perm_model: String,
    /// Occupied rule slots, ascending.
    pub rule_indices: Vec<u32>,
    pub content_digest: [u8; 32],
    pub created_height: u64,
    /// The measure's weight of the matcher's literals and every stored
    /// rule's patterns (capped by `max_model_pattern_weight`).
    pub pattern_weight: u64,
}

impl TryFrom<pb::CasbinModel> for CasbinModel {
    type Error = String;
    fn try_from(m: pb::CasbinModel) -> Result<Self, String> {
        let model_id = ModelId::parse(&m.model_id)?;
        let owner: [u8; 32] = m
            .owner_pubkey
            .as_slice()
            .try_into()
            .map_err(|_| format!("owner_pubkey is {} bytes, not 32", m.owner_pubkey.len()))?;
        let content_digest: [u8; 32] = m
            .content_digest
            .as_slice()
            .try_into()
            .map_err(|_| format!("content_digest is {} bytes", m.content_digest.len()))?;
        if !m.rule_indices.windows(2).all(|w| w[0] < w[1]) {
            return Err("rule_indices are not strictly ascending".into());
        }
        Ok(CasbinModel {
            model_id,
            owner,
            perm_model: m.perm_model,
            rule_indices: m.rule_indices,
            content_digest,
            created_height: m.created_height,
            pattern_weight: m.pattern_weight,
        })
    }
}

impl From<&CasbinModel> for pb::CasbinModel {
    fn from(m: &CasbinModel) -> Self {
        pb::CasbinModel {
            model_id: m.model_id.to_string(),
            owner_pubkey: m.owner.to_vec(),
            perm_model: m.perm_model.clone(),
            rule_indices: m.rule_indices.clone(),
            content_digest: m.content_digest.to_vec(),
            created_height: m.created_height,
            pattern_weight: m.pattern_weight,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_carry_their_owner_and_refuse_everything_else() {
        let owner = [0xabu8; 32];
        let id = ModelId::new(&owner, "songs-v1.2_x").unwrap();
        assert_eq!(id.owner(), &owner);
        assert_eq!(ModelId::parse(id.as_str()).unwrap(), id);
        let hex_owner = hex::encode(owner);
        for bad in [
            "noslash".to_string(),
            format!("{hex_owner}/"),
            format!("{hex_owner}/a/b"),
            format!("{}/x", hex_owner.to_uppercase()),
            format!("{}/x", &hex_owner[2..]),
            format!("{hex_owner}/{}", "n".repeat(65)),
            format!("{hex_owner}/sp ace"),
        ] {
            assert!(ModelId::parse(&bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rules_round_trip_and_gaps_are_corrupt() {
        let id = ModelId::new(&[1; 32], "m").unwrap();
        let r = Rule {
            ptype: PType::P,
            values: vec!["alice".into(), "data".into(), "read".into()],
        };
        assert_eq!(Rule::try_from(r.to_proto(&id)).unwrap(), r);
        let mut gap = r.to_proto(&id);
        gap.v1.clear();
        assert!(Rule::try_from(gap).is_err());
    }
}

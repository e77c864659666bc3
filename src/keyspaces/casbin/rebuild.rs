//! `casbin/rules_by_sub/` rebuilt from `casbin/rules/`: each stored rule
//! names its model and carries its subject; the slot is the key's last four
//! bytes.

use prost::Message;

use crate::keyspaces::index_rows::{all_under, IndexRows};
use crate::proto::casbin as pb;
use crate::store::{StateRead, StoreError};

use super::keys::{rules_by_sub_key, rules_root, split_rule_key};
use super::{ModelId, Rule};

pub fn rebuild_index<S: StateRead + ?Sized>(s: &S, out: &mut IndexRows) -> Result<(), StoreError> {
    for (k, v) in all_under(s, rules_root())? {
        let bad = |why: String| StoreError::corrupt(&k, why);
        let stored = pb::CasbinRule::decode(v.as_slice()).map_err(|e| bad(e.to_string()))?;
        let id = ModelId::parse(&stored.model_id).map_err(bad)?;
        let slot =
            split_rule_key(&id, &k).ok_or_else(|| bad("not a rule key of its model".into()))?;
        let rule = Rule::try_from(stored).map_err(bad)?;
        out.insert(rules_by_sub_key(&id, rule.subject(), slot), Vec::new());
    }
    Ok(())
}

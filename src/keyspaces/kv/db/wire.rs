//! kvdb actions ⇄ their wire messages in the `Action` oneof.

use super::ops::{KvdbAction, KvdbOp};
use crate::proto::kv as pb;
use crate::proto::tx::action::Kind;

impl KvdbAction {
    /// The domain action of a kvdb oneof arm.
    pub fn from_kind(k: Kind) -> Result<Self, String> {
        let (db, key, op) = match k {
            Kind::KvdbSet(m) => (
                m.db,
                m.key,
                KvdbOp::Set {
                    value: m.value,
                    ttl_ms: m.ttl_ms,
                },
            ),
            Kind::KvdbDel(m) => (m.db, m.key, KvdbOp::Del),
            Kind::KvdbExpire(m) => (m.db, m.key, KvdbOp::Expire { ttl_ms: m.ttl_ms }),
            Kind::KvdbHset(m) => (
                m.db,
                m.key,
                KvdbOp::HSet {
                    field: m.field,
                    value: m.value,
                },
            ),
            Kind::KvdbHdel(m) => (m.db, m.key, KvdbOp::HDel { field: m.field }),
            Kind::KvdbSadd(m) => (m.db, m.key, KvdbOp::SAdd(m.members)),
            Kind::KvdbSrem(m) => (m.db, m.key, KvdbOp::SRem(m.members)),
            Kind::KvdbZadd(m) => (
                m.db,
                m.key,
                KvdbOp::ZAdd {
                    member: m.member,
                    score: m.score,
                },
            ),
            Kind::KvdbZrem(m) => (m.db, m.key, KvdbOp::ZRem(m.members)),
            Kind::KvdbPush(m) => (
                m.db,
                m.key,
                KvdbOp::Push {
                    values: m.values,
                    left: m.left,
                },
            ),
            Kind::KvdbPop(m) => (m.db, m.key, KvdbOp::Pop { left: m.left }),
            Kind::KvdbIncrBy(m) => (m.db, m.key, KvdbOp::IncrBy(m.delta)),
            other => return Err(format!("not a kvdb action: {other:?}")),
        };
        Ok(KvdbAction { db, key, op })
    }

    /// The oneof arm of this action.
    pub fn into_kind(self) -> Kind {
        let (db, key) = (self.db, self.key);
        match self.op {
            KvdbOp::Set { value, ttl_ms } => Kind::KvdbSet(pb::KvdbSet {
                db,
                key,
                value,
                ttl_ms,
            }),
            KvdbOp::Del => Kind::KvdbDel(pb::KvdbDel { db, key }),
            KvdbOp::Expire { ttl_ms } => Kind::KvdbExpire(pb::KvdbExpire { db, key, ttl_ms }),
            KvdbOp::HSet { field, value } => Kind::KvdbHset(pb::KvdbHset {
                db,
                key,
                field,
                value,
            }),
            KvdbOp::HDel { field } => Kind::KvdbHdel(pb::KvdbHdel { db, key, field }),
            KvdbOp::SAdd(members) => Kind::KvdbSadd(pb::KvdbSadd { db, key, members }),
            KvdbOp::SRem(members) => Kind::KvdbSrem(pb::KvdbSrem { db, key, members }),
            KvdbOp::ZAdd { member, score } => Kind::KvdbZadd(pb::KvdbZadd {
                db,
                key,
                member,
                score,
            }),
            KvdbOp::ZRem(members) => Kind::KvdbZrem(pb::KvdbZrem { db, key, members }),
            KvdbOp::Push { values, left } => Kind::KvdbPush(pb::KvdbPush {
                db,
                key,
                values,
                left,
            }),
            KvdbOp::Pop { left } => Kind::KvdbPop(pb::KvdbPop { db, key, left }),
            KvdbOp::IncrBy(delta) => Kind::KvdbIncrBy(pb::KvdbIncrBy { db, key, delta }),
        }
    }
}

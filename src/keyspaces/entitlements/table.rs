//! Who may grant, replace or revoke which role: the one authorisation
//! table of `entitlements/`, used by `GrantEntitlement` and
//! `RevokeEntitlement` (and printed in `docs/rights.md`).
//!
//! | signer | target's current role | change | allowed |
//! | --- | --- | --- | --- |
//! | `OWNER` | any or none | grant / replace with any role, revoke | yes |
//! | `ADMIN` | none, `DISTRIBUTOR`, `CONSUMER` | grant / replace with `DISTRIBUTOR` or `CONSUMER`, revoke | yes |
//! | `ADMIN` | `OWNER` or `ADMIN` | anything | no |
//! | `ADMIN` | any | grant / replace with `OWNER` or `ADMIN` | no |
//! | `DISTRIBUTOR`, `CONSUMER`, none | any | anything | no |
//!
//! Whatever the table says, the last `OWNER` of a cid can be neither
//! revoked nor demoted (`LAST_OWNER`).

use crate::proto::rights::Role;

/// A change to one `(cid, pubkey)` record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Grant a role (replacing any role the key holds).
    Grant(Role),
    Revoke,
}

fn admin_may_touch(role: Role) -> bool {
    matches!(role, Role::Distributor | Role::Consumer)
}

/// Whether a signer holding `signer` may apply `change` to a record whose
/// current role is `target`.
pub fn may_change(signer: Option<Role>, target: Option<Role>, change: Change) -> bool {
    match signer {
        Some(Role::Owner) => true,
        Some(Role::Admin) => {
            target.is_none_or(admin_may_touch)
                && match change {
                    Change::Grant(r) => admin_may_touch(r),
                    Change::Revoke => true,
                }
        }
        Some(Role::Distributor | Role::Consumer | Role::Unspecified) | None => false,
    }
}

/// Whether `change` to a record holding `target` would remove the last
/// owner, given the cid's owner count.
pub fn removes_last_owner(target: Option<Role>, change: Change, owners: u64) -> bool {
    target == Some(Role::Owner) && change != Change::Grant(Role::Owner) && owners <= 1
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROLES: [Role; 4] = [Role::Owner, Role::Admin, Role::Distributor, Role::Consumer];

    #[test]
    fn the_table() {
        for target in ROLES.iter().copied().map(Some).chain([None]) {
            for new in ROLES {
                assert!(may_change(Some(Role::Owner), target, Change::Grant(new)));
                let admin_ok = target.is_none_or(admin_may_touch) && admin_may_touch(new);
                assert_eq!(
                    may_change(Some(Role::Admin), target, Change::Grant(new)),
                    admin_ok
                );
                for weak in [Some(Role::Distributor), Some(Role::Consumer), None] {
                    assert!(!may_change(weak, target, Change::Grant(new)));
                    assert!(!may_change(weak, target, Change::Revoke));
                }
            }
        }
        assert!(may_change(
            Some(Role::Admin),
            Some(Role::Consumer),
            Change::Revoke
        ));
        assert!(!may_change(
            Some(Role::Admin),
            Some(Role::Admin),
            Change::Revoke
        ));
        assert!(!may_change(
            Some(Role::Admin),
            Some(Role::Owner),
            Change::Revoke
        ));
        assert!(removes_last_owner(Some(Role::Owner), Change::Revoke, 1));
        assert!(removes_last_owner(
            Some(Role::Owner),
            Change::Grant(Role::Admin),
            1
        ));
        assert!(!removes_last_owner(
            Some(Role::Owner),
            Change::Grant(Role::Owner),
            1
        ));
        assert!(!removes_last_owner(Some(Role::Owner), Change::Revoke, 2));
        assert!(!removes_last_owner(Some(Role::Admin), Change::Revoke, 1));
    }
}

//! `UpdateValidatorEndpoints { address, client_endpoint }`: the operator of a
//! validator record that is ACTIVE, CANDIDATE or UNBONDING replaces the
//! endpoints it publishes. Both fields are the new values: `address` is
//! required, an empty `client_endpoint` withdraws the published one.
//!
//! Nothing else in state derives from them: the peer allow-list and peer
//! fetches read the records of the latest committed state, so a new
//! `address` is in force on every node from the next commit.

use crate::keyspaces::params::Params;
use crate::keyspaces::validators::endpoint::check_endpoints;
use crate::keyspaces::{Event, TxContext};
use crate::proto::governance as pb;
use crate::store::StateWrite;
use crate::tx::TxError;

/// The signer's new peer address and client endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateValidatorEndpoints {
    /// host:port of the peer gRPC service.
    pub address: String,
    /// host:port of the public client API; empty publishes none.
    pub client_endpoint: String,
}

impl From<pb::UpdateValidatorEndpoints> for UpdateValidatorEndpoints {
    fn from(p: pb::UpdateValidatorEndpoints) -> Self {
        UpdateValidatorEndpoints {
            address: p.address,
            client_endpoint: p.client_endpoint,
        }
    }
}

impl From<UpdateValidatorEndpoints> for pb::UpdateValidatorEndpoints {
    fn from(u: UpdateValidatorEndpoints) -> Self {
        pb::UpdateValidatorEndpoints {
            address: u.address,
            client_endpoint: u.client_endpoint,
        }
    }
}

impl UpdateValidatorEndpoints {
    /// Both endpoints `host:port` within `max_address_bytes`; `address`
    /// not empty.
    ///
    /// # Errors
    /// `InvalidArgument`.
    pub fn check_stateless(&self, params: &Params) -> Result<(), TxError> {
        check_endpoints(
            &self.address,
            &self.client_endpoint,
            params.governance.max_address_bytes,
        )
    }

    /// # Errors
    /// `NotOperator` (`NOT_VALIDATOR_OPERATOR`) when the signer has no
    /// record, or a REMOVED one.
    pub fn execute<S: StateWrite>(
        &self,
        state: &mut S,
        ctx: &mut TxContext,
    ) -> Result<(), TxError> {
        let op = ctx.signer;
        super::edit_own_record(state, &op, |keys| {
            keys.address.clone_from(&self.address);
            keys.client_endpoint.clone_from(&self.client_endpoint);
            Ok(())
        })?;
        ctx.emit(
            Event::new("validator.endpoints_updated")
                .indexed("operator", hex::encode(op))
                .plain("address", self.address.clone())
                .plain("client_endpoint", self.client_endpoint.clone()),
        );
        Ok(())
    }
}

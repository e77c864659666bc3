//! The `validators/` keyspace. This foundation stores the genesis validators
//! (`ACTIVE`), each named by its operator key, with its consensus key,
//! X25519 key and peer address; elections come with the governance keyspaces.

mod keys;
mod state;

pub use keys::{validator_key, validators_prefix};
pub use state::{ValidatorsRead, ValidatorsWrite};

use serde::{Deserialize, Serialize};

use crate::proto::genesis as pb;

/// `ValidatorRecord.status` of an active validator.
pub const STATUS_ACTIVE: u32 = 1;

/// A validator as genesis names it (hex fields in JSON).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenesisValidator {
    /// ed25519 operator key, hex.
    pub operator_key: String,
    /// CometBFT ed25519 consensus key, hex.
    pub consensus_key: String,
    /// X25519 key, hex.
    pub x25519_key: String,
    /// host:port of the peer gRPC service.
    pub address: String,
    pub power: u64,
    #[serde(default)]
    pub moniker: String,
}

/// Whether a Diffie-Hellman with `public` yields a contributory secret.
/// Every clamped scalar is a multiple of the cofactor, so any fixed secret
/// maps all low-order points to zero.
fn x25519_contributory(public: &[u8; 32]) -> bool {
    let probe = x25519_dalek::StaticSecret::from([0x5a; 32]);
    probe
        .diffie_hellman(&x25519_dalek::PublicKey::from(*public))
        .was_contributory()
}

fn key32(field: &str, hex_str: &str) -> Result<[u8; 32], String> {
    let bytes = hex::decode(hex_str).map_err(|e| format!("{field} {hex_str:?}: {e}"))?;
    bytes
        .as_slice()
        .try_into()
        .map_err(|_| format!("{field} {hex_str:?}: not 32 bytes"))
}

impl GenesisValidator {
    /// Checks the keys and returns the wire record.
    pub fn to_record(&self) -> Result<([u8; 32], pb::ValidatorRecord), String> {
        let (operator, _) = crate::tx::identity_key(&key32("operator_key", &self.operator_key)?)
            .map_err(|e| e.to_string())?;
        let consensus = key32("consensus_key", &self.consensus_key)?;
        crate::tx::identity_key(&consensus)
            .map_err(|e| format!("consensus_key {}: {e}", self.consensus_key))?;
        let x25519 = key32("x25519_key", &self.x25519_key)?;
        if !x25519_contributory(&x25519) {
            return Err(format!(
                "x25519_key {} is a low-order point",
                self.x25519_key
            ));
        }
        if self.power == 0 {
            return Err(format!("validator {} has power 0", self.operator_key));
        }
        let record = pb::ValidatorRecord {
            validator: Some(pb::GenesisValidator {
                operator_key: operator.to_vec(),
                consensus_key: consensus.to_vec(),
                x25519_key: x25519.to_vec(),
                address: self.address.clone(),
                power: self.power,
                moniker: self.moniker.clone(),
            }),
            status: STATUS_ACTIVE,
            admitted_height: 0,
        };
        Ok((operator, record))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> GenesisValidator {
        let op = ed25519_dalek::SigningKey::from_bytes(&[1; 32])
            .verifying_key()
            .to_bytes();
        let cons = ed25519_dalek::SigningKey::from_bytes(&[2; 32])
            .verifying_key()
            .to_bytes();
        let x = x25519_dalek::PublicKey::from(&x25519_dalek::StaticSecret::from([3; 32]));
        GenesisValidator {
            operator_key: hex::encode(op),
            consensus_key: hex::encode(cons),
            x25519_key: hex::encode(x.as_bytes()),
            address: "127.0.0.1:26600".into(),
            power: 10,
            moniker: "n".into(),
        }
    }

    #[test]
    fn genesis_validator_keys_are_checked() {
        assert!(valid().to_record().is_ok());
        let mut v = valid();
        v.x25519_key = hex::encode([0u8; 32]);
        assert!(v.to_record().unwrap_err().contains("low-order"));
        let mut v = valid();
        v.x25519_key = hex::encode([0u8; 31]);
        assert!(v.to_record().is_err());
        let mut v = valid();
        let mut identity = [0u8; 32];
        identity[0] = 1;
        v.consensus_key = hex::encode(identity);
        assert!(v.to_record().is_err(), "a weak consensus key is refused");
        let mut v = valid();
        v.power = 0;
        assert!(v.to_record().is_err());
    }
}

//! A validator's published endpoints: the peer `address` (other validators
//! dial it; the peer allow-list holds its IPs) and the public
//! `client_endpoint` (clients find the node's tx and query API there). Both
//! are `host:port` within `max_address_bytes`; `address` is required, an
//! empty `client_endpoint` publishes none.

use crate::tx::TxError;

/// `host:port` (an IPv6 host in brackets), the port a number 1..=65535 and
/// the host printable ASCII without spaces: it is dialled as it stands.
fn check_host_port(field: &str, value: &str) -> Result<(), TxError> {
    let bad = |why: &str| TxError::InvalidArgument(format!("{field} {value:?}: {why}"));
    let (host, port) = value.rsplit_once(':').ok_or_else(|| bad("not host:port"))?;
    match port.parse::<u16>() {
        Ok(p) if p > 0 => {}
        _ => return Err(bad("the port is not 1..=65535")),
    }
    if host.is_empty() || !host.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad("the host is empty or not printable ASCII"));
    }
    Ok(())
}

/// A required endpoint: 1..=`max` bytes of `host:port`.
///
/// # Errors
/// `InvalidArgument`, naming the field and the value.
pub(crate) fn check_endpoint(field: &str, value: &str, max: u32) -> Result<(), TxError> {
    if value.is_empty() || value.len() > max as usize {
        return Err(TxError::InvalidArgument(format!(
            "{field} is {} bytes; allowed 1..={max}",
            value.len()
        )));
    }
    check_host_port(field, value)
}

/// An optional endpoint: empty, or as [`check_endpoint`].
pub(crate) fn check_optional_endpoint(field: &str, value: &str, max: u32) -> Result<(), TxError> {
    if value.is_empty() {
        return Ok(());
    }
    check_endpoint(field, value, max)
}

/// The pair every validator record carries: a required peer `address` and
/// an optional `client_endpoint`.
pub(crate) fn check_endpoints(
    address: &str,
    client_endpoint: &str,
    max: u32,
) -> Result<(), TxError> {
    check_endpoint("address", address, max)?;
    check_optional_endpoint("client_endpoint", client_endpoint, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_host_port_within_the_cap() {
        for ok in ["127.0.0.1:9090", "[::1]:1", "node.example:65535"] {
            assert!(check_endpoints(ok, ok, 64).is_ok(), "{ok}");
        }
        assert!(check_endpoints("127.0.0.1:9092", "", 64).is_ok());
        for bad in [
            "",
            "127.0.0.1",
            "127.0.0.1:0",
            "127.0.0.1:65536",
            ":9090",
            "my host:9090",
            "h\u{e9}:1",
        ] {
            assert!(check_endpoint("address", bad, 64).is_err(), "{bad:?}");
        }
        for bad in ["127.0.0.1", "x:0", "a b:1"] {
            assert!(check_endpoints("127.0.0.1:1", bad, 64).is_err(), "{bad:?}");
        }
        let long = format!("{}:1", "h".repeat(64));
        assert!(check_endpoint("address", &long, 64).is_err());
        assert!(check_optional_endpoint("client_endpoint", &long, 64).is_err());
        assert!(check_endpoint("address", &long, 66).is_ok());
    }
}

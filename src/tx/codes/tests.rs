//! The codes stay distinct and the earliest keep their values.

use super::*;

#[test]
fn codes_are_distinct_and_stable() {
    let mut seen = std::collections::BTreeSet::new();
    for c in Code::ALL {
        assert!(seen.insert(c.value()), "duplicate code {}", c.value());
    }
    assert_eq!(Code::Signature.value(), 3);
    assert_eq!(Code::Nonce.value(), 5);
    assert_eq!(Code::TxTooLarge.value(), 6);
}

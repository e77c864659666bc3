//! Territory codes: the 249 officially assigned ISO 3166-1 alpha-2 codes,
//! plus `XK` (Kosovo: user-assigned in ISO 3166-1, but listed by DDEX's
//! allowed-value sets and used by every distributor), sorted. A deal's
//! `Worldwide` expands to all of them. The index of a code in this list is
//! its bit in a [`TerritorySet`] stored on chain, so the list never changes
//! on a running chain.

/// The codes, sorted.
pub const CODES: [&str; 250] = [
    "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX", "AZ",
    "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR", "BS",
    "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM", "CN",
    "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC", "EE",
    "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE", "GF",
    "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK", "HM",
    "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE", "JM",
    "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB", "LC",
    "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH", "MK",
    "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ", "NA",
    "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF", "PG",
    "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU", "RW",
    "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR", "SS",
    "ST", "SV", "SX", "SY", "SZ", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM", "TN", "TO",
    "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE", "VG", "VI",
    "VN", "VU", "WF", "WS", "XK", "YE", "YT", "ZA", "ZM", "ZW",
];

/// `Worldwide` in DDEX TerritoryCode.
pub const WORLDWIDE: &str = "Worldwide";

/// Whether `code` is a listed code (upper case; `Worldwide` is not a code).
pub fn is_territory(code: &str) -> bool {
    index_of(code).is_some()
}

/// The position of `code` in [`CODES`].
pub fn index_of(code: &str) -> Option<usize> {
    CODES.binary_search(&code).ok()
}

/// A set of territories: bit `i` is `CODES[i]`. 32 bytes on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TerritorySet([u64; 4]);

impl TerritorySet {
    /// Every code (`Worldwide`).
    pub fn all() -> Self {
        let mut s = TerritorySet::default();
        for i in 0..CODES.len() {
            s.insert(i);
        }
        s
    }

    pub fn insert(&mut self, i: usize) {
        if let Some(w) = self.0.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }

    pub fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    pub fn remove_all(&mut self, other: &TerritorySet) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a &= !b;
        }
    }

    pub fn intersects(&self, other: &TerritorySet) -> bool {
        self.0.iter().zip(other.0).any(|(a, b)| a & b != 0)
    }

    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }

    /// The first code in both sets, for messages.
    pub fn first_common(&self, other: &TerritorySet) -> Option<&'static str> {
        (0..CODES.len())
            .find(|i| self.contains(*i) && other.contains(*i))
            .and_then(|i| CODES.get(i).copied())
    }

    /// 32 bytes, little-endian words.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.0.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// The inverse of [`TerritorySet::to_bytes`]; any other length is `None`.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        if b.len() != 32 {
            return None;
        }
        let mut s = TerritorySet::default();
        for (w, chunk) in s.0.iter_mut().zip(b.chunks_exact(8)) {
            let mut a = [0u8; 8];
            a.copy_from_slice(chunk);
            *w = u64::from_le_bytes(a);
        }
        Some(s)
    }

    /// Whether `code` is in the set.
    pub fn has_code(&self, code: &str) -> bool {
        index_of(code).is_some_and(|i| self.contains(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_sorted_unique_and_well_formed() {
        assert!(CODES.windows(2).all(|w| w[0] < w[1]));
        assert!(CODES
            .iter()
            .all(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_uppercase())));
        for c in ["GB", "US", "DE", "FR", "JP", "ZW", "AD", "XK"] {
            assert!(is_territory(c), "{c}");
        }
        for c in ["gb", "UK", "XX", "EU", "", "USA", "WW", "Worldwide"] {
            assert!(!is_territory(c), "{c}");
        }
    }
}

#[cfg(test)]
mod set_tests {
    use super::*;

    #[test]
    fn sets_round_trip_and_intersect() {
        let all = TerritorySet::all();
        assert!(CODES.iter().all(|c| all.has_code(c)));
        let mut fr = TerritorySet::default();
        fr.insert(index_of("FR").unwrap());
        assert_eq!(TerritorySet::from_bytes(&fr.to_bytes()), Some(fr));
        assert!(fr.intersects(&all));
        let mut rest = all;
        rest.remove_all(&fr);
        assert!(!rest.has_code("FR") && rest.has_code("GB"));
        assert!(!rest.intersects(&fr));
        assert_eq!(all.first_common(&fr), Some("FR"));
        assert!(TerritorySet::from_bytes(&[0; 31]).is_none());
    }
}

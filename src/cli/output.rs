//! Printing results as text or JSON. JSON keeps every number raw; text
//! shows times as RFC 3339 and sizes and durations in human units, chosen
//! by the field's name ([`unit_of`]) or by the caller for names whose unit
//! differs between answers ([`Output::print_as`]).

use serde_json::Value;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Text,
    Json,
}

/// What a number means, for text output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A point in time: Unix nanoseconds, milliseconds or seconds.
    UnixNanos,
    UnixMillis,
    UnixSecs,
    /// A length of time in milliseconds.
    Millis,
    /// A size in bytes.
    Bytes,
}

impl Output {
    /// Prints a JSON object, or its fields as `key: value` lines.
    pub fn print(self, v: &Value) {
        self.print_as(v, &[]);
    }

    /// As [`Output::print`], with the units of fields whose name alone does
    /// not say (`created_at` is nanoseconds in one answer, seconds in
    /// another).
    pub fn print_as(self, v: &Value, units: &[(&str, Unit)]) {
        match self {
            Output::Json => println!("{}", serde_json::to_string_pretty(v).unwrap_or_default()),
            Output::Text => print!("{}", text(v, units)),
        }
    }
}

/// `v` as indented `key: value` lines.
pub fn text(v: &Value, units: &[(&str, Unit)]) -> String {
    let mut out = String::new();
    write_text(&mut out, v, 0, None, units);
    out
}

fn write_text(
    out: &mut String,
    v: &Value,
    indent: usize,
    key: Option<&str>,
    units: &[(&str, Unit)],
) {
    let pad = " ".repeat(indent);
    let nested = |x: &Value| matches!(x, Value::Object(_) | Value::Array(_));
    match v {
        Value::Object(m) => {
            for (k, val) in m {
                if nested(val) {
                    out.push_str(&format!("{pad}{k}:\n"));
                    write_text(out, val, indent + 2, Some(k), units);
                } else {
                    out.push_str(&format!("{pad}{k}: {}\n", scalar(val, Some(k), units)));
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                if nested(item) {
                    out.push_str(&format!("{pad}-\n"));
                    write_text(out, item, indent + 2, key, units);
                } else {
                    out.push_str(&format!("{pad}- {}\n", scalar(item, key, units)));
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other, key, units))),
    }
}

fn scalar(v: &Value, key: Option<&str>, units: &[(&str, Unit)]) -> String {
    let unit = key.and_then(|k| {
        units
            .iter()
            .find(|(name, _)| *name == k)
            .map(|(_, u)| *u)
            .or_else(|| unit_of(k))
    });
    match (v, unit) {
        (Value::Number(n), Some(u)) => match n.as_i64() {
            Some(x) => human(x, u),
            None => n.to_string(),
        },
        (Value::String(s), _) => s.clone(),
        (other, _) => other.to_string(),
    }
}

/// The unit a field's name says: `*_bytes`, `*_size` are sizes;
/// `*_at_ms`, `updated_ms`, `last_sync_ms` are times, and so is `timestamp`
/// (a block time in Unix seconds in every answer); `*_time_ns` a time;
/// other `*_ms` durations. `None`: print as it is.
pub fn unit_of(key: &str) -> Option<Unit> {
    if key == "timestamp" {
        Some(Unit::UnixSecs)
    } else if key.ends_with("_bytes") || key.ends_with("_size") {
        Some(Unit::Bytes)
    } else if key.ends_with("_at_ms") || key == "updated_ms" || key == "last_sync_ms" {
        Some(Unit::UnixMillis)
    } else if key.ends_with("_time_ns") {
        Some(Unit::UnixNanos)
    } else if key.ends_with("_ms") {
        Some(Unit::Millis)
    } else {
        None
    }
}

/// `x` in `unit` for a person: RFC 3339 (UTC) for times (0: `none`),
/// binary units for sizes, `1h 2m 3.5s` for durations.
pub fn human(x: i64, unit: Unit) -> String {
    let time = |secs: i64, nanos: i64| {
        if x == 0 {
            return "none".to_string();
        }
        u32::try_from(nanos)
            .ok()
            .and_then(|n| tendermint::Time::from_unix_timestamp(secs, n).ok())
            .map(|t| t.to_rfc3339())
            .unwrap_or_else(|| x.to_string())
    };
    match unit {
        Unit::UnixNanos => time(x.div_euclid(1_000_000_000), x.rem_euclid(1_000_000_000)),
        Unit::UnixMillis => time(x.div_euclid(1_000), x.rem_euclid(1_000) * 1_000_000),
        Unit::UnixSecs => time(x, 0),
        Unit::Millis => duration(x),
        Unit::Bytes => bytes(x),
    }
}

fn bytes(x: i64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if x.unsigned_abs() < 1024 {
        return format!("{x} B");
    }
    let mut v = x as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v.abs() < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    format!("{v:.1} {unit}")
}

fn duration(ms: i64) -> String {
    if ms.unsigned_abs() < 1_000 {
        return format!("{ms}ms");
    }
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    let (h, m, s) = (ms / 3_600_000, ms / 60_000 % 60, ms % 60_000);
    let secs = format!("{}.{:03}", s / 1_000, s % 1_000);
    let secs = secs.trim_end_matches('0').trim_end_matches('.');
    match (h, m) {
        (0, 0) => format!("{sign}{secs}s"),
        (0, _) => format!("{sign}{m}m {secs}s"),
        _ => format!("{sign}{h}h {m}m {secs}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn times_print_as_rfc3339_and_zero_as_none() {
        assert_eq!(
            human(1_700_000_000_123, Unit::UnixMillis),
            "2023-11-14T22:13:20.123Z"
        );
        assert_eq!(
            human(1_700_000_000_000_000_001, Unit::UnixNanos),
            "2023-11-14T22:13:20.000000001Z"
        );
        assert_eq!(human(1_700_000_000, Unit::UnixSecs), "2023-11-14T22:13:20Z");
        assert_eq!(human(0, Unit::UnixSecs), "none");
    }

    #[test]
    fn sizes_and_durations_print_in_human_units() {
        assert_eq!(human(512, Unit::Bytes), "512 B");
        assert_eq!(human(4 << 20, Unit::Bytes), "4.0 MiB");
        assert_eq!(human(1_536, Unit::Bytes), "1.5 KiB");
        assert_eq!(human(3 << 40, Unit::Bytes), "3.0 TiB");
        assert_eq!(human(250, Unit::Millis), "250ms");
        assert_eq!(human(1_500, Unit::Millis), "1.5s");
        assert_eq!(human(3_723_004, Unit::Millis), "1h 2m 3.004s");
        assert_eq!(human(120_000, Unit::Millis), "2m 0s");
    }

    #[test]
    fn text_follows_the_names_and_the_callers_units_and_json_stays_raw() {
        let v = json!({"stored_bytes": 2048, "created_at": 1_700_000_000, "nonce": 7,
            "peers": [{"last_sync_ms": 1_700_000_000_000u64}], "max_bytes": "4194304"});
        let t = text(&v, &[("created_at", Unit::UnixSecs)]);
        assert!(t.contains("stored_bytes: 2.0 KiB\n"), "{t}");
        assert!(t.contains("created_at: 2023-11-14T22:13:20Z\n"), "{t}");
        assert!(t.contains("nonce: 7\n"), "{t}");
        assert!(
            t.contains("    last_sync_ms: 2023-11-14T22:13:20Z\n"),
            "{t}"
        );
        assert!(
            t.contains("max_bytes: 4194304\n"),
            "strings stay as they are: {t}"
        );
        let raw = text(&v, &[]);
        assert!(
            raw.contains("created_at: 1700000000\n"),
            "no unit, no change: {raw}"
        );
    }
}

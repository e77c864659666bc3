//! Stave's canonical JSON: the one text form of a script's input and result.
//!
//! It is RFC 8785 (JCS) restricted to integers: object members sorted by
//! their names' UTF-16 code units, no whitespace, strings escaped as
//! ECMAScript's `JSON.stringify` does. A number must be an integer of at
//! most 2^53 − 1 in magnitude, so no float ever reaches a script or a
//! result hash; larger integers travel as strings.

use serde_json::Value;

/// The largest integer a script sees as a number: 2^53 − 1.
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// Deepest nesting accepted (serde_json's own parse limit is 128).
const MAX_DEPTH: usize = 128;

/// Why a value has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    #[error("{0} is not an integer: canonical JSON carries no floats")]
    Float(String),
    #[error("{0} is beyond 2^53 - 1 in magnitude: pass it as a string")]
    Unsafe(String),
    #[error("nesting deeper than {MAX_DEPTH}")]
    TooDeep,
    #[error("not JSON: {0}")]
    Parse(String),
}

/// The canonical text of `value`.
pub fn canonical(value: &Value) -> Result<String, JsonError> {
    let mut out = String::new();
    write(value, &mut out, 0)?;
    Ok(out)
}

/// Parses JSON text and returns its canonical form.
pub fn canonicalize(text: &str) -> Result<String, JsonError> {
    canonical(&parse(text)?)
}

/// Parses JSON text (serde_json's own limits: nesting to 128).
pub fn parse(text: &str) -> Result<Value, JsonError> {
    serde_json::from_str(text).map_err(|e| JsonError::Parse(e.to_string()))
}

fn write(value: &Value, out: &mut String, depth: usize) -> Result<(), JsonError> {
    if depth > MAX_DEPTH {
        return Err(JsonError::TooDeep);
    }
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&integer(n)?),
        Value::String(s) => write_str(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out, depth + 1)?;
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push('{');
            for (i, (name, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(name, out);
                out.push(':');
                write(item, out, depth + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn integer(n: &serde_json::Number) -> Result<String, JsonError> {
    let magnitude = match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u,
        (None, Some(i)) => i.unsigned_abs(),
        (None, None) => return Err(JsonError::Float(n.to_string())),
    };
    if magnitude > MAX_SAFE_INTEGER {
        return Err(JsonError::Unsafe(n.to_string()));
    }
    Ok(n.to_string())
}

/// ECMAScript's JSON string form: `"` and `\` escaped, the C0 controls as
/// `\b \t \n \f \r` or `\u00xx` (lowercase hex), everything else as is.
fn write_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// RFC 8785 §3.2.3: members sort by UTF-16 code units, so the emoji
    /// (D83D DE00) sorts before U+FB33 although its UTF-8 bytes sort after.
    #[test]
    fn members_sort_by_utf16_code_units_as_in_rfc_8785() {
        let text = r#"{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh",
            "1": "One", "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control",
            "\u00f6": "Latin Small Letter O With Diaeresis"}"#;
        let want = "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\
            \"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\
            \"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}";
        assert_eq!(canonicalize(text).unwrap(), want);
    }

    /// RFC 8785 §3.2.2's literals and string (its numbers are floats,
    /// which canonical JSON refuses: see below).
    #[test]
    fn literals_and_strings_follow_rfc_8785() {
        let text = r#"{"literals": [null, true, false],
            "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"}"#;
        let want = "{\"literals\":[null,true,false],\"string\":\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}";
        assert_eq!(canonicalize(text).unwrap(), want);
    }

    #[test]
    fn floats_and_unsafe_integers_are_refused() {
        for f in [
            "333333333.33333329",
            "1E30",
            "4.50",
            "2e-3",
            "0.000000000000000000000000001",
        ] {
            let err = canonicalize(&format!("[{f}]")).unwrap_err();
            assert!(matches!(err, JsonError::Float(_)), "{f}: {err}");
        }
        assert_eq!(
            canonicalize("[9007199254740991,-9007199254740991]").unwrap(),
            "[9007199254740991,-9007199254740991]"
        );
        for n in [
            "9007199254740992",
            "-9007199254740992",
            "18446744073709551615",
        ] {
            assert!(
                matches!(canonicalize(n).unwrap_err(), JsonError::Unsafe(_)),
                "{n}"
            );
        }
    }

    #[test]
    fn nesting_is_bounded_and_output_has_no_whitespace() {
        assert_eq!(
            canonical(&json!({"b": [1, {"d": 2, "c": 3}], "a": ""})).unwrap(),
            r#"{"a":"","b":[1,{"c":3,"d":2}]}"#
        );
        let mut v = json!(0);
        for _ in 0..200 {
            v = json!([v]);
        }
        assert_eq!(canonical(&v).unwrap_err(), JsonError::TooDeep);
    }
}

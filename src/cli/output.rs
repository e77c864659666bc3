//! Printing results as text or JSON.

use serde_json::Value;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    Text,
    Json,
}

impl Output {
    /// Prints a JSON object, or its fields as `key: value` lines.
    pub fn print(self, v: &Value) {
        match self {
            Output::Json => println!("{}", serde_json::to_string_pretty(v).unwrap_or_default()),
            Output::Text => print_text(v, 0),
        }
    }
}

fn print_text(v: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, val) in m {
                match val {
                    Value::Object(_) | Value::Array(_) => {
                        println!("{pad}{k}:");
                        print_text(val, indent + 2);
                    }
                    _ => println!("{pad}{k}: {}", scalar(val)),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(_) | Value::Array(_) => {
                        println!("{pad}-");
                        print_text(item, indent + 2);
                    }
                    _ => println!("{pad}- {}", scalar(item)),
                }
            }
        }
        other => println!("{pad}{}", scalar(other)),
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

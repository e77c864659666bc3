//! The importer's walk context: what was skipped and dropped, and the small
//! readers every element shares (text, variants, numbers, required
//! children).

use std::collections::BTreeSet;

use super::parse::Node;
use super::ImportOptions;
use crate::ddex::{invalid, DdexError};
use crate::proto::ddex as pb;

/// The walk over one document.
pub(super) struct Cx<'o> {
    pub opts: &'o ImportOptions,
    /// Paths of elements outside the subset.
    pub skipped: BTreeSet<String>,
    /// Things accepted but dropped by rule, in document order.
    pub dropped: Vec<String>,
}

/// The path of `child` under `path`.
pub(super) fn sub(path: &str, child: &Node) -> String {
    format!("{path}/{}", child.name)
}

/// The first child named `name`, or a refusal naming its path.
pub(super) fn req<'n>(n: &'n Node, path: &str, name: &str) -> Result<&'n Node, DdexError> {
    n.child(name)
        .ok_or_else(|| invalid(format!("missing required element {path}/{name}")))
}

/// Prefixes an `Invalid` refusal's message with the element path.
pub(super) fn at(path: &str, e: DdexError) -> DdexError {
    match e {
        DdexError::Invalid(m) => invalid(format!("{path}: {m}")),
        other => other,
    }
}

fn shown(s: &str) -> String {
    s.chars().take(64).collect()
}

impl<'o> Cx<'o> {
    /// A fresh walk.
    pub fn new(opts: &'o ImportOptions) -> Self {
        Cx {
            opts,
            skipped: BTreeSet::new(),
            dropped: Vec::new(),
        }
    }

    /// Records `child` of the element at `path` as outside the subset.
    pub fn skip(&mut self, path: &str, child: &Node) {
        self.skipped.insert(sub(path, child));
    }

    /// Records something accepted but dropped by rule.
    pub fn drop(&mut self, what: String) {
        self.dropped.push(what);
    }

    /// The text of a leaf element; any child elements are skipped.
    pub fn leaf(&mut self, path: &str, n: &Node) -> String {
        for c in &n.children {
            self.skip(path, c);
        }
        n.text.clone()
    }

    /// A leaf's text with its variant attributes.
    pub fn text(&mut self, path: &str, n: &Node) -> pb::Text {
        pb::Text {
            value: self.leaf(path, n),
            variant: self.variant(path, n),
        }
    }

    /// A leaf's text as a number; a value a `u32` cannot hold is dropped
    /// (listed) and read as 0.
    pub fn num(&mut self, path: &str, n: &Node) -> u32 {
        let text = self.leaf(path, n);
        self.number(path, &text)
    }

    fn number(&mut self, what: &str, text: &str) -> u32 {
        match text.parse::<u32>() {
            Ok(v) => v,
            Err(_) => {
                self.drop(format!("{what} {:?} (not a number)", shown(text)));
                0
            }
        }
    }

    /// The `SequenceNumber` attribute, 0 when absent.
    pub fn seq_attr(&mut self, path: &str, n: &Node) -> u32 {
        match n.attr("SequenceNumber") {
            Some(v) => self.number(&format!("{path}@SequenceNumber"), v),
            None => 0,
        }
    }

    /// LanguageAndScriptCode, ApplicableTerritoryCode and IsDefault, or
    /// `None` when the element carries none of them.
    pub fn variant(&mut self, path: &str, n: &Node) -> Option<pb::Variant> {
        let lang = n.attr("LanguageAndScriptCode");
        let terr = n.attr("ApplicableTerritoryCode");
        let def = n.attr("IsDefault");
        if lang.is_none() && terr.is_none() && def.is_none() {
            return None;
        }
        let is_default = match def {
            None => 0,
            Some("true" | "1") => 1,
            Some("false" | "0") => 2,
            Some(other) => {
                self.drop(format!(
                    "{path}@IsDefault {:?} (not a boolean)",
                    shown(other)
                ));
                0
            }
        };
        let v = pb::Variant {
            language_and_script_code: lang.unwrap_or_default().to_string(),
            applicable_territory_code: terr.unwrap_or_default().to_string(),
            is_default,
        };
        // attributes that carried nothing are no variant (the canonical form)
        (v != pb::Variant::default()).then_some(v)
    }

    /// Sets a singular string once; a repeat is dropped (listed).
    pub fn once(&mut self, slot: &mut String, seen: &mut bool, path: &str, n: &Node) {
        let v = self.leaf(path, n);
        if *seen {
            self.drop(format!(
                "{path} {:?} (a repeat; the first is kept)",
                shown(&v)
            ));
        } else {
            *slot = v;
            *seen = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(attrs: &[(&str, &str)], text: &str) -> Node {
        Node {
            name: "X".into(),
            attrs: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            children: Vec::new(),
            text: text.into(),
        }
    }

    #[test]
    fn variants_and_numbers() {
        let opts = ImportOptions::default();
        let mut cx = Cx::new(&opts);
        assert_eq!(cx.variant("/X", &node(&[], "")), None);
        let v = cx
            .variant(
                "/X",
                &node(
                    &[("IsDefault", "true"), ("LanguageAndScriptCode", "ja")],
                    "",
                ),
            )
            .unwrap();
        assert_eq!(
            (v.is_default, v.language_and_script_code.as_str()),
            (1, "ja")
        );
        let v = cx
            .variant("/X", &node(&[("IsDefault", "false")], ""))
            .unwrap();
        assert_eq!(v.is_default, 2);
        // an IsDefault that is not a boolean, alone, leaves no variant
        assert_eq!(cx.variant("/X", &node(&[("IsDefault", "maybe")], "")), None);
        assert_eq!(cx.num("/X", &node(&[], "12")), 12);
        assert_eq!(cx.num("/X", &node(&[], "-1")), 0);
        assert_eq!(cx.dropped.len(), 2);
        let e = req(&node(&[], ""), "/P", "Y").unwrap_err();
        assert!(e.to_string().contains("/P/Y"));
    }
}

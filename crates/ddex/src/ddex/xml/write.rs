//! The exporter: deterministic ERN 4.3 XML of a [`pb::NewReleaseMessage`],
//! elements in ERN sequence order, empty strings and zeros omitted (each
//! entry of a repeated field is always written, so counts survive), each
//! cid as a `stave:cid` ProprietaryId.

use super::{CID_NAMESPACE, ERN_NAMESPACE};
use crate::proto::ddex as pb;

mod body;

/// Deterministic ERN 4.3 XML of `msg`.
///
/// `import(export(m))` gives `m` back for any message the importer
/// produced. Derived integers (`*_ms`, `*_secs`) are not written: the
/// importer derives them again from the texts. `ern_version` is not
/// written either: the output is always ERN 4.3.
pub fn export(msg: &pb::NewReleaseMessage) -> String {
    let mut w = W::default();
    w.out
        .push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let mut attrs = vec![("xmlns:ern", ERN_NAMESPACE.to_string())];
    for (k, v) in [
        ("ReleaseProfileVersionId", &msg.release_profile_version_id),
        ("LanguageAndScriptCode", &msg.language_and_script_code),
        ("AvsVersionId", &msg.avs_version_id),
    ] {
        if !v.is_empty() {
            attrs.push((k, v.clone()));
        }
    }
    w.open("ern:NewReleaseMessage", &attrs);
    body::message(&mut w, msg);
    w.close("ern:NewReleaseMessage");
    w.out
}

/// An indenting XML writer.
#[derive(Default)]
pub(super) struct W {
    out: String,
    depth: usize,
}

/// Attributes as (name, value), written in the given order.
type Attrs<'a> = [(&'a str, String)];

impl W {
    fn start_tag(&mut self, name: &str, attrs: &Attrs) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push('<');
        self.out.push_str(name);
        for (k, v) in attrs {
            self.out.push(' ');
            self.out.push_str(k);
            self.out.push_str("=\"");
            escape(&mut self.out, v, true);
            self.out.push('"');
        }
    }

    /// `<name attrs>` on its own line; the content follows, indented.
    pub fn open(&mut self, name: &str, attrs: &Attrs) {
        self.start_tag(name, attrs);
        self.out.push_str(">\n");
        self.depth += 1;
    }

    /// `</name>` on its own line.
    pub fn close(&mut self, name: &str) {
        self.depth = self.depth.saturating_sub(1);
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push_str(">\n");
    }

    /// `<name attrs>text</name>` (or `<name attrs/>` when `text` is empty).
    pub fn leaf(&mut self, name: &str, attrs: &Attrs, text: &str) {
        self.start_tag(name, attrs);
        if text.is_empty() {
            self.out.push_str("/>\n");
            return;
        }
        self.out.push('>');
        escape(&mut self.out, text, false);
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push_str(">\n");
    }

    /// A leaf without attributes, omitted when `text` is empty.
    pub fn opt(&mut self, name: &str, text: &str) {
        if !text.is_empty() {
            self.leaf(name, &[], text);
        }
    }

    /// A numeric leaf, omitted when 0.
    pub fn num(&mut self, name: &str, v: u32) {
        if v != 0 {
            self.leaf(name, &[], &v.to_string());
        }
    }

    /// One leaf per string, empty ones included.
    pub fn each(&mut self, name: &str, values: &[String]) {
        for v in values {
            self.leaf(name, &[], v);
        }
    }

    /// A cid as `<ProprietaryId Namespace="stave:cid">hex</ProprietaryId>`.
    pub fn cid(&mut self, cid: &[u8]) {
        let hex: String = cid.iter().map(|b| format!("{b:02x}")).collect();
        let attrs = [("Namespace", CID_NAMESPACE.to_string())];
        self.leaf("ProprietaryId", &attrs, &hex);
    }
}

/// Escapes the five XML specials; in attributes also TAB, LF and CR, and
/// CR everywhere (so that a re-import's normalisation keeps them).
fn escape(out: &mut String, s: &str, attr: bool) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            '\n' if attr => out.push_str("&#10;"),
            '\t' if attr => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_layout() {
        let mut w = W::default();
        w.open("A", &[("x", "a\"b\n".to_string())]);
        w.leaf("B", &[], "<&>'\r");
        w.leaf("C", &[], "");
        w.num("D", 0);
        w.opt("E", "");
        w.close("A");
        assert_eq!(
            w.out,
            "<A x=\"a&quot;b&#10;\">\n  <B>&lt;&amp;&gt;&apos;&#13;</B>\n  <C/>\n</A>\n"
        );
    }
}

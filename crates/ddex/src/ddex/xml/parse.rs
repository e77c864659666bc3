//! XML text → a small element tree, with the caps and the refusals that do
//! not depend on ERN: no DOCTYPE, no entity other than the five predefined
//! ones and character references, at most `max_depth` nesting levels and
//! `max_elements` elements, one root in the ERN 4.3 namespace.

use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::ResolveResult;
use quick_xml::reader::NsReader;
use quick_xml::XmlVersion;

use super::{ImportOptions, ERN_NAMESPACE};
use crate::ddex::{invalid, DdexError};

/// One element: its name, attributes, child elements and direct text.
#[derive(Debug, Default)]
pub(super) struct Node {
    /// The local name for an unqualified or ERN element, else the QName as
    /// written (so a foreign element never matches an ERN name).
    pub name: String,
    /// Attributes as (QName as written, value), in document order.
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
    /// The direct text content, trimmed of XML whitespace.
    pub text: String,
}

impl Node {
    /// The value of the attribute named `name` (unprefixed), if present.
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first child element named `name`.
    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children.iter().find(|c| c.name == name)
    }
}

fn is_xml_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Trims XML whitespace (space, tab, CR, LF) and nothing else.
pub(super) fn trim_xml(s: &str) -> &str {
    s.trim_matches(is_xml_space)
}

fn malformed(e: impl std::fmt::Display, pos: u64) -> DdexError {
    invalid(format!("malformed XML at byte {pos}: {e}"))
}

/// The text an entity or character reference stands for; anything but the
/// five predefined entities and character references is refused.
fn resolve_ref(r: &BytesRef<'_>) -> Result<char, DdexError> {
    let name: &str = r;
    match name {
        "lt" => return Ok('<'),
        "gt" => return Ok('>'),
        "amp" => return Ok('&'),
        "apos" => return Ok('\''),
        "quot" => return Ok('"'),
        _ => {}
    }
    match r.resolve_char_ref() {
        Ok(Some(c)) => Ok(c),
        Ok(None) => Err(invalid(format!(
            "entity reference &{}; is not allowed: only &lt; &gt; &amp; &apos; &quot; and character references",
            shown(name)
        ))),
        Err(e) => Err(invalid(format!(
            "character reference &{}; is invalid: {e}",
            shown(name)
        ))),
    }
}

fn shown(s: &str) -> String {
    s.chars().take(64).collect()
}

/// The builder's state: the open elements and the finished root.
struct Tree<'o> {
    opts: &'o ImportOptions,
    stack: Vec<Node>,
    root: Option<Node>,
    elements: usize,
}

impl Tree<'_> {
    /// Opens an element (its namespace already resolved).
    fn open(&mut self, ns: Option<String>, e: &BytesStart<'_>) -> Result<(), DdexError> {
        self.elements += 1;
        if self.elements > self.opts.max_elements {
            return Err(invalid(format!(
                "more than {} elements (the importer's cap)",
                self.opts.max_elements
            )));
        }
        if self.stack.len() + 1 > self.opts.max_depth {
            return Err(invalid(format!(
                "elements nest deeper than {} levels (the importer's cap)",
                self.opts.max_depth
            )));
        }
        let local = e.local_name().into_inner().to_string();
        let qname = e.name().0.to_string();
        if self.stack.is_empty() {
            check_root(self.root.is_some(), ns.as_deref(), &local)?;
        }
        let name = match ns.as_deref() {
            None | Some(ERN_NAMESPACE) => local,
            Some(_) => qname,
        };
        let attrs = attributes(e)?;
        self.stack.push(Node {
            name,
            attrs,
            ..Node::default()
        });
        Ok(())
    }

    /// Closes the innermost open element.
    fn close(&mut self) -> Result<(), DdexError> {
        let mut node = self
            .stack
            .pop()
            .ok_or_else(|| invalid("malformed XML: a closing tag with no open element"))?;
        node.text = trim_xml(&node.text).to_string();
        match self.stack.last_mut() {
            Some(parent) => parent.children.push(node),
            None => self.root = Some(node),
        }
        Ok(())
    }

    /// Appends text to the innermost open element (text outside the root
    /// is ignored: it can only be whitespace in well-formed XML).
    fn text(&mut self, s: &str) {
        if let Some(top) = self.stack.last_mut() {
            top.text.push_str(s);
        }
    }
}

fn check_root(seen: bool, ns: Option<&str>, local: &str) -> Result<(), DdexError> {
    if seen {
        return Err(invalid("malformed XML: more than one root element"));
    }
    if local != "NewReleaseMessage" {
        return Err(invalid(format!(
            "root element is {:?}, not NewReleaseMessage",
            shown(local)
        )));
    }
    match ns {
        Some(ERN_NAMESPACE) => Ok(()),
        Some(other) => Err(invalid(format!(
            "namespace {:?} is not ERN 4.3 ({ERN_NAMESPACE}); only ERN 4.3 is accepted",
            shown(other)
        ))),
        None => Err(invalid(format!(
            "NewReleaseMessage has no namespace; expected {ERN_NAMESPACE}"
        ))),
    }
}

fn attributes(e: &BytesStart<'_>) -> Result<Vec<(String, String)>, DdexError> {
    let mut out = Vec::new();
    for a in e.attributes() {
        let a = a.map_err(|err| invalid(format!("malformed XML attribute: {err}")))?;
        let key = a.key.0.to_string();
        let value = a.normalized_value(XmlVersion::Implicit1_0).map_err(|err| {
            invalid(format!(
                "attribute {:?}: {err} (only the five predefined entities and character references are allowed)",
                shown(&key)
            ))
        })?;
        out.push((key, trim_xml(&value).to_string()));
    }
    Ok(out)
}

fn namespace_of(r: &ResolveResult<'_>) -> Result<Option<String>, DdexError> {
    match r {
        ResolveResult::Unbound => Ok(None),
        ResolveResult::Bound(ns) => Ok(Some(ns.0.to_string())),
        ResolveResult::Unknown(p) => Err(invalid(format!(
            "namespace prefix {:?} is not declared",
            shown(p)
        ))),
    }
}

/// Parses `xml` into its root element, enforcing the depth and element
/// caps and refusing DTDs and entities as it reads.
pub(super) fn parse(xml: &str, opts: &ImportOptions) -> Result<Node, DdexError> {
    let mut reader = NsReader::from_str(xml);
    let mut tree = Tree {
        opts,
        stack: Vec::new(),
        root: None,
        elements: 0,
    };
    loop {
        let pos = reader.buffer_position();
        let (res, event) = reader
            .read_resolved_event()
            .map_err(|e| malformed(e, pos))?;
        let ns = match &event {
            Event::Start(_) | Event::Empty(_) => namespace_of(&res)?,
            _ => None,
        };
        match event {
            Event::Start(e) => tree.open(ns, &e)?,
            Event::Empty(e) => {
                tree.open(ns, &e)?;
                tree.close()?;
            }
            Event::End(_) => tree.close()?,
            Event::Text(t) => tree.text(&t.xml10_content()),
            Event::CData(t) => tree.text(&t.xml10_content()),
            Event::GeneralRef(r) => {
                let c = resolve_ref(&r)?;
                tree.text(c.encode_utf8(&mut [0u8; 4]));
            }
            Event::DocType(d) => return Err(doctype(&d)),
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) => {}
            Event::Eof => break,
        }
    }
    if let Some(open) = tree.stack.last() {
        return Err(invalid(format!(
            "malformed XML: the document ends inside <{}>",
            shown(&open.name)
        )));
    }
    tree.root
        .ok_or_else(|| invalid("no root element: expected NewReleaseMessage"))
}

fn doctype(d: &str) -> DdexError {
    if d.contains("<!ENTITY") {
        invalid("DOCTYPE with an <!ENTITY declaration is not allowed (no DTDs, no custom entities)")
    } else {
        invalid("DOCTYPE is not allowed (no DTDs, no custom entities)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> ImportOptions {
        ImportOptions::default()
    }

    const HEAD: &str = r#"<ern:NewReleaseMessage xmlns:ern="http://ddex.net/xml/ern/43">"#;

    #[test]
    fn builds_the_tree_with_text_and_refs() {
        let xml = format!("{HEAD}<A x=\"1 &amp; 2\"> a &lt;&#x42;<!-- c --><![CDATA[<c>]]> </A><B/></ern:NewReleaseMessage>");
        let root = parse(&xml, &opts()).unwrap();
        assert_eq!(root.name, "NewReleaseMessage");
        let a = root.child("A").unwrap();
        assert_eq!(a.text, "a <B<c>");
        assert_eq!(a.attr("x"), Some("1 & 2"));
        assert!(root.child("B").is_some());
    }

    #[test]
    fn refuses_doctype_entities_and_foreign_roots() {
        let e = parse("<!DOCTYPE x [<!ENTITY a \"b\">]><x/>", &opts()).unwrap_err();
        assert!(e.to_string().contains("ENTITY"), "{e}");
        let e = parse(
            &format!("{HEAD}<A>&custom;</A></ern:NewReleaseMessage>"),
            &opts(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("&custom;"), "{e}");
        let e = parse(
            &format!("{HEAD}<A x=\"&custom;\"/></ern:NewReleaseMessage>"),
            &opts(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("custom"), "{e}");
        let e = parse(
            r#"<NewReleaseMessage xmlns="http://ddex.net/xml/ern/431"/>"#,
            &opts(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("ern/431"), "{e}");
        let e = parse("<NewReleaseMessage/>", &opts()).unwrap_err();
        assert!(e.to_string().contains("no namespace"), "{e}");
        let e = parse(r#"<x:Foo xmlns:x="http://ddex.net/xml/ern/43"/>"#, &opts()).unwrap_err();
        assert!(e.to_string().contains("Foo"), "{e}");
    }

    #[test]
    fn default_namespace_root_is_accepted_and_foreign_children_keep_their_qname() {
        let xml = r#"<NewReleaseMessage xmlns="http://ddex.net/xml/ern/43" xmlns:x="urn:x"><x:A/></NewReleaseMessage>"#;
        let root = parse(xml, &opts()).unwrap();
        assert_eq!(root.children.first().map(|c| c.name.as_str()), Some("x:A"));
    }

    #[test]
    fn malformed_documents_are_refused() {
        for bad in [
            format!("{HEAD}<A></B></ern:NewReleaseMessage>"),
            format!("{HEAD}<A>"),
            format!("{HEAD}</ern:NewReleaseMessage><x/>"),
            format!("{HEAD}<A>a & b</A></ern:NewReleaseMessage>"),
            String::new(),
        ] {
            assert!(parse(&bad, &opts()).is_err(), "{bad}");
        }
    }
}

//! Which listed keys a mount can show, and a store's raw listing answer
//! with the others taken out before the client parses it.
//!
//! `object_store` parses a whole listing page into paths and refuses the
//! page when one key has a `.`/`..` segment, an empty segment (`a//b`) or
//! a control character; and a key starting with `/` makes the common prefix
//! `/`, which it parses as the bucket's top itself (a folder that lists
//! itself, walked forever). So one odd but legal key would cost its whole
//! folder. This module looks at the answer first (S3 and GCS
//! `ListBucketResult` XML, Azure `EnumerationResults` XML) and drops the
//! entries a mount cannot show, so the rest of the folder lists; the
//! caller logs and counts them. Pure text in, text out: no I/O, fuzzed.

/// The longest key S3 stores (bytes); a longer one is a forged answer.
pub const MAX_KEY_BYTES: usize = 1024;

/// The longest name a folder entry may have (bytes, as Linux's NAME_MAX).
pub const MAX_NAME_BYTES: usize = 255;

/// Why a listed key cannot be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyProblem {
    /// Longer than [`MAX_KEY_BYTES`].
    TooLong,
    /// A segment is empty (`//`, a leading `/`, or the key is empty).
    EmptySegment,
    /// A segment is `.` or `..`.
    DotSegment,
    /// A control character (a tab, a newline...).
    ControlCharacter,
    /// A segment longer than [`MAX_NAME_BYTES`].
    NameTooLong,
}

impl std::fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            KeyProblem::TooLong => "longer than 1024 bytes",
            KeyProblem::EmptySegment => "an empty segment (// or a leading /)",
            KeyProblem::DotSegment => "a . or .. segment",
            KeyProblem::ControlCharacter => "a control character",
            KeyProblem::NameTooLong => "a name longer than 255 bytes",
        })
    }
}

/// Why `key` (an object's key, or a common prefix with its one trailing
/// `/`) cannot be shown, or `None` when every segment is a good name.
pub fn key_problem(key: &str) -> Option<KeyProblem> {
    if key.len() > MAX_KEY_BYTES {
        return Some(KeyProblem::TooLong);
    }
    let key = key.strip_suffix('/').unwrap_or(key);
    for segment in key.split('/') {
        if segment.is_empty() {
            return Some(KeyProblem::EmptySegment);
        }
        if segment == "." || segment == ".." {
            return Some(KeyProblem::DotSegment);
        }
        if segment.chars().any(|c| c.is_control()) {
            return Some(KeyProblem::ControlCharacter);
        }
        if segment.len() > MAX_NAME_BYTES {
            return Some(KeyProblem::NameTooLong);
        }
    }
    None
}

/// One listed key left out of a listing, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The key as listed (XML entities decoded; control characters kept).
    pub key: String,
    /// Why it is left out.
    pub problem: KeyProblem,
}

/// The dialect of a listing answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// S3 and GCS (`ListBucketResult`: `Contents/Key`, `CommonPrefixes/Prefix`).
    S3,
    /// Azure Blob (`EnumerationResults`: `Blob/Name`, `BlobPrefix/Name`).
    Azure,
}

/// `xml` with every entry whose key has a [`KeyProblem`] taken out, and
/// those entries. `None` when nothing is taken out (the answer is passed
/// on as it came). Text that is not the expected shape is left as it is:
/// the client's own parser then decides.
pub fn filter_listing(xml: &str, dialect: Dialect) -> Option<(String, Vec<Skipped>)> {
    let entries: &[(&str, &str)] = match dialect {
        Dialect::S3 => &[("Contents", "Key"), ("CommonPrefixes", "Prefix")],
        Dialect::Azure => &[("Blob", "Name"), ("BlobPrefix", "Name")],
    };
    let mut skipped = Vec::new();
    let mut text = xml.to_string();
    for (element, field) in entries {
        text = drop_elements(&text, element, field, &mut skipped);
    }
    (!skipped.is_empty()).then_some((text, skipped))
}

/// `xml` without the `<element>` blocks whose `<field>` text is a key
/// with a problem (pushed to `skipped`).
fn drop_elements(xml: &str, element: &str, field: &str, skipped: &mut Vec<Skipped>) -> String {
    let open = format!("<{element}>");
    let close = format!("</{element}>");
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(start) = rest.find(&open) {
        let Some(len) = rest[start..].find(&close) else {
            break;
        };
        let end = start + len + close.len();
        let block = &rest[start..end];
        out.push_str(&rest[..start]);
        match field_text(&block[open.len()..], field)
            .map(|raw| unescape(raw))
            .and_then(|key| key_problem(&key).map(|problem| Skipped { key, problem }))
        {
            Some(skip) => skipped.push(skip),
            None => out.push_str(block),
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The raw text of the first `<field>` directly in `block` (`None` when
/// missing or unclosed).
fn field_text<'a>(block: &'a str, field: &str) -> Option<&'a str> {
    let open = format!("<{field}>");
    let start = block.find(&open)? + open.len();
    let len = block[start..].find(&format!("</{field}>"))?;
    Some(&block[start..start + len])
}

/// XML character data with its entities decoded (`&amp;`, `&#9;`,
/// `&#x1F;`...); an unknown or malformed entity is kept as written.
pub fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut rest = raw;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let decoded = after.find(';').filter(|&n| n <= 10).and_then(|semi| {
            let name = &after[..semi];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => {
                    let number = name.strip_prefix('#')?;
                    let code = match number.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => number.parse().ok()?,
                    };
                    char::from_u32(code)
                }
            }?;
            Some((c, semi))
        });
        match decoded {
            Some((c, semi)) => {
                out.push(c);
                rest = &after[semi + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_a_folder_can_show_and_those_it_cannot() {
        assert_eq!(key_problem("a/b.b2nd"), None);
        assert_eq!(key_problem("a/b/"), None);
        assert_eq!(key_problem("50%.b2nd"), None);
        assert_eq!(key_problem("/"), Some(KeyProblem::EmptySegment));
        assert_eq!(key_problem("//lead.b2nd"), Some(KeyProblem::EmptySegment));
        assert_eq!(key_problem("a//b"), Some(KeyProblem::EmptySegment));
        assert_eq!(key_problem(""), Some(KeyProblem::EmptySegment));
        assert_eq!(key_problem("a/../b"), Some(KeyProblem::DotSegment));
        assert_eq!(key_problem("./b"), Some(KeyProblem::DotSegment));
        assert_eq!(key_problem("a\tb"), Some(KeyProblem::ControlCharacter));
        assert_eq!(key_problem("a\nb/"), Some(KeyProblem::ControlCharacter));
        assert_eq!(key_problem(&"x".repeat(256)), Some(KeyProblem::NameTooLong));
        assert_eq!(key_problem(&"x".repeat(255)), None);
        assert_eq!(key_problem(&"a/".repeat(513)), Some(KeyProblem::TooLong));
    }

    #[test]
    fn entities_decode_and_bad_ones_stay() {
        assert_eq!(unescape("a&amp;b&lt;&#9;&#x41;"), "a&b<\tA");
        assert_eq!(unescape("&bogus; & &#xZZ;"), "&bogus; & &#xZZ;");
        assert_eq!(unescape("&#x110000;"), "&#x110000;");
    }

    /// The answer moto gives for a bucket holding `ok.b2nd` and
    /// `//lead.b2nd`, listed with a delimiter: the `/` prefix goes, the
    /// good object stays.
    #[test]
    fn a_leading_slash_prefix_is_dropped_and_the_rest_kept() {
        let xml = "<?xml version=\"1.0\"?><ListBucketResult><Name>b</Name><Prefix></Prefix>\
            <Contents><Key>ok.b2nd</Key><Size>5</Size></Contents>\
            <Contents><Key>bad&#x9;tab</Key><Size>5</Size></Contents>\
            <CommonPrefixes><Prefix>/</Prefix></CommonPrefixes>\
            <CommonPrefixes><Prefix>dir/</Prefix></CommonPrefixes></ListBucketResult>";
        let (text, skipped) = filter_listing(xml, Dialect::S3).unwrap();
        assert!(text.contains("<Key>ok.b2nd</Key>") && text.contains("<Prefix>dir/</Prefix>"));
        assert!(!text.contains("bad") && !text.contains("<Prefix>/</Prefix>"));
        assert!(text.contains("<Prefix></Prefix>"), "the asked prefix stays");
        let keys: Vec<_> = skipped.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, ["bad\ttab", "/"]);
        assert_eq!(filter_listing("<ListBucketResult/>", Dialect::S3), None);
    }

    #[test]
    fn azure_blobs_and_prefixes() {
        let xml = "<EnumerationResults><Blobs><Blob><Name>a/./b</Name></Blob>\
            <Blob><Name>a/ok</Name></Blob><BlobPrefix><Name>a//</Name></BlobPrefix></Blobs></EnumerationResults>";
        let (text, skipped) = filter_listing(xml, Dialect::Azure).unwrap();
        assert_eq!(
            text,
            "<EnumerationResults><Blobs><Blob><Name>a/ok</Name></Blob></Blobs></EnumerationResults>"
        );
        assert_eq!(skipped.len(), 2);
    }
}

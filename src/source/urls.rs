//! Remote URLs as text: whether a command-line source names a remote store
//! ([`is_remote_url`]) and how to show a URL without its secrets
//! ([`redact_url`], [`redact_text`]).
//!
//! Built with or without the cargo feature `remote`: a build without remote
//! sources still tells a URL from a path, to refuse it with
//! `remote_not_built` rather than look for a local file of that name, and
//! never echoes the credentials a URL carries.

/// The kind of store a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Amazon S3 and S3-compatible stores: `s3://bucket/key` (also `s3a://`).
    S3,
    /// Google Cloud Storage: `gs://bucket/key`.
    Gcs,
    /// Azure Blob Storage: `az://container/key` (also `azure://`, `abfs://`,
    /// `abfss://`; the account comes from `AZURE_STORAGE_ACCOUNT_NAME`).
    Azure,
    /// A plain web server with Range support: `http(s)://host/path`.
    Http,
    /// A Caterva2 server's root or folder: `c2+https://host[/prefix]/@root/dir`
    /// (`c2+http://` for plain http), read through its HTTP API.
    Caterva2,
}

impl Scheme {
    pub(crate) fn of(scheme: &str) -> Option<Scheme> {
        match scheme.to_ascii_lowercase().as_str() {
            "s3" | "s3a" => Some(Scheme::S3),
            "gs" => Some(Scheme::Gcs),
            "az" | "azure" | "abfs" | "abfss" => Some(Scheme::Azure),
            "http" | "https" => Some(Scheme::Http),
            "c2+http" | "c2+https" => Some(Scheme::Caterva2),
            _ => None,
        }
    }
}

/// Whether `text` starts like the URL of a remote store (`s3://`, `gs://`,
/// `az://`, `http(s)://`, `c2+https://`...) rather than a local path.
pub fn is_remote_url(text: &str) -> bool {
    text.split_once("://")
        .is_some_and(|(scheme, _)| Scheme::of(scheme).is_some())
}

/// `text` with the secrets a URL can carry removed: the user info
/// (`user:pass@`) becomes `***@` and a query string (presigned URLs,
/// SAS tokens) becomes `?<redacted>`; a fragment is dropped. Text that is
/// not a URL is returned as it is.
pub fn redact_url(text: &str) -> String {
    let Some(sep) = text.find("://") else {
        return text.to_string();
    };
    let rest_at = sep + 3;
    let rest = &text[rest_at..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..rest_at]);
    match authority.rfind('@') {
        Some(at) => {
            out.push_str("***@");
            out.push_str(&authority[at + 1..]);
        }
        None => out.push_str(authority),
    }
    let tail = &rest[authority_len..];
    let path_len = tail.find(['?', '#']).unwrap_or(tail.len());
    out.push_str(&tail[..path_len]);
    if tail[path_len..].starts_with('?') {
        out.push_str("?<redacted>");
    }
    out
}

/// `text` (an error message, a log line) with every URL in it passed
/// through [`redact_url`].
pub fn redact_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(sep) = rest.find("://") {
        let start = rest[..sep]
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
            .last()
            .map_or(sep, |(i, _)| i);
        let end = rest[sep..]
            .find(|c: char| {
                c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | ')' | ']' | ',')
            })
            .map_or(rest.len(), |n| sep + n);
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Why this build cannot read `url`: it was built without the cargo feature
/// `remote` (the URL is shown redacted).
#[cfg(not(feature = "remote"))]
pub fn remote_not_built(url: &str) -> String {
    format!(
        "{}: this blosc2fs was built without remote sources (cargo feature `remote`)",
        redact_url(url)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_removes_user_info_and_queries() {
        assert_eq!(
            redact_url("https://alice:s3cret@host:8080/a/b.b2nd"),
            "https://***@host:8080/a/b.b2nd"
        );
        assert_eq!(
            redact_url("https://bucket.s3.amazonaws.com/k.b2nd?X-Amz-Credential=AKIA&X-Amz-Signature=abc#frag"),
            "https://bucket.s3.amazonaws.com/k.b2nd?<redacted>"
        );
        assert_eq!(redact_url("s3://bucket/key.b2nd"), "s3://bucket/key.b2nd");
        assert_eq!(redact_url("/local/path"), "/local/path");
        assert_eq!(redact_url("http://u@h?sig=1"), "http://***@h?<redacted>");
        let msg = "error sending request for url (http://k:pw@127.0.0.1:9/x?sig=zz): reset; see https://a/b?t=1, ok";
        let red = redact_text(msg);
        assert_eq!(red, "error sending request for url (http://***@127.0.0.1:9/x?<redacted>): reset; see https://a/b?<redacted>, ok");
        for secret in ["pw", "sig=zz", "t=1"] {
            assert!(!red.contains(secret), "{red}");
        }
    }

    #[test]
    fn remote_urls_are_told_from_paths() {
        assert!(is_remote_url("s3://b/k"));
        assert!(is_remote_url("HTTPS://h/k"));
        assert!(!is_remote_url("/data/x.b2nd"));
        assert!(!is_remote_url("ftp://h/k"));
        assert!(
            is_remote_url("gs://b/k") && is_remote_url("az://c/k") && is_remote_url("s3a://b/k")
        );
        assert!(!is_remote_url("relative/s3://x"));
        assert!(
            is_remote_url("c2+https://h/@public") && is_remote_url("c2+http://h:8000/@public/dir")
        );
        assert!(!is_remote_url("c2://h/@public"));
    }

    #[cfg(not(feature = "remote"))]
    #[test]
    fn urls_are_refused_without_the_remote_feature() {
        let message = remote_not_built("s3://key:secret@bucket/x.b2nd?sig=zz");
        assert_eq!(message, "s3://***@bucket/x.b2nd?<redacted>: this blosc2fs was built without remote sources (cargo feature `remote`)");
    }
}

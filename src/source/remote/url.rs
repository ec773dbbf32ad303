//! Remote URLs: which store a URL names, where the object or prefix is in
//! it, and how to show it without secrets ([`redact_url`], [`redact_text`]).

use super::error::RemoteError;

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
}

impl Scheme {
    fn of(scheme: &str) -> Option<Scheme> {
        match scheme.to_ascii_lowercase().as_str() {
            "s3" | "s3a" => Some(Scheme::S3),
            "gs" => Some(Scheme::Gcs),
            "az" | "azure" | "abfs" | "abfss" => Some(Scheme::Azure),
            "http" | "https" => Some(Scheme::Http),
            _ => None,
        }
    }
}

/// Whether `text` starts like a URL of a store this build reads (rather
/// than a local path).
pub fn is_remote_url(text: &str) -> bool {
    text.split_once("://").is_some_and(|(scheme, _)| Scheme::of(scheme).is_some())
}

/// A parsed remote URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteUrl {
    url: url::Url,
    scheme: Scheme,
}

impl RemoteUrl {
    /// Parse `text`; only the schemes of [`Scheme`] are accepted, and a
    /// bucket or host must be present.
    pub fn parse(text: &str) -> Result<RemoteUrl, RemoteError> {
        let bad = |detail: &str| RemoteError::BadUrl { url: redact_url(text), detail: detail.into() };
        let url = url::Url::parse(text).map_err(|e| bad(&e.to_string()))?;
        let scheme = Scheme::of(url.scheme()).ok_or_else(|| bad("the scheme is none of s3, gs, az, http, https"))?;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad(if scheme == Scheme::Http { "no host" } else { "no bucket or container" }));
        }
        if url.fragment().is_some() {
            return Err(bad("a fragment (#...) is not part of an object's name"));
        }
        Ok(RemoteUrl { url, scheme })
    }

    /// The kind of store.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The full URL (may hold secrets: never log it; see [`Self::redacted`]).
    pub fn as_str(&self) -> &str {
        self.url.as_str()
    }

    /// The URL as it may be shown.
    pub fn redacted(&self) -> String {
        redact_url(self.url.as_str())
    }

    /// The object key or prefix inside the bucket (for http(s): inside the
    /// server), still percent-encoded, without the leading `/`.
    pub fn key(&self) -> &str {
        self.url.path().trim_start_matches('/')
    }

    /// Whether the URL ends in `/` (names a prefix, not an object).
    pub fn is_prefix(&self) -> bool {
        self.url.path().ends_with('/')
    }

    /// Whether the URL has a query string (presigned URLs do).
    pub fn has_query(&self) -> bool {
        self.url.query().is_some()
    }

    /// The URL with the key replaced by `key` (percent-encoded, no leading `/`).
    pub fn with_key(&self, key: &str) -> RemoteUrl {
        let mut url = self.url.clone();
        url.set_path(&format!("/{key}"));
        url.set_query(None);
        RemoteUrl { url, scheme: self.scheme }
    }

    /// `scheme://bucket` or `scheme://host[:port]` with no path (what the
    /// client of the store is built from).
    pub fn root(&self) -> String {
        let mut url = self.url.clone();
        url.set_path("");
        url.set_query(None);
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.as_str().trim_end_matches('/').to_string()
    }
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
        let end = rest[sep..].find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | ')' | ']' | ',')).map_or(rest.len(), |n| sep + n);
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_removes_user_info_and_queries() {
        assert_eq!(redact_url("https://alice:s3cret@host:8080/a/b.b2nd"), "https://***@host:8080/a/b.b2nd");
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
    fn urls_parse_by_scheme() {
        assert!(is_remote_url("s3://b/k"));
        assert!(is_remote_url("HTTPS://h/k"));
        assert!(!is_remote_url("/data/x.b2nd"));
        assert!(!is_remote_url("ftp://h/k"));
        let u = RemoteUrl::parse("s3://bucket/dir/a%20b.b2nd").unwrap();
        assert_eq!(u.scheme(), Scheme::S3);
        assert_eq!(u.key(), "dir/a%20b.b2nd");
        assert_eq!(u.root(), "s3://bucket");
        assert!(!u.is_prefix());
        assert_eq!(u.with_key("dir/c.b2nd").as_str(), "s3://bucket/dir/c.b2nd");
        let h = RemoteUrl::parse("http://user:pw@127.0.0.1:8000/x/").unwrap();
        assert_eq!(h.scheme(), Scheme::Http);
        assert!(h.is_prefix());
        assert_eq!(h.root(), "http://127.0.0.1:8000");
        assert_eq!(h.redacted(), "http://***@127.0.0.1:8000/x/");
        assert!(matches!(RemoteUrl::parse("s3:///key"), Err(RemoteError::BadUrl { .. })));
        let err = RemoteUrl::parse("ftp://user:pw@h/k").unwrap_err();
        assert!(!err.to_string().contains("pw"), "{err}");
    }
}

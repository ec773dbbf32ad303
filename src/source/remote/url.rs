//! Parsed remote URLs: which store a URL names and where the object or
//! prefix is in it. The text-only helpers (telling a URL from a path,
//! redaction) are in [`crate::source::urls`], built without the feature too.

use super::error::RemoteError;
use crate::source::urls::{redact_url, Scheme};

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
        let bad = |detail: &str| RemoteError::BadUrl {
            url: redact_url(text),
            detail: detail.into(),
        };
        let url = url::Url::parse(text).map_err(|e| bad(&e.to_string()))?;
        let scheme = Scheme::of(url.scheme()).ok_or_else(|| {
            bad("the scheme is none of s3, gs, az, http, https, c2+http, c2+https")
        })?;
        if url.host_str().is_none_or(str::is_empty) {
            return Err(bad(if scheme == Scheme::Http {
                "no host"
            } else {
                "no bucket or container"
            }));
        }
        if url.fragment().is_some() {
            return Err(bad("a fragment (#...) is not part of an object's name"));
        }
        let parsed = RemoteUrl { url, scheme };
        if scheme == Scheme::Caterva2 {
            if parsed.url.query().is_some() {
                return Err(bad("a Caterva2 URL takes no query: the login comes from CATERVA2_USERNAME / CATERVA2_PASSWORD"));
            }
            if parsed.root_at().is_none() {
                return Err(bad("no root: name one, as in c2+https://HOST/@public or c2+https://HOST/@public/DIR"));
            }
        }
        Ok(parsed)
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
    /// server; for Caterva2: the dataset path from its `@root`), still
    /// percent-encoded, without the leading `/`.
    pub fn key(&self) -> &str {
        let path = self.url.path();
        match self.root_at() {
            Some(at) => &path[at..],
            None => path.trim_start_matches('/'),
        }
    }

    /// For a Caterva2 URL, where its `@root` segment starts in the path;
    /// what comes before it is the server's own prefix.
    fn root_at(&self) -> Option<usize> {
        if self.scheme != Scheme::Caterva2 {
            return None;
        }
        let path = self.url.path();
        path.match_indices("/@")
            .map(|(i, _)| i + 1)
            .next()
            .or_else(|| path.match_indices("/%40").map(|(i, _)| i + 1).next())
    }

    /// The server a Caterva2 URL names: `http(s)://host[:port][/prefix]`,
    /// without user info (`None` for other schemes).
    pub fn api_base(&self) -> Option<String> {
        let at = self.root_at()?;
        let path = self.url.path();
        let tls = self.url.scheme().eq_ignore_ascii_case("c2+https");
        let host = self.url.host_str()?;
        let port = self.url.port().map(|p| format!(":{p}")).unwrap_or_default();
        let prefix = path[..at].trim_end_matches('/');
        Some(format!(
            "{}://{host}{port}{prefix}",
            if tls { "https" } else { "http" }
        ))
    }

    /// Whether the URL ends in `/` (names a prefix, not an object).
    pub fn is_prefix(&self) -> bool {
        self.url.path().ends_with('/')
    }

    /// Whether the URL has a query string (presigned URLs do).
    pub fn has_query(&self) -> bool {
        self.url.query().is_some()
    }

    /// Whether the URL is one object signed in its query string: an
    /// http(s) URL with a query (an S3 presigned URL, an Azure SAS URL).
    /// Its query goes with every request and is never shown.
    pub fn is_signed(&self) -> bool {
        self.scheme == Scheme::Http && self.has_query() && !self.is_prefix()
    }

    /// The URL requests are made to: [`Self::root`], or for a signed URL
    /// the whole URL, query included, without user info (may hold secrets:
    /// never log it).
    pub fn base(&self) -> String {
        if !self.is_signed() {
            return self.root();
        }
        let mut url = self.url.clone();
        let _ = url.set_username("");
        let _ = url.set_password(None);
        url.into()
    }

    /// The URL with the key replaced by `key` (percent-encoded, no leading `/`).
    pub fn with_key(&self, key: &str) -> RemoteUrl {
        let mut url = self.url.clone();
        let prefix = self
            .root_at()
            .map_or("", |at| self.url.path()[..at].trim_end_matches('/'));
        url.set_path(&format!("{prefix}/{key}"));
        url.set_query(None);
        RemoteUrl {
            url,
            scheme: self.scheme,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_by_scheme() {
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
        assert!(matches!(
            RemoteUrl::parse("s3:///key"),
            Err(RemoteError::BadUrl { .. })
        ));
        assert!(!u.is_signed() && !h.is_signed());
        assert_eq!(u.base(), "s3://bucket");
        assert_eq!(h.base(), "http://127.0.0.1:8000");
        let err = RemoteUrl::parse("ftp://user:pw@h/k").unwrap_err();
        assert!(!err.to_string().contains("pw"), "{err}");
    }

    /// A Caterva2 URL names a server (with its prefix) and a path from a root.
    #[test]
    fn caterva2_urls_split_server_and_root() {
        let u = RemoteUrl::parse("c2+https://u:pw@example.org:8443/c2/@public/dir1/").unwrap();
        assert_eq!(u.scheme(), Scheme::Caterva2);
        assert_eq!(u.key(), "@public/dir1/");
        assert_eq!(u.api_base().as_deref(), Some("https://example.org:8443/c2"));
        assert_eq!(
            u.with_key("@public/dir1/a.b2nd").as_str(),
            "c2+https://u:pw@example.org:8443/c2/@public/dir1/a.b2nd"
        );
        assert_eq!(
            u.redacted(),
            "c2+https://***@example.org:8443/c2/@public/dir1/"
        );
        let plain = RemoteUrl::parse("c2+http://127.0.0.1:8000/@personal").unwrap();
        assert_eq!(
            (plain.key(), plain.api_base().as_deref()),
            ("@personal", Some("http://127.0.0.1:8000"))
        );
        for bad in [
            "c2+https://h/",
            "c2+https://h/public",
            "c2+https://h/@public?token=1",
        ] {
            assert!(
                matches!(RemoteUrl::parse(bad), Err(RemoteError::BadUrl { .. })),
                "{bad}"
            );
        }
    }

    /// A presigned URL is requested whole, shown without its query.
    #[test]
    fn signed_urls_keep_their_query_for_requests_only() {
        let text =
            "http://u:pw@127.0.0.1:5000/bucket/a.b2nd?X-Amz-Algorithm=AWS4&X-Amz-Signature=f00d";
        let s = RemoteUrl::parse(text).unwrap();
        assert!(s.is_signed());
        assert_eq!(
            s.base(),
            "http://127.0.0.1:5000/bucket/a.b2nd?X-Amz-Algorithm=AWS4&X-Amz-Signature=f00d"
        );
        assert_eq!(
            s.redacted(),
            "http://***@127.0.0.1:5000/bucket/a.b2nd?<redacted>"
        );
        assert_eq!(s.key(), "bucket/a.b2nd");
        assert!(
            !s.with_key("x").as_str().contains("f00d"),
            "children never carry the query"
        );
        for not_signed in [
            "s3://b/a.b2nd?X-Amz-Signature=1",
            "https://h/dir/?sig=1",
            "https://h/a.b2nd",
        ] {
            assert!(
                !RemoteUrl::parse(not_signed).unwrap().is_signed(),
                "{not_signed}"
            );
        }
    }
}

//! Keeping secrets out of what the mount shows.
//!
//! Metalayers and vlmeta are shown in `meta.json`, and some of them carry
//! credentials: older `blosc2.Proxy` caches keep a Caterva2 auth token in
//! their `proxy-source` metalayer, and recipes may hold URLs with a user and
//! password or a presigned query string. Every JSON value shown goes through
//! [`redact_json`] first.

use serde_json::Value as Json;

/// What a hidden value is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Words that mark an object key as holding a secret (compared in lower case).
/// A key that is exactly `auth` counts too (but `author` does not).
const SECRET_KEY_WORDS: [&str; 8] = [
    "token",
    "password",
    "passwd",
    "secret",
    "credential",
    "authorization",
    "signature",
    "apikey",
];

/// Query parameter names whose presence makes a whole query secret
/// (presigned S3, GCS and Azure URLs, bearer tokens in URLs).
const SECRET_QUERY_WORDS: [&str; 7] = [
    "signature",
    "sig",
    "token",
    "credential",
    "key",
    "secret",
    "password",
];

/// Replace every secret inside `value`: values under secret-looking keys,
/// the token slot of a proxy's `urlpath` triple, and credentials inside URLs.
pub fn redact_json(value: &mut Json) {
    match value {
        Json::Object(map) => {
            for (key, inner) in map.iter_mut() {
                let lower = key.to_ascii_lowercase().replace(['_', '-'], "");
                let secret = lower == "auth" || SECRET_KEY_WORDS.iter().any(|w| lower.contains(w));
                if secret && !inner.is_null() {
                    *inner = Json::String(REDACTED.to_string());
                } else if key == "urlpath" {
                    redact_urlpath_triple(inner);
                    redact_json(inner);
                } else {
                    redact_json(inner);
                }
            }
        }
        Json::Array(items) => items.iter_mut().for_each(redact_json),
        Json::String(text) => {
            if let Some(clean) = redact_url(text) {
                *text = clean;
            }
        }
        _ => {}
    }
}

/// A Proxy of a Caterva2 array records `urlpath` as `[path, urlbase, token]`.
fn redact_urlpath_triple(value: &mut Json) {
    if let Json::Array(items) = value {
        if items.len() == 3 && items[2].is_string() {
            items[2] = Json::String(REDACTED.to_string());
        }
    }
}

/// `text` with the user information and any secret query of a URL hidden,
/// or None when it is not a URL or has nothing to hide.
pub fn redact_url(text: &str) -> Option<String> {
    let scheme_end = text.find("://")?;
    if scheme_end == 0
        || !text[..scheme_end]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
    {
        return None;
    }
    let rest_start = scheme_end + 3;
    let authority_end = text[rest_start..]
        .find(['/', '?', '#'])
        .map(|i| rest_start + i)
        .unwrap_or(text.len());
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..rest_start]);
    let authority = &text[rest_start..authority_end];
    let mut changed = false;
    match authority.rfind('@') {
        Some(at) => {
            out.push_str(REDACTED);
            out.push_str(&authority[at..]);
            changed = true;
        }
        None => out.push_str(authority),
    }
    let tail = &text[authority_end..];
    let (before_fragment, fragment) = match tail.find('#') {
        Some(i) => (&tail[..i], &tail[i..]),
        None => (tail, ""),
    };
    match before_fragment.split_once('?') {
        Some((path, query)) if query_is_secret(query) => {
            out.push_str(path);
            out.push('?');
            out.push_str(REDACTED);
            changed = true;
        }
        _ => out.push_str(before_fragment),
    }
    out.push_str(fragment);
    changed.then_some(out)
}

fn query_is_secret(query: &str) -> bool {
    query.split('&').any(|pair| {
        let name = pair.split('=').next().unwrap_or("").to_ascii_lowercase();
        SECRET_QUERY_WORDS.iter().any(|w| name.contains(w))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn urls_lose_user_information_and_presigned_queries() {
        assert_eq!(
            redact_url("https://alice:s3cret@host:8080/a/b.b2nd").as_deref(),
            Some("https://<redacted>@host:8080/a/b.b2nd")
        );
        assert_eq!(
            redact_url("https://bucket.s3.amazonaws.com/k.b2nd?X-Amz-Credential=AK%2F&X-Amz-Signature=abc#frag").as_deref(),
            Some("https://bucket.s3.amazonaws.com/k.b2nd?<redacted>#frag")
        );
        assert_eq!(redact_url("https://host/a.b2nd?version=3"), None);
        assert_eq!(redact_url("https://host/a.b2nd"), None);
        assert_eq!(redact_url("a.b2nd"), None);
        assert_eq!(redact_url("://x@y"), None);
    }

    #[test]
    fn secret_keys_and_proxy_tokens_are_hidden_everywhere() {
        let mut doc = json!({
            "proxy-source": {"urlpath": ["data/a.b2nd", "https://cat2.example.org/", "tok-123"], "caterva2_env": true},
            "nested": [{"auth_token": "abc", "Password": "p", "auth": "x", "author": "Jane"}],
            "expression": "a * 2",
            "remote": "s3://key:secret@bucket/x",
        });
        redact_json(&mut doc);
        assert_eq!(
            doc,
            json!({
                "proxy-source": {"urlpath": ["data/a.b2nd", "https://cat2.example.org/", "<redacted>"], "caterva2_env": true},
                "nested": [{"auth_token": "<redacted>", "Password": "<redacted>", "auth": "<redacted>", "author": "Jane"}],
                "expression": "a * 2",
                "remote": "s3://<redacted>@bucket/x",
            })
        );
    }
}

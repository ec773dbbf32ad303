//! One Caterva2 server's HTTP client: every request goes through
//! [`Session::get`], which adds the login cookie, retries what a restart or
//! an overloaded server causes (5xx, 429, refused or reset connections)
//! with a growing pause, logs in again once on a 401, and counts the
//! request under its [`Endpoint`]. The password and the cookie live in
//! this struct only: never in a URL, a message or [`std::fmt::Debug`].

use parking_lot::Mutex;
use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use super::config::Credentials;
use crate::source::remote::stats::{Endpoint, RemoteStats};

/// Why a request gave no usable answer (messages hold no secrets: URLs
/// here never carry any, the server's text is cut short).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// The server answered with an error status.
    #[error("HTTP status code: {code}{}", if detail.is_empty() { String::new() } else { format!(": {detail}") })]
    Status {
        /// The status.
        code: u16,
        /// The start of the server's explanation.
        detail: String,
    },
    /// No answer: the connection failed, was reset, or timed out.
    #[error("{0}")]
    Transport(String),
    /// The answer was not what the API promises.
    #[error("malformed answer: {0}")]
    Malformed(String),
}

/// The hint a refused request carries when no login is configured.
pub const LOGIN_HINT: &str =
    "set CATERVA2_USERNAME and CATERVA2_PASSWORD (or username/password in caterva2.toml) to log in";

/// The HTTP client of one server.
pub(crate) struct Session {
    client: reqwest::Client,
    /// `http(s)://host[:port][/prefix]`, no trailing `/`.
    api: String,
    login: Option<Credentials>,
    cookie: Mutex<Option<String>>,
    retries: usize,
    stats: Arc<RemoteStats>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("api", &self.api)
            .field("login", &self.login.as_ref().map(|c| &c.username))
            .finish_non_exhaustive()
    }
}

/// Longest explanation kept from an error answer.
const DETAIL_CHARS: usize = 200;

impl Session {
    /// A client for the server at `api` (nothing is sent yet).
    pub(crate) fn new(
        api: String,
        login: Option<Credentials>,
        timeout: Duration,
        retries: usize,
        stats: Arc<RemoteStats>,
    ) -> Result<Session, String> {
        let attempt = timeout / 2;
        let client = reqwest::Client::builder()
            .timeout(attempt)
            .connect_timeout(attempt.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Session {
            client,
            api,
            login,
            cookie: Mutex::new(None),
            retries,
            stats,
        })
    }

    /// Whether a login is configured (environment or `caterva2.toml`).
    pub(crate) fn has_login(&self) -> bool {
        self.login.is_some()
    }

    /// The URL of `endpoint` (`fetch`, `list`...) for dataset path `path`
    /// (`/`-separated, `@root` first), each segment percent-encoded.
    pub(crate) fn url(&self, endpoint: &str, path: &str) -> Result<url::Url, Failure> {
        let mut url = url::Url::parse(&format!("{}/", self.api))
            .map_err(|e| Failure::Malformed(format!("server URL: {e}")))?;
        {
            let mut segments = url
                .path_segments_mut()
                .map_err(|_| Failure::Malformed("server URL cannot take a path".into()))?;
            segments
                .pop_if_empty()
                .extend(["api", endpoint])
                .extend(path.split('/').filter(|s| !s.is_empty()));
        }
        Ok(url)
    }

    fn cookie(&self) -> Option<String> {
        self.cookie.lock().clone()
    }

    /// Log in (again): one `POST /auth/jwt/login`, keeping the `c2subauth`
    /// cookie it sets.
    pub(crate) async fn log_in(&self) -> Result<(), Failure> {
        let Some(login) = &self.login else {
            return Err(Failure::Status {
                code: 401,
                detail: LOGIN_HINT.into(),
            });
        };
        let url = format!("{}/auth/jwt/login", self.api);
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("username", &login.username)
            .append_pair("password", &login.password)
            .finish();
        self.stats.endpoint(Endpoint::Login);
        let answer = self
            .client
            .post(url)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body)
            .send()
            .await
            .map_err(|e| Failure::Transport(transport(&e)))?;
        let status = answer.status().as_u16();
        if !answer.status().is_success() {
            let detail = if status == 400 {
                format!("the server refused the login of user {:?}", login.username)
            } else {
                "the login failed".into()
            };
            return Err(Failure::Status {
                code: if status == 400 { 401 } else { status },
                detail,
            });
        }
        let cookie = answer
            .headers()
            .get_all(reqwest::header::SET_COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(|v| {
                v.split(';')
                    .next()
                    .filter(|kv| kv.trim_start().starts_with("c2subauth="))
                    .map(|kv| kv.trim().to_string())
            });
        let cookie =
            cookie.ok_or_else(|| Failure::Malformed("the login set no c2subauth cookie".into()))?;
        *self.cookie.lock() = Some(cookie);
        Ok(())
    }

    /// `GET url` (with `range`, if any), retried and logged in as the
    /// module says; an answer with a success status, or why there is none.
    pub(crate) async fn get(
        &self,
        endpoint: Endpoint,
        url: &url::Url,
        range: Option<Range<u64>>,
    ) -> Result<reqwest::Response, Failure> {
        if self.login.is_some() && self.cookie().is_none() {
            self.log_in().await?;
        }
        let mut relogged = false;
        let mut attempt = 0;
        loop {
            let mut request = self.client.get(url.clone());
            if let Some(r) = &range {
                request = request.header(
                    reqwest::header::RANGE,
                    format!("bytes={}-{}", r.start, r.end.saturating_sub(1)),
                );
            }
            if let Some(cookie) = self.cookie() {
                request = request.header(reqwest::header::COOKIE, cookie);
            }
            self.stats.endpoint(endpoint);
            let failure = match request.send().await {
                Ok(answer) if answer.status().is_success() => return Ok(answer),
                Ok(answer) => {
                    let code = answer.status().as_u16();
                    let detail: String = answer
                        .text()
                        .await
                        .unwrap_or_default()
                        .chars()
                        .take(DETAIL_CHARS)
                        .collect();
                    if code == 401 && self.login.is_some() && !relogged {
                        relogged = true;
                        self.log_in().await?;
                        continue;
                    }
                    let detail = if code == 401 && self.login.is_none() {
                        LOGIN_HINT.to_string()
                    } else {
                        detail
                    };
                    let failure = Failure::Status { code, detail };
                    if !(code >= 500 || code == 429) {
                        return Err(failure);
                    }
                    failure
                }
                Err(e) => Failure::Transport(transport(&e)),
            };
            if attempt >= self.retries {
                return Err(failure);
            }
            log::debug!("{url}: {failure}; retrying");
            tokio::time::sleep(backoff(attempt)).await;
            attempt += 1;
        }
    }

    /// `GET` the JSON document of `endpoint` for dataset path `path` (at
    /// most `limit` bytes; `what` names it in the error when it is not
    /// JSON), with the answer's ETag.
    pub(crate) async fn get_json(
        &self,
        endpoint: Endpoint,
        path: &str,
        limit: u64,
        what: &str,
    ) -> Result<(serde_json::Value, Option<String>), Failure> {
        let url = self.url(endpoint.name(), path)?;
        let answer = self.get(endpoint, &url, None).await?;
        let etag = answer
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let body = Session::body(answer, limit).await?;
        let json = serde_json::from_slice(&body)
            .map_err(|e| Failure::Malformed(format!("{what} that is not JSON: {e}")))?;
        Ok((json, etag))
    }

    /// The body of `answer`, refusing more than `limit` bytes (a server
    /// cannot make the daemon hold what the request could not justify).
    pub(crate) async fn body(
        mut answer: reqwest::Response,
        limit: u64,
    ) -> Result<bytes::Bytes, Failure> {
        if answer.content_length().is_some_and(|n| n > limit) {
            return Err(Failure::Malformed(format!(
                "an answer of {} bytes, more than the {limit} asked for",
                answer.content_length().unwrap_or(0)
            )));
        }
        // Sized once from the announced length (a large body grown by
        // doubling would be copied several times).
        let mut out = bytes::BytesMut::with_capacity(
            answer.content_length().unwrap_or(0).min(limit) as usize,
        );
        while let Some(piece) = answer
            .chunk()
            .await
            .map_err(|e| Failure::Transport(transport(&e)))?
        {
            if out.len() as u64 + piece.len() as u64 > limit {
                return Err(Failure::Malformed(format!(
                    "an answer of more than the {limit} bytes asked for"
                )));
            }
            out.extend_from_slice(&piece);
        }
        Ok(out.freeze())
    }
}

/// The pause before retry `attempt` (0-based): 50 ms doubling to 2 s.
fn backoff(attempt: usize) -> Duration {
    Duration::from_millis(50u64.saturating_mul(1 << attempt.min(6))).min(Duration::from_secs(2))
}

/// A transport error's text, with the causes reqwest keeps apart
/// (`timed out`, `connection refused`).
fn transport(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    if e.is_timeout() && !text.contains("timed out") {
        text.push_str(" (timed out)");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_encode_each_segment_and_keep_the_prefix() {
        let s = Session::new(
            "http://127.0.0.1:8000/c2".into(),
            None,
            Duration::from_secs(2),
            0,
            Arc::default(),
        )
        .unwrap();
        assert_eq!(
            s.url("fetch", "@public/dir 1/a#b.b2nd").unwrap().as_str(),
            "http://127.0.0.1:8000/c2/api/fetch/@public/dir%201/a%23b.b2nd"
        );
        assert_eq!(
            s.url("list", "@public").unwrap().as_str(),
            "http://127.0.0.1:8000/c2/api/list/@public"
        );
        assert_eq!(backoff(0), Duration::from_millis(50));
        assert_eq!(backoff(20), Duration::from_secs(2));
        let f = Failure::Status {
            code: 503,
            detail: String::new(),
        };
        assert_eq!(f.to_string(), "HTTP status code: 503");
    }
}

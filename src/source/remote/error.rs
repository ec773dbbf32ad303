//! Errors of remote reading, as a type the tree and the CLI can tell apart
//! (an object that is not there, access refused, a stalled server, a
//! replaced object...). Every URL in them is already redacted.

use std::time::Duration;

use crate::format::Problem;

/// What went wrong talking to a remote store. `url` fields hold the
/// redacted URL (see [`super::redact_url`]), never credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// The text is not a URL this build can read (`detail` says why).
    #[error("{url}: not a supported remote URL: {detail}")]
    BadUrl {
        /// The redacted URL.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The client could not be set up (bad option, missing account name...).
    #[error("{url}: cannot set up the client: {detail}")]
    Setup {
        /// The redacted URL.
        url: String,
        /// The client's message, redacted.
        detail: String,
    },
    /// The store answered 404: no such object or prefix.
    #[error("{url}: not found")]
    NotFound {
        /// The redacted URL.
        url: String,
    },
    /// The store answered 401 or 403.
    #[error("{url}: access denied ({detail})")]
    Denied {
        /// The redacted URL.
        url: String,
        /// The client's message, redacted.
        detail: String,
    },
    /// No complete answer within the configured timeout (retries included).
    #[error("{url}: no answer within {} s", after.as_secs_f64())]
    Timeout {
        /// The redacted URL.
        url: String,
        /// The timeout that ran out.
        after: Duration,
    },
    /// A request failed after its retries (5xx, throttling, reset
    /// connections, a malformed answer).
    #[error("{url}: request failed: {detail}")]
    Request {
        /// The redacted URL.
        url: String,
        /// The client's message, redacted.
        detail: String,
    },
    /// The answer did not hold the bytes asked for (a short body, a server
    /// that ignored the range).
    #[error("{url}: asked for bytes {start}..{end}, got {got} bytes")]
    WrongLength {
        /// The redacted URL.
        url: String,
        /// First byte asked for.
        start: u64,
        /// One past the last byte asked for.
        end: u64,
        /// How many bytes came.
        got: u64,
    },
    /// The object is no longer the one opened (another ETag, size or
    /// modification time).
    #[error("{url} changed since it was opened: {detail}")]
    Changed {
        /// The redacted URL.
        url: String,
        /// Which identity changed, from what to what.
        detail: String,
    },
    /// The server's listing named keys outside the prefix listed (the
    /// prefix itself as its own child, a key elsewhere): the folder is not
    /// shown rather than walked without end.
    #[error("{url}: the listing cannot be right: {detail}")]
    Forged {
        /// The redacted URL of the prefix.
        url: String,
        /// What it named.
        detail: String,
    },
    /// The URL names something this operation cannot do (listing an
    /// http(s) URL, a query string on an object URL).
    #[error("{url}: {detail}")]
    Unsupported {
        /// The redacted URL.
        url: String,
        /// What is not possible.
        detail: String,
    },
}

impl From<RemoteError> for Problem {
    fn from(e: RemoteError) -> Problem {
        match e {
            RemoteError::Changed { .. } => Problem::SourceChanged(e.to_string()),
            other => Problem::Io(other.to_string()),
        }
    }
}

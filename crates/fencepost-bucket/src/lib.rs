//! A bucket as fencepost lays it out — content-addressed blobs, a revision's manifest split
//! into a root and shards, a pointer moved by compare-and-set — and the client that reads and
//! writes it (`object_store` behind it). Below both `deploy` (which writes buckets) and `serve`
//! (which serves them): neither reaches into the other for it.
//!
//! Its errors are its own ([`BucketError`]) and say whether a failure is worth retrying: a
//! store that timed out or answered 5xx is; a bad URL, a store without conditional writes, or a
//! pointer that is not fencepost's is not, and retrying would only repeat it.

pub mod layout;
pub mod pointer;
pub mod preview;
pub mod read;
pub mod remote;

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum BucketError {
    #[error("deploy target {target}: {why}")]
    BadTarget { target: String, why: String },
    #[error("deploy target {target}: {what}: {message}")]
    Store {
        target: String,
        what: String,
        message: String,
        /// Whether trying again may succeed (a timeout, a 5xx, a dropped connection).
        retryable: bool,
    },
    #[error("deploy target {target} does not enforce conditional writes: {what}. The pointer's compare-and-set depends on them, so fencepost refuses to deploy there (Garage, for one, ignores If-None-Match/If-Match). Use a store that honours them (AWS S3, R2, MinIO, GCS, Azure) or a file:// target")]
    NoConditionalWrites { target: String, what: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl BucketError {
    /// Whether the same call may succeed if tried again.
    pub fn retryable(&self) -> bool {
        match self {
            BucketError::Store { retryable, .. } => *retryable,
            BucketError::Io { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::Interrupted
                    | std::io::ErrorKind::TimedOut
                    | std::io::ErrorKind::WouldBlock
            ),
            BucketError::BadTarget { .. } | BucketError::NoConditionalWrites { .. } => false,
        }
    }

    /// The bucket's URL, when the error names one.
    pub fn target(&self) -> Option<&str> {
        match self {
            BucketError::BadTarget { target, .. }
            | BucketError::Store { target, .. }
            | BucketError::NoConditionalWrites { target, .. } => Some(target),
            BucketError::Io { .. } => None,
        }
    }
}

use fencepost_core::store::retryable;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_that_did_not_answer_is_worth_retrying_a_refusal_is_not() {
        let generic = object_store::Error::Generic {
            store: "S3",
            source: "connection reset".into(),
        };
        assert!(retryable(&generic));
        let missing = object_store::Error::NotFound {
            path: "current".into(),
            source: "no such key".into(),
        };
        assert!(!retryable(&missing));
        let store = |retryable| BucketError::Store {
            target: "s3://b/p".into(),
            what: "reading current".into(),
            message: "timed out".into(),
            retryable,
        };
        assert!(store(true).retryable());
        assert!(!store(false).retryable());
        let refused = BucketError::NoConditionalWrites {
            target: "s3://b/p".into(),
            what: "If-None-Match ignored".into(),
        };
        assert!(!refused.retryable());
        assert_eq!(refused.target(), Some("s3://b/p"));
        let bad = BucketError::BadTarget {
            target: "ftp://x".into(),
            why: "unknown scheme".into(),
        };
        assert!(!bad.retryable());
    }
}

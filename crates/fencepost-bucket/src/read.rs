//! Reads of content-addressed objects — a manifest root, a shard, a blob — each checked
//! against the digest that names it and parsed, in one place: every room that reads a bucket
//! (deploy, its verify and repair, rollback and gc, the origin) gets typed values or a reason,
//! never bytes to check by hand.

use super::layout::{self, RemoteEntry, Root};
use super::remote::Remote;
use super::BucketError;

/// A content-addressed object read back, or why it could not be had.
#[derive(Debug)]
pub enum Read<T> {
    Found(T),
    /// No object under that name.
    Missing,
    /// Bytes that do not hash to the name: never used.
    Corrupt,
    /// Bytes that hash right but do not parse (the parser's words).
    Unparsable(String),
}

impl<T> Read<T> {
    /// The value, if it was found whole.
    pub fn found(self) -> Option<T> {
        match self {
            Read::Found(t) => Some(t),
            _ => None,
        }
    }
}

fn checked<T>(
    bytes: Option<Vec<u8>>,
    sha: &str,
    parse: impl FnOnce(Vec<u8>) -> Result<T, String>,
) -> Read<T> {
    match bytes {
        None => Read::Missing,
        Some(b) if !layout::verified(&b, sha) => Read::Corrupt,
        Some(b) => match parse(b) {
            Ok(t) => Read::Found(t),
            Err(why) => Read::Unparsable(why),
        },
    }
}

fn json<T: serde::de::DeserializeOwned>(bytes: Vec<u8>) -> Result<T, String> {
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}

impl Remote {
    /// Manifest root `sha` (`manifests/<sha>.json`), verified and parsed.
    pub async fn root(&self, sha: &str) -> Result<Read<Root>, BucketError> {
        self.root_at(&Remote::root_key(sha), sha).await
    }

    /// Manifest shard `sha`, verified and parsed.
    pub async fn shard(&self, sha: &str) -> Result<Read<Vec<RemoteEntry>>, BucketError> {
        self.shard_at(&Remote::shard_key(sha), sha).await
    }

    /// Blob `sha`, verified (whole, in memory: for small ones; a large one is streamed and
    /// hashed as it goes, see `get_stream`).
    pub async fn blob(&self, sha: &str) -> Result<Read<Vec<u8>>, BucketError> {
        self.blob_at(&Remote::blob_key(sha), sha).await
    }

    /// Root `sha` kept at `rel` (a preview keeps its own under `previews/NAME/`).
    pub async fn root_at(&self, rel: &str, sha: &str) -> Result<Read<Root>, BucketError> {
        Ok(checked(self.get(rel).await?, sha, json))
    }

    /// Shard `sha` kept at `rel`.
    pub async fn shard_at(
        &self,
        rel: &str,
        sha: &str,
    ) -> Result<Read<Vec<RemoteEntry>>, BucketError> {
        Ok(checked(self.get(rel).await?, sha, json))
    }

    /// Blob `sha` kept at `rel`.
    pub async fn blob_at(&self, rel: &str, sha: &str) -> Result<Read<Vec<u8>>, BucketError> {
        Ok(checked(self.get(rel).await?, sha, Ok))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_is_found_only_whole_and_matching_its_name() {
        let body = br#"{"a":1}"#.to_vec();
        let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&body));
        let parse = |b: Vec<u8>| json::<serde_json::Value>(b);
        assert!(matches!(checked(None, &sha, parse), Read::Missing));
        assert!(matches!(
            checked(Some(b"{}".to_vec()), &sha, parse),
            Read::Corrupt
        ));
        let bad = b"not json".to_vec();
        let bad_sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bad));
        assert!(matches!(
            checked(Some(bad), &bad_sha, parse),
            Read::Unparsable(_)
        ));
        let found = checked(Some(body), &sha, parse).found();
        assert_eq!(found, Some(serde_json::json!({"a": 1})));
    }
}

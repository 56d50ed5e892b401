//! A deploy target: an object store (S3 and what speaks it — R2, MinIO —, GCS, Azure, the
//! in-memory store, or a folder) behind `object_store`, with fencepost's remote layout and a
//! compare-and-set pointer.
//!
//! ```text
//! <prefix>/objects/<sha256>              blobs, immutable, uploaded only when missing
//! <prefix>/manifests/<sha256>.json       a revision's manifest root (content-addressed)
//! <prefix>/manifests/shards/<sha256>.json its shards (content-addressed, reused when equal)
//! <prefix>/current                        the pointer: moved only by compare-and-set
//! ```
//!
//! Every key is made from a hex digest or a fixed name, never from a path of the site, so no
//! key can leave the prefix. Credentials come only from the environment (`AWS_*`,
//! `GOOGLE_*`, `AZURE_*`, read by `object_store`'s builders) and the URL shown in logs and JSON
//! is the one the user gave, which carries none.

pub use super::pointer::{RemotePointer, RetiredRoot, RETIRED_KEPT};
use fencepost_core::store::names::{canonical, redact_userinfo, shown, target_key};

use super::BucketError;
use futures_util::StreamExt;
use object_store::path::Path as KeyPath;
use object_store::{
    Attribute, Attributes, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    UpdateVersion,
};
use std::path::PathBuf;
use std::sync::Arc;

/// How the pointer is moved by compare-and-set.
#[derive(Debug, Clone)]
enum Kind {
    /// The store's own conditional writes (create-if-absent, if-match on the etag).
    Conditional { content_types: bool },
    /// A folder: `object_store`'s local store has no if-match update, so the pointer is
    /// swapped with write-temp + rename under an exclusive lock file.
    Folder(PathBuf),
}

/// A store with its own conditional writes that keeps content types.
const CLOUD: Kind = Kind::Conditional {
    content_types: true,
};

/// The version of the pointer a compare-and-set expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version(VersionInner);

#[derive(Debug, Clone, PartialEq, Eq)]
enum VersionInner {
    Store(UpdateVersion),
    /// sha256 of the folder's pointer file.
    Digest(String),
}

/// A deploy target.
#[derive(Clone)]
pub struct Remote {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    kind: Kind,
    /// Its canonical name (no credentials ever live in it): what reports show.
    pub url: String,
    /// What the ledger keys it by (leases, operations, what is deployed where): the name
    /// and the endpoint of a store reached at one (see `names::target_key`).
    pub key: String,
    /// The endpoint the store is reached at, when the environment or settings chose one.
    endpoint: Option<String>,
    /// What older releases keyed this target by (its bare name; its endpoint as spelt, before
    /// endpoints were canonical): their rows go to `key`, once.
    pub older_keys: Vec<String>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote").field("url", &self.url).finish()
    }
}

fn store_err(url: &str, what: &str) -> impl Fn(object_store::Error) -> BucketError {
    let (url, what) = (url.to_string(), what.to_string());
    move |e| match fencepost_core::store::missing_bucket(&e) {
        true => BucketError::BadTarget {
            target: url.clone(),
            why: format!(
                "bucket {} does not exist (create it, or check deploy.to)",
                fencepost_core::store::bucket_of(&url)
            ),
        },
        false => BucketError::Store {
            target: url.clone(),
            what: what.clone(),
            message: redact_userinfo(&e.to_string()),
            retryable: super::retryable(&e),
        },
    }
}

impl Remote {
    /// Opens `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix`,
    /// `file:///absolute/folder` or `memory://name` (in-process; for tests).
    pub fn open(url: &str) -> Result<Remote, BucketError> {
        Remote::open_with(url, &[])
    }

    /// [`Remote::open`] with settings given explicitly on top of the environment (tests use
    /// it to reach a local S3 server without touching the process's environment), e.g.
    /// `("aws_endpoint", "http://127.0.0.1:9000")`.
    pub fn open_with(url: &str, settings: &[(&str, &str)]) -> Result<Remote, BucketError> {
        let bad = |why: &str| BucketError::BadTarget {
            target: shown(url),
            why: why.to_string(),
        };
        let opened = fencepost_core::store::open(url, settings).map_err(|why| bad(&why))?;
        let kind = match &opened.folder {
            Some(root) => Kind::Folder(root.clone()),
            None => CLOUD,
        };
        let (store, prefix) = (opened.store, opened.prefix);
        let chosen_endpoint = opened.endpoint.as_deref().map(shown);
        let s3_endpoint = opened.endpoint;
        let key = target_key(url, s3_endpoint.as_deref());
        let spelt = fencepost_core::store::names::target_key_as_spelt(url, s3_endpoint.as_deref());
        Ok(Remote {
            store,
            prefix,
            kind,
            url: canonical(url),
            older_keys: [canonical(url), spelt]
                .into_iter()
                .filter(|k| *k != key)
                .collect(),
            key,
            endpoint: chosen_endpoint,
        })
    }

    /// A target over any store (tests wrap stores this way).
    pub fn with_store(url: &str, store: Arc<dyn ObjectStore>) -> Remote {
        Remote {
            store,
            prefix: String::new(),
            kind: CLOUD,
            url: canonical(url),
            key: canonical(url),
            older_keys: Vec::new(),
            endpoint: None,
        }
    }

    /// Everything that selects the store behind this target (the URL, and the endpoint an
    /// `s3://` URL is reached at): what the conditional-write probe is remembered for.
    /// Never credentials.
    pub fn store_id(&self) -> String {
        match &self.endpoint {
            Some(e) => format!("{} via {e}", self.url),
            None => self.url.clone(),
        }
    }

    fn key(&self, rel: &str) -> KeyPath {
        if self.prefix.is_empty() {
            KeyPath::from(rel)
        } else {
            KeyPath::from(format!("{}/{rel}", self.prefix))
        }
    }

    fn err(&self, what: &str) -> impl Fn(object_store::Error) -> BucketError {
        store_err(&self.url, what)
    }

    pub fn blob_key(sha: &str) -> String {
        format!("objects/{sha}")
    }

    pub fn root_key(sha: &str) -> String {
        format!("manifests/{sha}.json")
    }

    pub fn shard_key(sha: &str) -> String {
        format!("manifests/shards/{sha}.json")
    }

    /// Writes `rel` only if nothing is there. Returns whether this call created it (false:
    /// it existed, content-addressed objects are then equal by construction).
    pub async fn create(
        &self,
        rel: &str,
        bytes: Vec<u8>,
        content_type: Option<&str>,
    ) -> Result<bool, BucketError> {
        let mut attributes = Attributes::new();
        if let (
            Kind::Conditional {
                content_types: true,
            },
            Some(ct),
        ) = (&self.kind, content_type)
        {
            attributes.insert(Attribute::ContentType, ct.to_string().into());
        }
        let opts = PutOptions {
            mode: PutMode::Create,
            attributes,
            ..Default::default()
        };
        match self
            .store
            .put_opts(&self.key(rel), PutPayload::from(bytes), opts)
            .await
        {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            // Some stores answer a lost create race with 412.
            Err(object_store::Error::Precondition { .. }) => Ok(false),
            Err(e) => Err(self.err(&format!("writing {rel}"))(e)),
        }
    }

    /// Writes `rel` whatever is there (last writer wins): only for objects no
    /// compare-and-set guards, such as a preview's pointer.
    pub async fn put(&self, rel: &str, bytes: Vec<u8>) -> Result<(), BucketError> {
        self.store
            .put(&self.key(rel), PutPayload::from(bytes))
            .await
            .map(|_| ())
            .map_err(self.err(&format!("writing {rel}")))
    }

    pub async fn exists(&self, rel: &str) -> Result<bool, BucketError> {
        match self.store.head(&self.key(rel)).await {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.err(&format!("checking {rel}"))(e)),
        }
    }

    pub async fn get(&self, rel: &str) -> Result<Option<Vec<u8>>, BucketError> {
        match self.store.get(&self.key(rel)).await {
            Ok(r) => Ok(Some(
                r.bytes()
                    .await
                    .map_err(self.err(&format!("reading {rel}")))?
                    .to_vec(),
            )),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.err(&format!("reading {rel}"))(e)),
        }
    }

    /// `rel` as a stream of chunks (for large objects: nothing is held whole in memory), with
    /// its size; `None` if it is missing.
    pub async fn get_stream(
        &self,
        rel: &str,
    ) -> Result<
        Option<(
            u64,
            futures_util::stream::BoxStream<'static, Result<bytes::Bytes, BucketError>>,
        )>,
        BucketError,
    > {
        match self.store.get(&self.key(rel)).await {
            Ok(r) => {
                let size = r.meta.size;
                let err = self.err(&format!("reading {rel}"));
                let stream = r.into_stream().map(move |c| c.map_err(&err)).boxed();
                Ok(Some((size, stream)))
            }
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.err(&format!("reading {rel}"))(e)),
        }
    }

    /// The sha256 of `rel`'s bytes, hashed as they stream in (a blob is never held whole);
    /// `None` if it is missing.
    pub async fn sha256_of(&self, rel: &str) -> Result<Option<String>, BucketError> {
        use sha2::Digest;
        let Some((_, mut chunks)) = self.get_stream(rel).await? else {
            return Ok(None);
        };
        let mut h = sha2::Sha256::new();
        while let Some(chunk) = chunks.next().await {
            h.update(&chunk?);
        }
        Ok(Some(hex::encode(h.finalize())))
    }

    pub async fn delete(&self, rel: &str) -> Result<(), BucketError> {
        match self.store.delete(&self.key(rel)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.err(&format!("deleting {rel}"))(e)),
        }
    }

    /// Every object under `dir/` (relative to the prefix): (name after `dir/`, last
    /// modified).
    pub async fn list(
        &self,
        dir: &str,
    ) -> Result<Vec<(String, chrono::DateTime<chrono::Utc>)>, BucketError> {
        let base = self.key(dir);
        let mut stream = self.store.list(Some(&base));
        let mut out = Vec::new();
        let strip = format!("{}/", base.as_ref());
        while let Some(meta) = stream.next().await {
            let meta = meta.map_err(self.err(&format!("listing {dir}/")))?;
            let name = meta
                .location
                .as_ref()
                .strip_prefix(&strip)
                .unwrap_or(meta.location.as_ref())
                .to_string();
            out.push((name, meta.last_modified));
        }
        Ok(out)
    }

    /// Whether this prefix holds a ledger's log (`log/` with entries named by 20-digit
    /// positions): what no origin may serve. Two listings of one page at most.
    pub async fn holds_ledger(&self) -> Result<bool, BucketError> {
        let base = self.key("log");
        let mut stream = self.store.list(Some(&base));
        if let Some(meta) = stream.next().await {
            let meta = meta.map_err(self.err("listing log/"))?;
            let name = meta.location.filename().unwrap_or_default();
            return Ok(name.len() == 20 && name.bytes().all(|b| b.is_ascii_digit()));
        }
        Ok(false)
    }

    /// The pointer and its version, if there is one.
    pub async fn read_pointer(&self) -> Result<Option<(RemotePointer, Version)>, BucketError> {
        let parse = |bytes: &[u8]| {
            serde_json::from_slice::<RemotePointer>(bytes).map_err(|e| BucketError::Store {
                target: self.url.clone(),
                what: "reading current".into(),
                message: format!("not a fencepost pointer: {e}"),
                retryable: false,
            })
        };
        match &self.kind {
            Kind::Folder(root) => match std::fs::read(root.join("current")) {
                Ok(b) => Ok(Some((
                    parse(&b)?,
                    Version(VersionInner::Digest(fencepost_core::digest::sha256_hex(&b))),
                ))),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(BucketError::Io {
                    path: root.join("current"),
                    source: e,
                }),
            },
            Kind::Conditional { .. } => match self.store.get(&self.key("current")).await {
                Ok(r) => {
                    let version = UpdateVersion {
                        e_tag: r.meta.e_tag.clone(),
                        version: r.meta.version.clone(),
                    };
                    let bytes = r.bytes().await.map_err(self.err("reading current"))?;
                    Ok(Some((
                        parse(&bytes)?,
                        Version(VersionInner::Store(version)),
                    )))
                }
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(self.err("reading current")(e)),
            },
        }
    }

    /// Replaces the pointer if it is still at `expected` (None: if there is none yet).
    /// Returns false when someone moved it first: re-read and decide again.
    pub async fn swap_pointer(
        &self,
        expected: Option<&Version>,
        new: &RemotePointer,
    ) -> Result<bool, BucketError> {
        let bytes = serde_json::to_vec_pretty(new).expect("pointers serialise");
        match &self.kind {
            Kind::Folder(root) => swap_folder_pointer(root, expected, &bytes),
            Kind::Conditional { content_types } => {
                let mode = match expected {
                    None => PutMode::Create,
                    Some(Version(VersionInner::Store(v))) => PutMode::Update(v.clone()),
                    Some(Version(VersionInner::Digest(_))) => {
                        unreachable!("digest versions belong to folders")
                    }
                };
                let mut attributes = Attributes::new();
                if *content_types {
                    attributes.insert(Attribute::ContentType, "application/json".into());
                    // Every cache must ask again: the pointer is the one URL that moves.
                    attributes.insert(Attribute::CacheControl, "no-store".into());
                }
                let opts = PutOptions {
                    mode,
                    attributes,
                    ..Default::default()
                };
                match self
                    .store
                    .put_opts(&self.key("current"), PutPayload::from(bytes), opts)
                    .await
                {
                    Ok(_) => Ok(true),
                    Err(object_store::Error::AlreadyExists { .. })
                    | Err(object_store::Error::Precondition { .. }) => Ok(false),
                    Err(e) => Err(self.err("moving current")(e)),
                }
            }
        }
    }

    /// Checks that the store enforces conditional writes, which the pointer's
    /// compare-and-set depends on: a create-if-absent written twice must be refused the
    /// second time, and an if-match update with a wrong etag must be refused. Some
    /// S3-compatible stores answer 200 and overwrite (Garage does).
    pub async fn probe(&self) -> Result<(), BucketError> {
        if let Kind::Folder(_) = self.kind {
            return Ok(()); // the pointer is swapped under our own lock
        }
        let rel = format!(".fencepost-probe/{}", uuid::Uuid::new_v4().simple());
        let refuse = |what: &str| BucketError::NoConditionalWrites {
            target: self.url.clone(),
            what: what.to_string(),
        };
        let key = self.key(&rel);
        let put = |mode: PutMode, body: &'static [u8]| {
            let opts = PutOptions {
                mode,
                ..Default::default()
            };
            self.store
                .put_opts(&key, PutPayload::from_static(body), opts)
        };
        put(PutMode::Create, b"1")
            .await
            .map_err(self.err("probing conditional writes"))?;
        let second = put(PutMode::Create, b"2").await;
        let wrong = UpdateVersion {
            e_tag: Some("\"fencepost-probe-no-such-etag\"".into()),
            version: None,
        };
        let third = put(PutMode::Update(wrong), b"3").await;
        // The probe key is the probe's own; a failure to remove it changes nothing.
        let _ = self.delete(&rel).await;
        match second {
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => {}
            Ok(_) => {
                return Err(refuse(
                    "a create-if-absent (If-None-Match: *) overwrote an existing object",
                ))
            }
            Err(e) => return Err(self.err("probing conditional writes")(e)),
        }
        match third {
            Err(object_store::Error::Precondition { .. })
            | Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Ok(_) => Err(refuse(
                "an update with a wrong If-Match etag overwrote the object",
            )),
            Err(e) => Err(self.err("probing conditional writes")(e)),
        }
    }
}

/// The folder pointer: exclusive lock file, compare the current file's digest, write a
/// temporary file, fsync, rename, fsync the folder.
fn swap_folder_pointer(
    root: &std::path::Path,
    expected: Option<&Version>,
    bytes: &[u8],
) -> Result<bool, BucketError> {
    let io = |path: PathBuf| move |source| BucketError::Io { path, source };
    let lock_path = root.join("current.lock");
    let lock = std::fs::File::options()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(io(lock_path.clone()))?;
    lock.lock().map_err(io(lock_path))?;
    let path = root.join("current");
    let now = match std::fs::read(&path) {
        Ok(b) => Some(fencepost_core::digest::sha256_hex(&b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io(path)(e)),
    };
    let expected = expected.map(|v| match &v.0 {
        VersionInner::Digest(d) => d.clone(),
        VersionInner::Store(_) => unreachable!("store versions belong to stores"),
    });
    if now != expected {
        return Ok(false);
    }
    fencepost_output::write_atomic(&path, bytes).map_err(|e| BucketError::Store {
        target: root.display().to_string(),
        what: "moving current".into(),
        message: e.to_string(),
        retryable: true,
    })?;
    Ok(true)
}

//! Object stores as fencepost opens them: a URL (`s3://bucket/prefix`, `gs://…`, `az://…`,
//! `file:///absolute/folder`, `memory://name` in tests) becomes an `object_store` client and
//! a key prefix. Below both the ledger (whose bucket engine keeps its log in one) and
//! `bucket` (deploy targets): neither reaches into the other for it.
//!
//! Credentials come only from the environment (`AWS_*`, `GOOGLE_*`, `AZURE_*`, read by
//! `object_store`'s builders) or from settings a caller passes explicitly; never from the URL.

pub mod names;

use object_store::ObjectStore;
use std::path::PathBuf;
use std::sync::Arc;

/// A store opened from a URL.
pub struct Opened {
    pub store: Arc<dyn ObjectStore>,
    /// Where fencepost's keys start inside the store (no leading or trailing `/`).
    pub prefix: String,
    /// The folder of a `file://` store (whose pointer is swapped under a lock of ours).
    pub folder: Option<PathBuf>,
    /// The endpoint an `s3://` store is reached at, as given (credentials and all: only
    /// [`names::shown`] and [`names::target_key`], which drop them, may show it).
    pub endpoint: Option<String>,
}

/// Opens `url` with `settings` on top of the environment (e.g.
/// `("aws_endpoint", "http://127.0.0.1:9000")`). The error says why, without credentials.
pub fn open(url: &str, settings: &[(&str, &str)]) -> Result<Opened, String> {
    install_tls_provider();
    let parsed = url::Url::parse(url).map_err(|e| e.to_string())?;
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(
            "credentials do not belong in the URL: put them in the environment (AWS_ACCESS_KEY_ID, …)"
                .into(),
        );
    }
    let prefix = parsed.path().trim_matches('/').to_string();
    if prefix.split('/').any(|s| s == ".." || s == ".") {
        return Err("the prefix may not contain . or .. segments".into());
    }
    let bucket = parsed.host_str().unwrap_or_default().to_string();
    let opened = |store: Arc<dyn ObjectStore>, prefix: String| Opened {
        store,
        prefix,
        folder: None,
        endpoint: None,
    };
    Ok(match parsed.scheme() {
        "s3" | "s3a" => {
            let (store, endpoint) = s3_store(&bucket, settings)?;
            Opened {
                endpoint,
                ..opened(store, prefix)
            }
        }
        "gs" => {
            let store = object_store::gcp::GoogleCloudStorageBuilder::from_env()
                .with_url(format!("gs://{bucket}"))
                .build()
                .map_err(|e| e.to_string())?;
            opened(Arc::new(store), prefix)
        }
        "az" | "azure" | "abfs" | "abfss" => {
            let store = object_store::azure::MicrosoftAzureBuilder::from_env()
                .with_url(url)
                .build()
                .map_err(|e| e.to_string())?;
            opened(Arc::new(store), prefix)
        }
        "file" => {
            let root = parsed
                .to_file_path()
                .map_err(|_| "a file:// URL needs an absolute path".to_string())?;
            std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
            let store = object_store::local::LocalFileSystem::new_with_prefix(&root)
                .map_err(|e| e.to_string())?;
            Opened {
                folder: Some(root),
                ..opened(Arc::new(store), String::new())
            }
        }
        "memory" => opened(memory_store(&bucket), prefix),
        other => {
            return Err(format!(
                "unknown scheme {other}: use s3://, gs://, az://, file:// (or memory:// in tests)"
            ))
        }
    })
}

/// Makes `ring` the process's rustls provider, once: object_store's HTTP client is built
/// without one of its own (see Cargo.toml: aws-lc-rs, its default, is a C build that cost a
/// third of a clean release build), and takes the process's. A provider already installed
/// (by an embedding program) is kept.
fn install_tls_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Whether an `object_store` failure may pass if the call is made again: the store did not
/// answer, or answered with a server error; not a refusal of the request itself.
pub fn retryable(e: &object_store::Error) -> bool {
    use object_store::Error::*;
    !matches!(
        e,
        NotFound { .. }
            | AlreadyExists { .. }
            | Precondition { .. }
            | NotModified { .. }
            | NotSupported { .. }
            | NotImplemented { .. }
            | PermissionDenied { .. }
            | Unauthenticated { .. }
            | UnknownConfigurationKey { .. }
            | InvalidPath { .. }
    )
}

/// Whether `e` says the bucket (or Azure container) itself does not exist — S3's
/// `NoSuchBucket`, GCS's "The specified bucket does not exist", Azure's `ContainerNotFound`
/// — rather than an object in it: no retry helps, and the one way out is to create it or to
/// name another.
pub fn missing_bucket(e: &object_store::Error) -> bool {
    let text = e.to_string();
    text.contains("<Code>NoSuchBucket</Code>")
        || text.contains("The specified bucket does not exist")
        || text.contains("ContainerNotFound")
}

/// The bucket (or container) a store URL names: `s3://bucket/prefix` → `bucket`.
pub fn bucket_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}

/// An S3 store for `bucket` from the environment and `settings`, and the endpoint it is
/// reached at when one was chosen.
fn s3_store(
    bucket: &str,
    settings: &[(&str, &str)],
) -> Result<(Arc<dyn ObjectStore>, Option<String>), String> {
    let mut b = object_store::aws::AmazonS3Builder::from_env().with_url(format!("s3://{bucket}"));
    let mut endpoint = std::env::var("AWS_ENDPOINT_URL")
        .or_else(|_| std::env::var("AWS_ENDPOINT"))
        .unwrap_or_default();
    for (k, v) in settings {
        let key: object_store::aws::AmazonS3ConfigKey =
            k.parse().map_err(|_| format!("unknown S3 setting {k}"))?;
        if key == object_store::aws::AmazonS3ConfigKey::Endpoint {
            endpoint = v.to_string();
        }
        b = b.with_config(key, *v);
    }
    if endpoint.starts_with("http://") {
        b = b.with_allow_http(true);
    }
    refuse_no_credentials(bucket, settings)?;
    let store = b
        .build()
        .map_err(|e| names::redact_userinfo(&e.to_string()))?;
    Ok((Arc::new(store), (!endpoint.is_empty()).then_some(endpoint)))
}

/// Where object_store finds no credentials in the environment it asks the EC2 instance
/// metadata address — on a CI runner or a laptop, a wait and a refusal naming an address the
/// user never gave. So a store without credentials is refused by name at once, saying where
/// they come from. An EC2 instance (or ECS task) that relies on its instance profile says so
/// with `FENCEPOST_AWS_INSTANCE_METADATA=1`.
fn refuse_no_credentials(bucket: &str, settings: &[(&str, &str)]) -> Result<(), String> {
    let set = |k: &str| std::env::var(k).is_ok_and(|v| !v.trim().is_empty());
    let given = |k: &str| settings.iter().any(|(s, _)| s.eq_ignore_ascii_case(k));
    let keys =
        (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY")) || given("aws_access_key_id");
    let other = set("AWS_WEB_IDENTITY_TOKEN_FILE")
        || set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        || set("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        || std::env::var("AWS_SKIP_SIGNATURE").is_ok_and(|v| v == "true")
        || std::env::var("FENCEPOST_AWS_INSTANCE_METADATA").is_ok_and(|v| v == "1");
    match keys || other {
        true => Ok(()),
        false => Err(format!(
            "no credentials for s3://{bucket}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION, and AWS_ENDPOINT_URL for R2 or MinIO) in the environment, or AWS_WEB_IDENTITY_TOKEN_FILE for an OIDC role; on an EC2 instance with an instance profile, set FENCEPOST_AWS_INSTANCE_METADATA=1. Nothing was read or written"
        )),
    }
}

/// One in-memory store per name, for the process's lifetime (tests run deployers as threads
/// against the same `memory://name`).
fn memory_store(name: &str) -> Arc<dyn ObjectStore> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static STORES: OnceLock<Mutex<HashMap<String, Arc<dyn ObjectStore>>>> = OnceLock::new();
    STORES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .entry(name.to_string())
        .or_insert_with(|| Arc::new(object_store::memory::InMemory::new()))
        .clone()
}

//! TLS for the PostgreSQL ledger: the libpq options tokio-postgres does not read, and the
//! rustls connector (the system's roots, plus `sslrootcert`).

use crate::LedgerError;

/// Takes the libpq TLS options tokio-postgres does not parse out of the URL: `sslrootcert`
/// (a PEM file of CA certificates to trust besides the system's), and `sslmode=verify-ca` /
/// `verify-full`, which become `require` (fencepost always verifies the certificate and the
/// host name). Returns the URL without them, and the root certificate file if any
/// (`sslrootcert`, else `PGSSLROOTCERT`).
pub(super) fn tls_options(url: &str) -> (String, Option<std::path::PathBuf>) {
    let from_env = || std::env::var_os("PGSSLROOTCERT").map(std::path::PathBuf::from);
    let Ok(mut u) = url::Url::parse(url) else {
        return (url.to_string(), from_env());
    };
    let mut root = None;
    let kept: Vec<(String, String)> = u
        .query_pairs()
        .filter_map(|(k, v)| match (k.as_ref(), v.as_ref()) {
            ("sslrootcert", path) => {
                root = Some(std::path::PathBuf::from(path));
                None
            }
            ("sslmode", "verify-ca" | "verify-full") => Some((k.into_owned(), "require".into())),
            _ => Some((k.into_owned(), v.into_owned())),
        })
        .collect();
    if kept.is_empty() {
        u.set_query(None);
    } else {
        u.query_pairs_mut().clear().extend_pairs(kept);
    }
    (u.to_string(), root.or_else(from_env))
}

pub(super) fn tls(
    root_cert: Option<&std::path::Path>,
) -> Result<tokio_postgres_rustls::MakeRustlsConnect, LedgerError> {
    use rustls::pki_types::{pem::PemObject, CertificateDer};
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_native_certs::load_native_certs().certs {
        let _ = roots.add(cert);
    }
    if let Some(path) = root_cert {
        let bad = |why: String| {
            LedgerError::Location(format!(
                "sslrootcert {}: {why}; give a PEM file of CA certificates",
                path.display()
            ))
        };
        let mut added = 0;
        for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad(e.to_string()))? {
            let cert = cert.map_err(|e| bad(e.to_string()))?;
            roots.add(cert).map_err(|e| bad(e.to_string()))?;
            added += 1;
        }
        if added == 0 {
            return Err(bad("no certificate in it".into()));
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| LedgerError::Location(format!("TLS set-up failed: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

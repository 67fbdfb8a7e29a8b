//! TLS to PostgreSQL, as libpq's `sslmode` means it (rustls: no system library).
//!
//! | `sslmode` | encrypted | the server's certificate |
//! |---|---|---|
//! | `disable` | never | not asked for |
//! | `prefer` (the default) | when the server offers it | checked against the root certificates when there are any, else not |
//! | `require` | always | as `prefer` |
//! | `verify-ca` | always | signed by a root certificate |
//! | `verify-full` | always | signed by a root certificate and issued for the host connected to |
//!
//! The root certificates are `sslrootcert=FILE` (PEM), `sslrootcert=system`
//! (the host's store), else `~/.postgresql/root.crt` when it exists. A client
//! certificate is `sslcert` with `sslkey` (PEM), else
//! `~/.postgresql/postgresql.crt` with `postgresql.key` when both exist. Each
//! comes from the URL's query or, where it has none, from libpq's environment
//! variable (`PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY`).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use tokio_postgres_rustls::MakeRustlsConnect;

/// How much TLS a connection asks for (libpq's `sslmode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum SslMode {
    /// Plain TCP.
    Disable,
    /// TLS when the server offers it.
    #[default]
    Prefer,
    /// TLS, or no connection.
    Require,
    /// TLS with a certificate signed by a root certificate.
    VerifyCa,
    /// As `VerifyCa`, and the certificate names the host connected to.
    VerifyFull,
}

impl FromStr for SslMode {
    type Err = String;

    fn from_str(s: &str) -> Result<SslMode, String> {
        Ok(match s {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            "allow" => return Err(
                "sslmode=allow is not supported (netsonde tries TLS first): use prefer or disable"
                    .into(),
            ),
            other => {
                return Err(format!(
                "sslmode must be disable, prefer, require, verify-ca or verify-full, got '{other}'"
            ))
            }
        })
    }
}

impl SslMode {
    /// What the driver is told: it knows whether to ask, not what to check.
    fn wire(self) -> postgres::config::SslMode {
        match self {
            SslMode::Disable => postgres::config::SslMode::Disable,
            SslMode::Prefer => postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                postgres::config::SslMode::Require
            }
        }
    }
}

/// A URL's TLS options as given; the environment and the default files are
/// looked at when connecting ([`connector`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TlsOptions {
    mode: Option<SslMode>,
    root: Option<String>,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
}

/// The query keys taken out of a URL.
const KEYS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

impl TlsOptions {
    /// Takes libpq's TLS options out of a URL's query (the driver knows only
    /// three of the five modes and none of the files): the URL without them,
    /// and them.
    pub(crate) fn split(url: &str) -> Result<(String, TlsOptions), String> {
        let Some((base, query)) = url.split_once('?') else {
            return Ok((url.to_string(), TlsOptions::default()));
        };
        let mut opts = TlsOptions::default();
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            if !KEYS.contains(&key) {
                kept.push(pair);
                continue;
            }
            let value = percent_encoding::percent_decode_str(value)
                .decode_utf8()
                .map_err(|_| format!("{key} is not UTF-8 once decoded"))?
                .into_owned();
            if value.is_empty() {
                return Err(format!("{key} is empty"));
            }
            match key {
                "sslmode" => opts.mode = Some(value.parse()?),
                "sslrootcert" => opts.root = Some(value),
                "sslcert" => opts.cert = Some(value.into()),
                _ => opts.key = Some(value.into()),
            }
        }
        let url = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        Ok((url, opts))
    }

    /// The options in force: the URL's, else the environment's (`env`), else
    /// the files under `home`'s `.postgresql` that exist.
    fn resolve(
        &self,
        env: &dyn Fn(&str) -> Option<OsString>,
        home: Option<&Path>,
    ) -> Result<Resolved, String> {
        let var = |name: &str| env(name).filter(|v| !v.is_empty());
        let mode = match (self.mode, var("PGSSLMODE")) {
            (Some(m), _) => m,
            (None, Some(v)) => v
                .to_str()
                .ok_or("PGSSLMODE is not UTF-8")?
                .parse()
                .map_err(|e| format!("PGSSLMODE: {e}"))?,
            (None, None) => SslMode::default(),
        };
        let default = |name: &str| {
            home.map(|h| h.join(".postgresql").join(name))
                .filter(|p| p.is_file())
        };
        let root = match self
            .root
            .clone()
            .map(OsString::from)
            .or(var("PGSSLROOTCERT"))
        {
            Some(r) if r == "system" => Some(Roots::System),
            Some(r) => Some(Roots::File(r.into())),
            None => default("root.crt").map(Roots::File),
        };
        let cert = self.cert.clone().or(var("PGSSLCERT").map(PathBuf::from));
        let key = self.key.clone().or(var("PGSSLKEY").map(PathBuf::from));
        let client = match (cert, key) {
            (Some(c), Some(k)) => Some((c, k)),
            (Some(_), None) => return Err("sslcert is given without sslkey".into()),
            (None, Some(_)) => return Err("sslkey is given without sslcert".into()),
            (None, None) => default("postgresql.crt").zip(default("postgresql.key")),
        };
        Ok(Resolved { mode, root, client })
    }
}

/// Where the root certificates come from.
#[derive(Debug)]
enum Roots {
    File(PathBuf),
    System,
}

/// The options in force for one connection.
#[derive(Debug)]
struct Resolved {
    mode: SslMode,
    root: Option<Roots>,
    client: Option<(PathBuf, PathBuf)>,
}

/// The driver's TLS mode and the connector that checks the server's
/// certificate as `opts` (with the environment and default files) say; an
/// error names the option or file at fault.
pub(crate) fn connector(
    opts: &TlsOptions,
) -> Result<(postgres::config::SslMode, MakeRustlsConnect), String> {
    let home = dirs::home_dir();
    let r = opts.resolve(&|name| std::env::var_os(name), home.as_deref())?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots = match &r.root {
        Some(roots) if r.mode != SslMode::Disable => Some(Arc::new(load_roots(roots)?)),
        _ => None,
    };
    let chain = match (roots, r.mode) {
        (None, SslMode::VerifyCa | SslMode::VerifyFull) => {
            return Err(
                "sslmode=verify-ca and verify-full need root certificates: sslrootcert=FILE, \
                 sslrootcert=system or ~/.postgresql/root.crt"
                    .into(),
            )
        }
        (None, _) => None,
        (Some(roots), _) => Some(
            WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|e| format!("the root certificates: {e}"))?,
        ),
    };
    let verifier: Arc<dyn ServerCertVerifier> = match chain {
        Some(full) if r.mode == SslMode::VerifyFull => full,
        chain => Arc::new(AnyName {
            chain,
            provider: provider.clone(),
        }),
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    // Plain TCP reads no certificate file: a stale one must not stop it.
    let client = r.client.as_ref().filter(|_| r.mode != SslMode::Disable);
    let config = match client {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("sslcert {}: {e}", cert.display()))?;
            let key_der = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("sslkey {}: {e}", key.display()))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| format!("sslcert {} with sslkey: {e}", cert.display()))?
        }
    };
    Ok((r.mode.wire(), MakeRustlsConnect::new(config)))
}

/// The root certificates of a file or of the host's store.
fn load_roots(roots: &Roots) -> Result<RootCertStore, String> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::File(path) => {
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            for c in certs {
                store
                    .add(c)
                    .map_err(|e| format!("sslrootcert {}: {e}", path.display()))?;
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            store.add_parsable_certificates(found.certs);
        }
    }
    if store.is_empty() {
        return Err(match roots {
            Roots::File(p) => format!("sslrootcert {} holds no certificate", p.display()),
            Roots::System => "sslrootcert=system: the host's store holds no certificate".into(),
        });
    }
    Ok(store)
}

/// Checks a server's certificate as `prefer`, `require` and `verify-ca` do:
/// the chain to the root certificates when there are some (`chain`), whatever
/// host it names (a wrong name means a good chain: webpki checks the chain
/// first); else not at all, as libpq does without root certificates (the
/// connection encrypted, its peer unauthenticated). The handshake's own
/// signatures are checked either way.
#[derive(Debug)]
struct AnyName {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for AnyName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libpq_s_options_leave_the_url_and_the_rest_stays() {
        let (url, o) = TlsOptions::split(
            "postgres://u@h/db?sslmode=verify-full&connect_timeout=3&sslrootcert=%2Fetc%2Fca.pem",
        )
        .unwrap();
        assert_eq!(url, "postgres://u@h/db?connect_timeout=3");
        assert_eq!(o.mode, Some(SslMode::VerifyFull));
        assert_eq!(o.root.as_deref(), Some("/etc/ca.pem"));
        let (url, o) = TlsOptions::split("postgres://u@h/db?sslmode=disable").unwrap();
        assert_eq!(
            (url.as_str(), o.mode),
            ("postgres://u@h/db", Some(SslMode::Disable))
        );
        let (url, o) = TlsOptions::split("postgres://u@h/db").unwrap();
        assert_eq!(
            (url.as_str(), o),
            ("postgres://u@h/db", TlsOptions::default())
        );
        for (bad, says) in [
            ("postgres://h/db?sslmode=allow", "not supported"),
            ("postgres://h/db?sslmode=verify", "got 'verify'"),
            ("postgres://h/db?sslrootcert=", "sslrootcert is empty"),
            ("postgres://h/db?sslcert=%FF", "not UTF-8"),
        ] {
            let e = TlsOptions::split(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_url_wins_over_the_environment_which_wins_over_the_default_files() {
        let home = std::env::temp_dir().join(format!("netsonde-pgtls-{}", std::process::id()));
        let dot = home.join(".postgresql");
        std::fs::create_dir_all(&dot).unwrap();
        let none = |_: &str| None;
        // No file, no variable: prefer, nothing to check against.
        let r = TlsOptions::default().resolve(&none, Some(&home)).unwrap();
        assert_eq!(r.mode, SslMode::Prefer);
        assert!(r.root.is_none() && r.client.is_none());
        // libpq's default files count when they exist (a key alone does not).
        for f in ["root.crt", "postgresql.crt"] {
            std::fs::write(dot.join(f), "x").unwrap();
        }
        let r = TlsOptions::default().resolve(&none, Some(&home)).unwrap();
        assert!(matches!(r.root, Some(Roots::File(ref p)) if p.ends_with("root.crt")));
        assert!(r.client.is_none());
        std::fs::write(dot.join("postgresql.key"), "x").unwrap();
        let r = TlsOptions::default().resolve(&none, Some(&home)).unwrap();
        assert!(r.client.is_some());
        // The environment over the files; the URL over the environment.
        let env = |name: &str| match name {
            "PGSSLMODE" => Some("verify-ca".into()),
            "PGSSLROOTCERT" => Some("system".into()),
            _ => None,
        };
        let r = TlsOptions::default().resolve(&env, Some(&home)).unwrap();
        assert_eq!(r.mode, SslMode::VerifyCa);
        assert!(matches!(r.root, Some(Roots::System)));
        let (_, url) =
            TlsOptions::split("postgres://h/db?sslmode=require&sslrootcert=/ca").unwrap();
        let r = url.resolve(&env, Some(&home)).unwrap();
        assert_eq!(r.mode, SslMode::Require);
        assert!(matches!(r.root, Some(Roots::File(ref p)) if p == Path::new("/ca")));
        let bad = |name: &str| (name == "PGSSLMODE").then(|| "maybe".into());
        let e = TlsOptions::default().resolve(&bad, None).unwrap_err();
        assert!(e.starts_with("PGSSLMODE: sslmode must be"), "{e}");
        let (_, half) = TlsOptions::split("postgres://h/db?sslcert=/c.pem").unwrap();
        assert!(half
            .resolve(&none, None)
            .unwrap_err()
            .contains("without sslkey"));
        let _ = std::fs::remove_dir_all(&home);
    }

    #[test]
    fn plain_tcp_reads_no_certificate_file() {
        let url = "postgres://h/db?sslmode=disable&sslrootcert=/none/ca.pem\
                   &sslcert=/none/c.pem&sslkey=/none/k.pem";
        let (_, o) = TlsOptions::split(url).unwrap();
        let (mode, _) = connector(&o).unwrap();
        assert_eq!(mode, postgres::config::SslMode::Disable);
        let (_, o) = TlsOptions::split(&url.replace("disable", "require")).unwrap();
        let e = connector(&o).err().unwrap();
        assert!(e.starts_with("sslrootcert /none/ca.pem:"), "{e}");
    }

    #[test]
    fn verifying_needs_root_certificates_and_a_file_must_hold_one() {
        let (_, o) = TlsOptions::split("postgres://h/db?sslmode=verify-full").unwrap();
        // The home folder may hold a root.crt: point it elsewhere.
        let r = o.resolve(&|_| None, None).unwrap();
        assert!(r.root.is_none());
        let empty = std::env::temp_dir().join(format!("netsonde-noca-{}.pem", std::process::id()));
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = load_roots(&Roots::File(empty.clone())).unwrap_err();
        assert!(e.contains("holds no certificate"), "{e}");
        let _ = std::fs::remove_file(&empty);
        let e = load_roots(&Roots::File("/nonexistent/ca.pem".into())).unwrap_err();
        assert!(e.starts_with("sslrootcert /nonexistent/ca.pem:"), "{e}");
    }
}

//! The store over TLS to a real PostgreSQL server (a throw-away one per test,
//! `ssl = on`, its certificate from a test CA made here), as libpq's
//! `sslmode` means it. The server takes connections over TLS only
//! (`hostssl` in its `pg_hba.conf`, no `host` line), so a store that opens
//! proves its connection was encrypted.

use std::path::PathBuf;

use netsonde_store::{Location, Store, StoreError};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

use crate::pg_util::Postgres;

/// A test CA, and certificates it signed.
struct Ca {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let pem = params.self_signed(&key).unwrap().pem();
        Ca {
            issuer: Issuer::new(params, key),
            pem,
        }
    }

    /// A certificate for `names` (DNS names) with common name `cn`: its PEM and
    /// its key's.
    fn sign(&self, cn: &str, names: &[&str]) -> (String, String) {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// A PostgreSQL server that takes TLS connections only, with a certificate for
/// `localhost` signed by `ca`; `hba_auth` is how it authenticates (`trust`, or
/// `cert` for a client certificate signed by `ca`).
fn tls_server(test: &str, ca: &Ca, hba_auth: &str) -> Option<Postgres> {
    let (cert, key) = ca.sign("localhost", &["localhost"]);
    Postgres::start_with(test, &|pg| {
        pg.private_file("server.crt", &cert)?;
        pg.private_file("server.key", &key)?;
        pg.private_file("root.crt", &ca.pem)?;
        pg.configure(
            "postgresql.conf",
            "ssl = on\nssl_cert_file = 'server.crt'\nssl_key_file = 'server.key'\n\
             ssl_ca_file = 'root.crt'",
            false,
        )?;
        pg.configure(
            "pg_hba.conf",
            &format!("local all all trust\nhostssl all all 127.0.0.1/32 {hba_auth}"),
            true,
        )
    })
}

/// A file of the test's own under the temp folder, removed by the caller.
fn file(name: &str, contents: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("netsonde-tls-{}-{name}", std::process::id()));
    std::fs::write(&path, contents).unwrap();
    path
}

fn open(url: &str) -> Result<Store, StoreError> {
    Store::open_at(&url.parse::<Location>().unwrap())
}

/// Opening `url` fails with one line that says `says`.
fn refused(url: &str, says: &str) {
    let e = open(url).err().unwrap_or_else(|| panic!("{url} connected"));
    let line = chain(&e);
    assert!(line.contains(says), "{url}: {line}");
    assert!(!line.contains('\n'), "{line}");
}

/// The error's whole chain on one line, as the binary prints it.
fn chain(e: &StoreError) -> String {
    let mut s = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(e) = src {
        s.push_str(": ");
        s.push_str(&e.to_string());
        src = e.source();
    }
    s
}

#[test]
fn the_store_connects_over_tls_as_sslmode_asks_and_checks_what_it_says() {
    let test = "the_store_connects_over_tls_as_sslmode_asks_and_checks_what_it_says";
    let ca = Ca::new("netsonde test CA");
    let Some(pg) = tls_server(test, &ca, "trust") else {
        return;
    };
    let ca_file = file("ca.pem", &ca.pem);
    let other = file("other.pem", &Ca::new("someone else's CA").pem);
    let port = pg.port();
    let by_ip = format!("postgres://netsonde@127.0.0.1:{port}/postgres");
    // The certificate names localhost: reach it by that name, at its address.
    let by_name = format!("postgres://netsonde@localhost:{port}/postgres?hostaddr=127.0.0.1");
    let root = |f: &PathBuf| format!("sslrootcert={}", f.display());

    // Encrypted: by default (prefer), and when required, checking nothing.
    for url in [by_ip.clone(), format!("{by_ip}?sslmode=require")] {
        let store = open(&url).unwrap_or_else(|e| panic!("{url}: {}", chain(&e)));
        assert!(store.runs().unwrap().is_empty(), "{url}");
    }
    // The chain to the CA, whatever the name; and the name too.
    for url in [
        format!("{by_ip}?sslmode=verify-ca&{}", root(&ca_file)),
        format!("{by_name}&sslmode=verify-full&{}", root(&ca_file)),
        format!("{by_ip}?sslmode=require&{}", root(&ca_file)),
    ] {
        open(&url).unwrap_or_else(|e| panic!("{url}: {}", chain(&e)));
    }
    // What each check refuses, and what plain TCP gets from this server.
    for (url, says) in [
        (
            format!("{by_ip}?sslmode=verify-full&{}", root(&ca_file)),
            "not valid for name \"127.0.0.1\"",
        ),
        (
            format!("{by_ip}?sslmode=verify-ca&{}", root(&other)),
            "UnknownIssuer",
        ),
        (
            format!("{by_ip}?sslmode=require&{}", root(&other)),
            "UnknownIssuer",
        ),
        (format!("{by_ip}?sslmode=disable"), "no encryption"),
        (
            format!("{by_ip}?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"),
            "sslrootcert /nonexistent/ca.pem",
        ),
    ] {
        refused(&url, says);
    }
    let _ = std::fs::remove_file(ca_file);
    let _ = std::fs::remove_file(other);
}

#[test]
fn a_server_that_wants_a_client_certificate_gets_the_one_named() {
    let test = "a_server_that_wants_a_client_certificate_gets_the_one_named";
    let ca = Ca::new("netsonde test CA");
    let Some(pg) = tls_server(test, &ca, "cert") else {
        return;
    };
    // `cert` authentication: the certificate's common name is the user.
    let (cert, key) = ca.sign("netsonde", &[]);
    let (cert, key) = (file("client.crt", &cert), file("client.key", &key));
    let url = format!(
        "postgres://netsonde@127.0.0.1:{}/postgres?sslmode=require&sslcert={}&sslkey={}",
        pg.port(),
        cert.display(),
        key.display()
    );
    open(&url).unwrap_or_else(|e| panic!("{url}: {}", chain(&e)));
    let without = format!(
        "postgres://netsonde@127.0.0.1:{}/postgres?sslmode=require",
        pg.port()
    );
    refused(&without, "certificate");
    let half = format!("{without}&sslcert={}", cert.display());
    refused(&half, "sslcert is given without sslkey");
    let _ = std::fs::remove_file(cert);
    let _ = std::fs::remove_file(key);
}

#[test]
fn a_server_without_tls_is_plain_by_default_and_refused_when_tls_is_required() {
    let test = "a_server_without_tls_is_plain_by_default_and_refused_when_tls_is_required";
    let Some(pg) = Postgres::start(test) else {
        return;
    };
    // prefer (the default) falls back to plain TCP, as libpq does.
    open(&pg.url).unwrap_or_else(|e| panic!("{}: {}", pg.url, chain(&e)));
    let ca = file("plain-ca.pem", &Ca::new("netsonde test CA").pem);
    for mode in ["require", "verify-full"] {
        let url = format!("{}?sslmode={mode}&sslrootcert={}", pg.url, ca.display());
        refused(&url, "server does not support TLS");
    }
    let _ = std::fs::remove_file(ca);
}

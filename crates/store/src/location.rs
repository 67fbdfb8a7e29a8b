//! Where a store lives: a SQLite file, or a PostgreSQL database named by a
//! `postgres://` URL. What `--db` takes.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use crate::pg_tls::TlsOptions;

/// A store's place.
#[derive(Debug, Clone, PartialEq)]
pub enum Location {
    /// A SQLite file (created with its folders when missing).
    File(PathBuf),
    /// A PostgreSQL database shared by many controllers.
    Postgres(Box<PgUrl>),
}

impl Location {
    /// The default place, [`crate::Store::default_path`].
    pub fn default_file() -> Location {
        Location::File(crate::Store::default_path())
    }

    /// The location as `--db` takes it, password included: for handing to a
    /// child process, never for showing (`Display` leaves the password out).
    pub fn arg(&self) -> String {
        match self {
            Location::File(p) => p.display().to_string(),
            Location::Postgres(u) => u.raw.clone(),
        }
    }

    /// The file, for a SQLite store.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            Location::File(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }
}

impl FromStr for Location {
    type Err = String;

    /// `postgres://` or `postgresql://` URLs name a PostgreSQL database; anything
    /// else is a file's path.
    fn from_str(s: &str) -> Result<Location, String> {
        if s.is_empty() {
            return Err("the results store's location is empty".into());
        }
        if s.starts_with("postgres://") || s.starts_with("postgresql://") {
            return s.parse().map(|u| Location::Postgres(Box::new(u)));
        }
        // A libpq keyword string ("host=db user=ns password=... dbname=r") is
        // not a file's name: made one, it held the password in clear and
        // wrote nothing to PostgreSQL. Refused, without echoing it.
        if s.contains('=') {
            return Err(
                "a store's location with '=' in it (a libpq keyword string?) is not taken: \
                 give a postgres://USER@HOST:PORT/DB URL (the password in PGPASSWORD or a \
                 passfile), or a file name without '='"
                    .into(),
            );
        }
        Ok(Location::File(PathBuf::from(s)))
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(p) => write!(f, "{}", p.display()),
            Location::Postgres(u) => u.fmt(f),
        }
    }
}

/// A PostgreSQL connection URL, checked when parsed. It is shown without its
/// password, and its `Debug` form too, so logs and errors never carry one.
#[derive(Clone)]
pub struct PgUrl {
    config: postgres::Config,
    tls: TlsOptions,
    shown: String,
    raw: String,
}

impl PgUrl {
    pub(crate) fn config(&self) -> &postgres::Config {
        &self.config
    }

    /// Its TLS options as given (`sslmode`, `sslrootcert`, `sslcert`, `sslkey`).
    pub(crate) fn tls(&self) -> &TlsOptions {
        &self.tls
    }
}

impl PartialEq for PgUrl {
    fn eq(&self, other: &PgUrl) -> bool {
        self.shown == other.shown
            && self.tls == other.tls
            && self.config.get_password() == other.config.get_password()
    }
}

impl FromStr for PgUrl {
    type Err = String;

    /// A `service=NAME` parameter (or `PGSERVICE`) fills what the URL leaves
    /// out (host, port, dbname, user, password, connect_timeout) from libpq's
    /// connection service file ([`crate::secrets::service`]).
    fn from_str(s: &str) -> Result<PgUrl, String> {
        let (rest, tls) = TlsOptions::split(s).map_err(|e| format!("not a PostgreSQL URL: {e}"))?;
        let (rest, service) = crate::secrets::split_service(&rest);
        let mut config: postgres::Config = rest
            .parse()
            .map_err(|e| format!("not a PostgreSQL URL: {e}"))?;
        if let Some(name) = service.or_else(|| std::env::var("PGSERVICE").ok()) {
            for (k, v) in crate::secrets::service(&name)? {
                match k.as_str() {
                    "host" if config.get_hosts().is_empty() => {
                        config.host(&v);
                    }
                    "port" if config.get_ports().is_empty() => {
                        config.port(
                            v.parse()
                                .map_err(|_| format!("service {name}: port '{v}'"))?,
                        );
                    }
                    "dbname" if config.get_dbname().is_none() => {
                        config.dbname(&v);
                    }
                    "user" if config.get_user().is_none() => {
                        config.user(&v);
                    }
                    "password" if config.get_password().is_none() => {
                        config.password(&v);
                    }
                    "connect_timeout" if config.get_connect_timeout().is_none() => {
                        let secs: u64 = v
                            .parse()
                            .map_err(|_| format!("service {name}: connect_timeout '{v}'"))?;
                        config.connect_timeout(std::time::Duration::from_secs(secs));
                    }
                    _ => {}
                }
            }
        }
        let hosts: Vec<String> = config
            .get_hosts()
            .iter()
            .zip(config.get_ports().iter().chain(std::iter::repeat(&5432)))
            .map(|(h, port)| match h {
                postgres::config::Host::Tcp(h) => format!("{h}:{port}"),
                postgres::config::Host::Unix(p) => format!("[{}]:{port}", p.display()),
            })
            .collect();
        let user = config
            .get_user()
            .map(|u| format!("{u}@"))
            .unwrap_or_default();
        let db = config.get_dbname().unwrap_or_default();
        let shown = format!("postgres://{user}{}/{db}", hosts.join(","));
        Ok(PgUrl {
            config,
            tls,
            shown,
            raw: s.to_string(),
        })
    }
}

impl fmt::Display for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgUrl({})", self.shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_databases_and_the_rest_files() {
        let pg: Location = "postgres://ns:secret@db.example:6543/results"
            .parse()
            .unwrap();
        assert_eq!(pg.to_string(), "postgres://ns@db.example:6543/results");
        assert!(!format!("{pg:?}").contains("secret"));
        assert!(pg.file().is_none());
        assert_eq!(pg.arg(), "postgres://ns:secret@db.example:6543/results");
        let file: Location = "/tmp/x.db".parse().unwrap();
        assert_eq!(file.file(), Some(std::path::Path::new("/tmp/x.db")));
        assert!("".parse::<Location>().is_err());
        assert!("postgres://h:notaport/db".parse::<Location>().is_err());
        // Issue 51: a libpq keyword string is refused, never a file, and the
        // refusal does not repeat its password.
        let e = "host=db user=u password=secret dbname=ns3"
            .parse::<Location>()
            .unwrap_err();
        assert!(e.contains("postgres://") && !e.contains("secret"), "{e}");
        let default_port: Location = "postgresql://h/db".parse().unwrap();
        assert_eq!(default_port.to_string(), "postgres://h:5432/db");
    }
}

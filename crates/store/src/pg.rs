//! The PostgreSQL side of the store: connecting, its migrations, the run locks
//! (session advisory locks), and turning [`Value`]s into parameters and result
//! rows into [`Row`]s.
//!
//! The schema is SQLite's, in PostgreSQL's types: every integer `BIGINT`, every
//! real `DOUBLE PRECISION`, ids from identity columns. Its version lives in the
//! one-row table `netsonde_schema`; migrations run one per transaction under a
//! transaction-scoped advisory lock, so controllers that open a new database at
//! once apply each migration once.

use std::borrow::Cow;
use std::error::Error;
use std::time::Duration;

use bytes::BytesMut;
use postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use postgres::Client;

use crate::location::PgUrl;
use crate::value::{Row, Value};
use crate::{RunId, StoreError};

/// Every migration, oldest first, the same numbers as SQLite's
/// [`crate::MIGRATIONS`]. Released entries are never edited.
pub const PG_MIGRATIONS: &[&str] = &[
    include_str!("migrations/postgres/0001_initial.sql"),
    include_str!("migrations/postgres/0002_link_and_status_index.sql"),
    include_str!("migrations/postgres/0003_attempts.sql"),
];

const _: () = assert!(PG_MIGRATIONS.len() == crate::MIGRATIONS.len());

/// The first key of every advisory lock netsonde takes ("nsde"); the second is
/// the run's id, or 0 for migrations.
const LOCK_SPACE: i32 = 0x6e73_6465;

/// How long connecting may take before it fails, unless the URL says
/// (`connect_timeout`): the TCP connection, TLS and the server's greeting all
/// within it.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one statement may run on the server before it cancels it
/// (`statement_timeout`), unless the URL's `options` set one.
const STATEMENT_TIMEOUT: Duration = Duration::from_secs(60);

/// Connects, over TLS as its `sslmode` says ([`crate::pg_tls`]), with the
/// password from the URL, else `PGPASSWORD`, else the passfile
/// ([`crate::secrets::passfile_password`]). The whole of connecting (a server
/// that accepts TCP and never answers included) is bounded by the connect
/// timeout, and each statement by [`STATEMENT_TIMEOUT`] on the server's side;
/// a lost server is noticed by TCP keepalives.
pub(crate) fn connect(url: &PgUrl) -> Result<Client, StoreError> {
    let (mode, tls) = crate::pg_tls::connector(url.tls()).map_err(|reason| StoreError::Tls {
        target: url.to_string(),
        reason,
    })?;
    let mut config = url.config().clone();
    if config.get_password().is_none() {
        if let Some(pw) = std::env::var_os("PGPASSWORD") {
            config.password(pw.as_encoded_bytes());
        } else if let Some(pw) = passfile(&config) {
            config.password(pw);
        }
    }
    let deadline = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT);
    config.connect_timeout(deadline);
    if config.get_options().is_none() {
        config.options(&format!(
            "-c statement_timeout={}",
            STATEMENT_TIMEOUT.as_millis()
        ));
    }
    config.keepalives(true);
    config.keepalives_idle(Duration::from_secs(30));
    config.application_name("netsonde");
    config.ssl_mode(mode);
    // The driver's timeout covers the TCP connection only: a server that takes
    // it and never answers would hold connect() for ever. A thread of its own
    // connects; past the deadline it is left to finish or fail on its own.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("pg-connect".into())
        .spawn(move || {
            let _ = tx.send(config.connect(tls));
        })
        .map_err(|e| StoreError::Timeout {
            target: url.to_string(),
            what: format!("connecting (no thread: {e})"),
        })?;
    match rx.recv_timeout(deadline) {
        Ok(r) => r.map_err(|source| StoreError::Connect {
            target: url.to_string(),
            source,
        }),
        Err(_) => Err(StoreError::Timeout {
            target: url.to_string(),
            what: format!(
                "no answer within {} s of connecting (set ?connect_timeout=SECONDS)",
                deadline.as_secs_f64()
            ),
        }),
    }
}

/// The passfile's password for `config`'s first host, port, database and user
/// (libpq's defaults: port 5432, the database named as the user, the user as
/// `PGUSER` or the login).
fn passfile(config: &postgres::Config) -> Option<String> {
    let host = match config.get_hosts().first()? {
        postgres::config::Host::Tcp(h) => h.clone(),
        postgres::config::Host::Unix(_) => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(str::to_owned)
        .or_else(|| std::env::var("PGUSER").ok())
        .or_else(|| std::env::var("USER").ok())?;
    let db = config.get_dbname().map_or(user.clone(), str::to_owned);
    crate::secrets::passfile_password(&host, port, &db, &user)
        .ok()
        .flatten()
}

/// Applies the migrations the database lacks.
pub(crate) fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let supported = crate::Store::SCHEMA_VERSION;
    loop {
        let mut tx = client.transaction()?;
        tx.execute("SELECT pg_advisory_xact_lock($1, 0)", &[&LOCK_SPACE])?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS netsonde_schema (version BIGINT NOT NULL)")?;
        let found: i64 = match tx.query_opt("SELECT version FROM netsonde_schema", &[])? {
            Some(row) => row.try_get(0)?,
            None => {
                tx.execute("INSERT INTO netsonde_schema (version) VALUES (0)", &[])?;
                0
            }
        };
        let version = match u32::try_from(found) {
            Ok(v) if v <= supported => v,
            _ => return Err(StoreError::NewerSchema { found, supported }),
        };
        if version == supported {
            tx.commit()?;
            return Ok(());
        }
        tx.batch_execute(PG_MIGRATIONS[version as usize])?;
        tx.execute(
            "UPDATE netsonde_schema SET version = $1",
            &[&i64::from(version + 1)],
        )?;
        tx.commit()?;
    }
}

/// The database's schema is this build's (for a store opened to read only).
pub(crate) fn check_version(client: &mut Client) -> Result<(), StoreError> {
    crate::schema::version_is_current(schema_version(client)?)
}

/// Whether the database holds a netsonde store at all (its schema table, in
/// the connection's `search_path`): a fresh database does not until the first
/// command that writes.
pub(crate) fn has_store(client: &mut Client) -> Result<bool, StoreError> {
    Ok(client
        .query_one("SELECT to_regclass('netsonde_schema') IS NOT NULL", &[])?
        .try_get(0)?)
}

/// The database's schema version.
pub(crate) fn schema_version(client: &mut Client) -> Result<i64, StoreError> {
    Ok(client
        .query_one("SELECT version FROM netsonde_schema", &[])?
        .try_get(0)?)
}

/// Takes run `run` on a connection of its own and returns it: the session
/// advisory lock lasts while the connection does, and the server drops it when
/// the connection closes, however the process ends.
pub(crate) fn lock_run(url: &PgUrl, run: RunId) -> Result<Client, StoreError> {
    let key = i32::try_from(run).map_err(|_| StoreError::TooLarge {
        what: "run id (PostgreSQL lock key)",
        value: run.unsigned_abs(),
    })?;
    let mut client = connect(url)?;
    let got: bool = client
        .query_one("SELECT pg_try_advisory_lock($1, $2)", &[&LOCK_SPACE, &key])?
        .try_get(0)?;
    if got {
        Ok(client)
    } else {
        Err(StoreError::RunLocked {
            run,
            lock: format!("PostgreSQL advisory lock ({LOCK_SPACE}, {run}) in {url}"),
        })
    }
}

/// SQLite's `?N` placeholders as PostgreSQL's `$N`. Every `?` is one: the
/// store's SQL has none in a literal or name (values are always bound).
pub(crate) fn sql(sql: &str) -> Cow<'_, str> {
    if sql.contains('?') {
        Cow::Owned(sql.replace('?', "$"))
    } else {
        Cow::Borrowed(sql)
    }
}

/// The parameters as the driver takes them.
pub(crate) fn params(values: &[Value]) -> Vec<&(dyn ToSql + Sync)> {
    values.iter().map(|v| v as &(dyn ToSql + Sync)).collect()
}

/// A result row, each column as the [`Value`] of its type.
pub(crate) fn row(row: &postgres::Row) -> Result<Row, StoreError> {
    let mut out = Vec::with_capacity(row.len());
    for (i, col) in row.columns().iter().enumerate() {
        let v = match *col.type_() {
            Type::INT8 => row.try_get::<_, Option<i64>>(i)?.map(Value::Int),
            Type::INT4 => row
                .try_get::<_, Option<i32>>(i)?
                .map(|v| Value::Int(v.into())),
            Type::INT2 => row
                .try_get::<_, Option<i16>>(i)?
                .map(|v| Value::Int(v.into())),
            Type::BOOL => row
                .try_get::<_, Option<bool>>(i)?
                .map(|v| Value::Int(v.into())),
            Type::FLOAT8 => row.try_get::<_, Option<f64>>(i)?.map(Value::Real),
            Type::FLOAT4 => row
                .try_get::<_, Option<f32>>(i)?
                .map(|v| Value::Real(v.into())),
            Type::TEXT | Type::VARCHAR | Type::NAME | Type::BPCHAR => {
                row.try_get::<_, Option<String>>(i)?.map(Value::Text)
            }
            ref t => {
                return Err(StoreError::Column(format!(
                    "column {i} ({}): PostgreSQL type {t} is not one the store reads",
                    col.name()
                )))
            }
        };
        out.push(v.unwrap_or(Value::Null));
    }
    Ok(Row(out))
}

impl ToSql for Value {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match self {
            Value::Null => Ok(IsNull::Yes),
            Value::Int(v) => match *ty {
                Type::INT4 => i32::try_from(*v)?.to_sql_checked(ty, out),
                Type::INT2 => i16::try_from(*v)?.to_sql_checked(ty, out),
                _ => v.to_sql_checked(ty, out),
            },
            Value::Real(v) => v.to_sql_checked(ty, out),
            Value::Text(s) => s.as_str().to_sql_checked(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered_the_same() {
        assert_eq!(
            sql("UPDATE t SET a = ?2 WHERE id = ?1"),
            "UPDATE t SET a = $2 WHERE id = $1"
        );
        assert!(matches!(sql("SELECT 1"), Cow::Borrowed(_)));
    }

    #[test]
    fn the_migrations_speak_postgresql() {
        for m in PG_MIGRATIONS {
            assert!(!m.contains("AUTOINCREMENT"), "{m}");
            assert!(!m.contains(" REAL "), "{m}");
            assert!(!m.contains(" INTEGER "), "{m}");
        }
    }

    #[test]
    fn values_bind_to_their_column_types_or_refuse() {
        let mut out = BytesMut::new();
        assert!(Value::Int(7).to_sql_checked(&Type::INT4, &mut out).is_ok());
        assert!(Value::Int(i64::MAX)
            .to_sql_checked(&Type::INT4, &mut out)
            .is_err());
        assert!(Value::Int(7).to_sql_checked(&Type::TEXT, &mut out).is_err());
        assert!(Value::Text("x".into())
            .to_sql_checked(&Type::INT8, &mut out)
            .is_err());
        assert!(matches!(
            Value::Null.to_sql_checked(&Type::TEXT, &mut out),
            Ok(IsNull::Yes)
        ));
    }
}

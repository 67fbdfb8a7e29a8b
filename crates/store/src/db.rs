//! One database connection, SQLite or PostgreSQL, behind the few operations the
//! store needs: a transaction that writes, one that reads, and in it statements
//! with positional parameters (`?1`, `?2`... in SQLite's spelling; PostgreSQL's
//! `$1` is derived) returning [`Row`]s of [`Value`]s.

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::TransactionBehavior;

use crate::pg;
use crate::value::{Row, Value};
use crate::StoreError;

/// The open connection.
pub(crate) enum Conn {
    Sqlite(rusqlite::Connection),
    Postgres(Box<postgres::Client>),
}

impl std::fmt::Debug for Conn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Conn::Sqlite(c) => f.debug_tuple("Sqlite").field(c).finish(),
            Conn::Postgres(_) => f.write_str("Postgres"),
        }
    }
}

/// A transaction on a [`Conn`]; dropped without [`Tx::commit`], it rolls back.
pub(crate) enum Tx<'a> {
    Sqlite(rusqlite::Transaction<'a>),
    Postgres(postgres::Transaction<'a>),
}

impl Conn {
    /// Runs `f` in a transaction that may write, committed when `f` succeeds. In
    /// SQLite it takes the write lock at `BEGIN`, so it never fails half-way
    /// because another writer got there first.
    pub(crate) fn write<T>(
        &mut self,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut tx = match self {
            Conn::Sqlite(c) => {
                Tx::Sqlite(c.transaction_with_behavior(TransactionBehavior::Immediate)?)
            }
            Conn::Postgres(c) => Tx::Postgres(c.transaction()?),
        };
        let out = f(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Runs `f` in a transaction that only reads: one consistent view, no write
    /// lock.
    pub(crate) fn read<T>(
        &mut self,
        f: impl FnOnce(&mut Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut tx = match self {
            Conn::Sqlite(c) => {
                Tx::Sqlite(c.transaction_with_behavior(TransactionBehavior::Deferred)?)
            }
            Conn::Postgres(c) => Tx::Postgres(c.build_transaction().read_only(true).start()?),
        };
        let out = f(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }
}

impl Tx<'_> {
    fn commit(self) -> Result<(), StoreError> {
        match self {
            Tx::Sqlite(tx) => tx.commit()?,
            Tx::Postgres(tx) => tx.commit()?,
        }
        Ok(())
    }

    /// Runs one statement; the number of rows it changed.
    pub(crate) fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        Ok(match self {
            Tx::Sqlite(tx) => {
                let n = tx
                    .prepare_cached(sql)?
                    .execute(rusqlite::params_from_iter(params))?;
                n as u64
            }
            Tx::Postgres(tx) => tx.execute(pg::sql(sql).as_ref(), &pg::params(params))?,
        })
    }

    /// Runs one statement once per parameter list, prepared once.
    pub(crate) fn execute_each(
        &mut self,
        sql: &str,
        rows: impl IntoIterator<Item = Result<Vec<Value>, StoreError>>,
    ) -> Result<(), StoreError> {
        match self {
            Tx::Sqlite(tx) => {
                let mut stmt = tx.prepare_cached(sql)?;
                for row in rows {
                    stmt.execute(rusqlite::params_from_iter(&row?))?;
                }
            }
            Tx::Postgres(tx) => {
                let stmt = tx.prepare(pg::sql(sql).as_ref())?;
                for row in rows {
                    tx.execute(&stmt, &pg::params(&row?))?;
                }
            }
        }
        Ok(())
    }

    /// Runs a query; every row it returns.
    pub(crate) fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        match self {
            Tx::Sqlite(tx) => {
                let mut stmt = tx.prepare_cached(sql)?;
                let n = stmt.column_count();
                let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let row = (0..n)
                        .map(|i| sqlite_value(i, r.get_ref(i)?))
                        .collect::<Result<_, StoreError>>()?;
                    out.push(Row(row));
                }
                Ok(out)
            }
            Tx::Postgres(tx) => tx
                .query(pg::sql(sql).as_ref(), &pg::params(params))?
                .iter()
                .map(pg::row)
                .collect(),
        }
    }

    /// Runs a query; its first row, if any.
    pub(crate) fn query_opt(
        &mut self,
        sql: &str,
        params: &[Value],
    ) -> Result<Option<Row>, StoreError> {
        Ok(self.query(sql, params)?.into_iter().next())
    }

    /// Runs a query that returns exactly one row.
    pub(crate) fn query_one(&mut self, sql: &str, params: &[Value]) -> Result<Row, StoreError> {
        self.query_opt(sql, params)?
            .ok_or_else(|| StoreError::Column(format!("no row from {sql}")))
    }
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Value::Null => ValueRef::Null,
            Value::Int(v) => ValueRef::Integer(*v),
            Value::Real(v) => ValueRef::Real(*v),
            Value::Text(s) => ValueRef::Text(s.as_bytes()),
        }))
    }
}

fn sqlite_value(i: usize, v: ValueRef<'_>) -> Result<Value, StoreError> {
    Ok(match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(v) => Value::Int(v),
        ValueRef::Real(v) => Value::Real(v),
        ValueRef::Text(t) => Value::Text(
            String::from_utf8(t.to_vec())
                .map_err(|_| StoreError::Column(format!("column {i}: text is not UTF-8")))?,
        ),
        ValueRef::Blob(_) => {
            return Err(StoreError::Column(format!(
                "column {i}: a blob, which the store never writes"
            )))
        }
    })
}

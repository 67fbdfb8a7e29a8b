//! Opening a store to read only ([`Store::open_read_only`]): for the commands
//! that write nothing, so a store on a read-only mount, or one this user may
//! only read, serves them.

use std::cell::RefCell;

use super::Store;
use crate::db::Conn;
use crate::error::StoreError;
use crate::location::Location;
use crate::{pg, schema};

impl Store {
    /// Opens the store at `location` to read only: nothing is created, migrated
    /// or written, so a store on a read-only mount, or one this user may only
    /// read, can be listed, shown, reported and compared. A SQLite file that
    /// cannot be opened read-only in the ordinary way (a WAL database whose
    /// shared-memory file cannot be made on a read-only mount) is opened as
    /// immutable. Its schema must be this build's; an older one is migrated by
    /// any command that writes.
    pub fn open_read_only(location: &Location) -> Result<Store, StoreError> {
        match location {
            // Nothing stored yet: an empty store to read, and no file made.
            Location::File(path) if !path.exists() => Store::open_in_memory(),
            Location::File(path) => {
                use rusqlite::OpenFlags;
                let open_err = |source| StoreError::Open {
                    path: path.to_path_buf(),
                    source,
                };
                let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let readable = |conn: rusqlite::Connection| -> rusqlite::Result<_> {
                    conn.busy_timeout(schema::BUSY_TIMEOUT)?;
                    schema::user_version(&conn)?;
                    Ok(conn)
                };
                let conn = rusqlite::Connection::open_with_flags(path, flags)
                    .and_then(readable)
                    .or_else(|_| {
                        let uri = format!("file:{}?immutable=1", path.display());
                        rusqlite::Connection::open_with_flags(
                            uri,
                            flags | OpenFlags::SQLITE_OPEN_URI,
                        )
                        .and_then(readable)
                    })
                    .map_err(open_err)?;
                schema::check_version(&conn)?;
                Ok(Store {
                    conn: RefCell::new(Conn::Sqlite(conn)),
                    location: Some(location.clone()),
                })
            }
            // A PostgreSQL user may hold only SELECT: connect, and check the
            // schema without migrating it.
            Location::Postgres(url) => {
                let mut client = pg::connect(url)?;
                // Nothing stored there yet: an empty store to read, as for a
                // file not made yet; nothing is created in the database.
                if !pg::has_store(&mut client)? {
                    return Store::open_in_memory();
                }
                pg::check_version(&mut client)?;
                Ok(Store {
                    conn: RefCell::new(Conn::Postgres(Box::new(client))),
                    location: Some(location.clone()),
                })
            }
        }
    }
}

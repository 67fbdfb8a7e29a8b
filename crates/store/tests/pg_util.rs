//! A throw-away PostgreSQL server for tests: `initdb` into a temporary folder,
//! `pg_ctl start` on a free loopback port with its socket in that folder, and
//! on drop `pg_ctl stop -m immediate` and the folder removed. As root, the
//! server runs as `nobody` (PostgreSQL refuses to run as root). Shared by the
//! store's tests and the command line's (`#[path]`-included there).

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// A running server, stopped and removed when dropped.
pub struct Postgres {
    dir: PathBuf,
    bin: PathBuf,
    as_nobody: bool,
    port: u16,
    /// `postgres://netsonde@127.0.0.1:PORT/postgres`.
    pub url: String,
}

const NOBODY: u32 = 65534;

/// The folder holding `initdb` and `pg_ctl`: on the PATH, else the newest of
/// Debian's `/usr/lib/postgresql/N/bin`.
fn bin_dir() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if let Some(d) = std::env::split_paths(&path).find(|d| d.join("initdb").is_file()) {
        return Some(d);
    }
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

impl Postgres {
    /// Starts a server, or says on stderr why none can start here and returns
    /// `None` (the caller skips).
    pub fn start(test: &str) -> Option<Postgres> {
        Postgres::start_with(test, &|_| Ok(()))
    }

    /// As [`Postgres::start`], with `prepare` run on the data folder between
    /// `initdb` and the start (configuration and files of its own; write them
    /// with [`Postgres::private_file`]).
    pub fn start_with(
        test: &str,
        prepare: &dyn Fn(&Postgres) -> Result<(), String>,
    ) -> Option<Postgres> {
        let Some(bin) = bin_dir() else {
            eprintln!("{test}: skipped: PostgreSQL's initdb is not installed (apt-get install postgresql)");
            return None;
        };
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("netsonde-pg-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        // /proc/self belongs to the process's effective user.
        let as_nobody = std::fs::metadata("/proc/self")
            .map(|m| m.uid())
            .unwrap_or(0)
            == 0;
        if as_nobody {
            std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).expect("chown to nobody");
        }
        let port = free_port();
        let pg = Postgres {
            url: format!("postgres://netsonde@127.0.0.1:{port}/postgres"),
            dir,
            bin,
            as_nobody,
            port,
        };
        let data = pg.dir.join("data");
        let init = pg.run(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                "netsonde".as_ref(),
                "--auth=trust".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
                "--no-sync".as_ref(),
            ],
        );
        if let Err(why) = init {
            eprintln!("{test}: skipped: initdb failed: {why}");
            return None;
        }
        if let Err(why) = prepare(&pg) {
            eprintln!("{test}: skipped: the data folder could not be prepared: {why}");
            return None;
        }
        if let Err(why) = pg.pg_ctl_start() {
            eprintln!("{test}: skipped: PostgreSQL did not start: {why}");
            return None;
        }
        Some(pg)
    }

    /// `pg_ctl start` on the data folder, waiting until it accepts connections;
    /// the server's log on failure.
    fn pg_ctl_start(&self) -> Result<(), String> {
        let data = self.dir.join("data");
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("log");
        self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "-o".as_ref(),
                opts.as_ref(),
                "start".as_ref(),
            ],
        )
        .map_err(|why| {
            format!(
                "{why}\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            )
        })
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`): to its clients it
    /// vanishes.
    pub fn stop(&self) {
        let data = self.dir.join("data");
        let _ = self.run(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-m".as_ref(),
                "immediate".as_ref(),
                "-w".as_ref(),
                "stop".as_ref(),
            ],
        );
    }

    /// Starts a stopped server again, on the same port, with its data.
    #[allow(dead_code)] // not every includer restarts one
    pub fn start_again(&self) {
        self.pg_ctl_start().expect("PostgreSQL starts again");
    }

    /// Runs one of the server's programs, as nobody when we are root.
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> Result<(), String> {
        let mut cmd = Command::new(self.bin.join(program));
        cmd.args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if self.as_nobody {
            use std::os::unix::process::CommandExt;
            cmd.uid(NOBODY).gid(NOBODY);
        }
        let out = cmd.output().map_err(|e| format!("{program}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} {}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// The port it listens on (127.0.0.1 only).
    #[allow(dead_code)] // not every includer needs it
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Writes `name` in the data folder, readable by the server only (as
    /// PostgreSQL wants a key file), and returns its path.
    #[allow(dead_code)] // not every includer writes one
    pub fn private_file(&self, name: &str, contents: &str) -> Result<PathBuf, String> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.join("data").join(name);
        std::fs::write(&path, contents).map_err(|e| format!("{}: {e}", path.display()))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| format!("{}: {e}", path.display()))?;
        if self.as_nobody {
            std::os::unix::fs::chown(&path, Some(NOBODY), Some(NOBODY))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(path)
    }

    /// Appends `lines` to the data folder's `file` (`postgresql.conf`), or
    /// replaces it when `replace` (`pg_hba.conf`).
    #[allow(dead_code)] // not every includer configures one
    pub fn configure(&self, file: &str, lines: &str, replace: bool) -> Result<(), String> {
        use std::io::Write;
        let path = self.dir.join("data").join(file);
        let mut f = std::fs::OpenOptions::new()
            .append(!replace)
            .write(true)
            .truncate(replace)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        writeln!(f, "{lines}").map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The server's log so far.
    #[allow(dead_code)] // not every includer reads it
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("log")).unwrap_or_default()
    }

    /// The URL of another database on this server, created empty.
    pub fn database(&self, name: &str) -> String {
        let mut client = postgres::Client::connect(&self.url, postgres::NoTls).expect("connect");
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("create database");
        self.url.replace("/postgres", &format!("/{name}"))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

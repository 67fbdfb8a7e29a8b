//! Keeping a PostgreSQL password out of what netsonde stores and shows, and the
//! ways libpq offers to keep it off the command line.
//!
//! - [`redact`]: a command line's argument with any password in a PostgreSQL URL
//!   (`postgres://user:PW@host/db`, or a `password=` parameter) replaced by
//!   `***`; what `runs.command` keeps and reports print.
//! - [`passfile_password`]: the password libpq's passfile gives a connection
//!   (`PGPASSFILE`, else `~/.pgpass`): lines `host:port:database:user:password`,
//!   `*` matching anything, `\:` and `\\` escaped; a file group or others can
//!   read is ignored, with the reason, as libpq does.

use std::path::{Path, PathBuf};

/// What a redacted password reads as.
pub const HIDDEN: &str = "***";

/// `arg` with the password of a PostgreSQL URL in it hidden (a bare URL, or
/// `--db=URL`), and whether there was one. Anything else is returned as it is.
pub fn redact(arg: &str) -> (String, bool) {
    let start = ["postgres://", "postgresql://"]
        .iter()
        .filter_map(|s| arg.find(s).map(|i| (i, s.len())))
        .min();
    let Some((at, scheme)) = start else {
        return (arg.to_string(), false);
    };
    let (head, url) = arg.split_at(at);
    let rest = &url[scheme..];
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let mut found = false;
    let authority = match authority.rfind('@') {
        Some(amp) => match authority[..amp].find(':') {
            Some(colon) => {
                found = true;
                format!("{}:{HIDDEN}{}", &authority[..colon], &authority[amp..])
            }
            None => authority.to_string(),
        },
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let params: Vec<String> = query
                .split('&')
                .map(|p| match p.split_once('=') {
                    Some(("password", _)) => {
                        found = true;
                        format!("password={HIDDEN}")
                    }
                    _ => p.to_string(),
                })
                .collect();
            format!("{path}?{}", params.join("&"))
        }
        None => tail.to_string(),
    };
    (format!("{head}{}{authority}{tail}", &url[..scheme]), found)
}

/// One passfile line's fields, unescaped; `None` for a comment, a blank line or
/// one without five fields.
fn fields(line: &str) -> Option<[String; 5]> {
    if line.trim_start().starts_with('#') || line.trim().is_empty() {
        return None;
    }
    let mut out: Vec<String> = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    out.last_mut()?.push(n);
                }
            }
            ':' if out.len() < 5 => out.push(String::new()),
            c => out.last_mut()?.push(c),
        }
    }
    out.try_into().ok()
}

/// The password the passfile `text` gives `host:port`, `database`, `user`: the
/// first line whose fields all match (`*` matches anything).
pub fn passfile_lookup(
    text: &str,
    host: &str,
    port: u16,
    database: &str,
    user: &str,
) -> Option<String> {
    let port = port.to_string();
    text.lines().filter_map(fields).find_map(|f| {
        let ok = |field: &str, want: &str| field == "*" || field == want;
        (ok(&f[0], host) && ok(&f[1], &port) && ok(&f[2], database) && ok(&f[3], user))
            .then(|| f[4].clone())
    })
}

/// Where the passfile is: `PGPASSFILE`, else `~/.pgpass`.
fn passfile_path(
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    home: Option<&Path>,
) -> Option<PathBuf> {
    var("PGPASSFILE")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".pgpass")))
}

/// The password the passfile gives this connection, or why it gives none when
/// that is worth saying (a file others can read). `Ok(None)`: no file, or no
/// line for it.
pub fn passfile_password(
    host: &str,
    port: u16,
    database: &str,
    user: &str,
) -> Result<Option<String>, String> {
    let home = dirs::home_dir();
    let Some(path) = passfile_path(&|n| std::env::var_os(n), home.as_deref()) else {
        return Ok(None);
    };
    let Ok(meta) = std::fs::metadata(&path) else {
        return Ok(None);
    };
    {
        use std::os::unix::fs::PermissionsExt;
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(format!(
                "{} is readable by group or others, so it is ignored (chmod 0600 it)",
                path.display()
            ));
        }
    }
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(passfile_lookup(&text, host, port, database, user))
}

/// The `service` parameter taken out of a URL's query: (the URL without it,
/// the service's name).
pub fn split_service(url: &str) -> (String, Option<String>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), None);
    };
    let mut name = None;
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| match p.split_once('=') {
            Some(("service", v)) => {
                name = Some(v.to_string());
                false
            }
            _ => true,
        })
        .collect();
    let url = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (url, name)
}

/// The settings of service `name` in a connection service file's `text`
/// (libpq's `pg_service.conf`: `[name]` sections of `key=value` lines, `#`
/// comments); `None` when the file has no such section.
pub fn service_section(text: &str, name: &str) -> Option<Vec<(String, String)>> {
    let mut found = None;
    let mut current: Option<&str> = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            current = Some(section.trim());
            if current == Some(name) {
                found.get_or_insert_with(Vec::new);
            }
            continue;
        }
        if current == Some(name) {
            if let Some((k, v)) = line.split_once('=') {
                found
                    .get_or_insert_with(Vec::new)
                    .push((k.trim().to_string(), v.trim().to_string()));
            }
        }
    }
    found
}

/// The settings of service `name`, from the first of libpq's service files
/// that has it: `PGSERVICEFILE` (else `~/.pg_service.conf`), then
/// `PGSYSCONFDIR/pg_service.conf` (else `/etc/postgresql-common/pg_service.conf`).
pub fn service(name: &str) -> Result<Vec<(String, String)>, String> {
    let var = |n: &str| std::env::var_os(n).map(PathBuf::from);
    let files = [
        var("PGSERVICEFILE").or_else(|| dirs::home_dir().map(|h| h.join(".pg_service.conf"))),
        Some(
            var("PGSYSCONFDIR")
                .unwrap_or_else(|| PathBuf::from("/etc/postgresql-common"))
                .join("pg_service.conf"),
        ),
    ];
    for f in files.iter().flatten() {
        if let Ok(text) = std::fs::read_to_string(f) {
            if let Some(settings) = service_section(&text, name) {
                return Ok(settings);
            }
        }
    }
    Err(format!(
        "service '{name}' is in no service file ({})",
        files
            .iter()
            .flatten()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_service_is_read_from_its_section() {
        let text = "# services\n[other]\nhost=x\n\n[runs]\nhost = db.example\nport=5433\n\
                    dbname=netsonde\nuser=ns\npassword=pw\n";
        let got = service_section(text, "runs").unwrap();
        assert_eq!(got[0], ("host".into(), "db.example".into()));
        assert_eq!(got.len(), 5);
        assert_eq!(service_section(text, "none"), None);
        assert_eq!(
            split_service("postgres://?service=runs&sslmode=require"),
            (
                "postgres://?sslmode=require".to_string(),
                Some("runs".to_string())
            )
        );
        assert_eq!(
            split_service("postgres://h/db"),
            ("postgres://h/db".to_string(), None)
        );
    }

    use super::*;

    #[test]
    fn a_urls_password_is_hidden_wherever_it_is() {
        let cases = [
            (
                "postgres://ns:s3cr3t@db.example:5432/runs",
                "postgres://ns:***@db.example:5432/runs",
                true,
            ),
            (
                "--db=postgresql://ns:p%40ss@h/db?sslmode=require",
                "--db=postgresql://ns:***@h/db?sslmode=require",
                true,
            ),
            (
                "postgres://ns@h/db?password=x&sslmode=disable",
                "postgres://ns@h/db?password=***&sslmode=disable",
                true,
            ),
            ("postgres://ns@h/db", "postgres://ns@h/db", false),
            ("postgres://h", "postgres://h", false),
            ("/tmp/results.db", "/tmp/results.db", false),
            ("client", "client", false),
        ];
        for (arg, want, found) in cases {
            assert_eq!(redact(arg), (want.to_string(), found), "{arg}");
        }
    }

    #[test]
    fn the_passfile_is_read_as_libpq_reads_it() {
        let text = "# a comment\n\
                    db.example:5432:runs:ns:first\n\
                    *:*:*:ns:any\\:thing\n\
                    other:*:*:*:nope\n";
        assert_eq!(
            passfile_lookup(text, "db.example", 5432, "runs", "ns").as_deref(),
            Some("first")
        );
        assert_eq!(
            passfile_lookup(text, "10.0.0.1", 5433, "x", "ns").as_deref(),
            Some("any:thing")
        );
        assert_eq!(passfile_lookup(text, "10.0.0.1", 5433, "x", "bob"), None);
        assert_eq!(passfile_lookup("short:line", "h", 1, "d", "u"), None);
    }

    #[test]
    fn the_passfile_is_where_libpq_looks() {
        let var = |n: &str| (n == "PGPASSFILE").then(|| "/etc/x".into());
        assert_eq!(
            passfile_path(&var, Some(Path::new("/root"))),
            Some(PathBuf::from("/etc/x"))
        );
        let none = |_: &str| None;
        assert_eq!(
            passfile_path(&none, Some(Path::new("/root"))),
            Some(PathBuf::from("/root/.pgpass"))
        );
    }
}

//! How a sweep inside the lab asks for a new link between points.
//!
//! `lab run` starts the invocation with two environment variables: [`ENV_LINK`],
//! the link as built (a [`LinkRecord`] as JSON), and [`ENV_CONTROL`], the path of a
//! Unix socket the lab listens on. A sweep whose points have link axes sends, before
//! each point, one JSON line with the point's [`LinkPoint`]; the lab applies it over
//! its base link (rebuilding only what changed) and answers one JSON line,
//! `{"ok": LinkRecord}` or `{"error": "why"}`. A path socket is used because
//! abstract Unix sockets are per network namespace and the asker is in another.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Duration;

use netsonde_model::link::{LinkPoint, LinkRecord};
use serde::{Deserialize, Serialize};

use crate::error::{LabError, Result};

/// The link the invocation runs over, as JSON.
pub const ENV_LINK: &str = "NETSONDE_LAB_LINK";
/// The lab's control socket.
pub const ENV_CONTROL: &str = "NETSONDE_LAB_CONTROL";
/// The lab's process id: it carries the test's packets (its emulator), so its
/// CPU is the test's, not foreign load.
pub const ENV_PID: &str = "NETSONDE_LAB_PID";

/// A reply on the control socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Reply {
    /// The link now in place.
    Ok(Box<LinkRecord>),
    /// Why it could not be built.
    Error(String),
}

/// A request waiting for the lab's answer.
#[derive(Debug)]
pub struct Request {
    /// The link axes asked for.
    pub point: LinkPoint,
    reply: mpsc::Sender<Reply>,
}

impl Request {
    /// Answers it: the link built, or why not (sent as text: it crosses a
    /// socket to another process).
    pub fn answer(self, r: std::result::Result<LinkRecord, LabError>) {
        let _ = self.reply.send(match r {
            Ok(l) => Reply::Ok(Box::new(l)),
            Err(e) => Reply::Error(e.to_string()),
        });
    }
}

/// The lab's side: a thread accepting one request at a time and handing it to the
/// lab's main loop through a channel. Stops and removes the socket on drop.
#[derive(Debug)]
pub struct ControlServer {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ControlServer {
    /// Listens at `path` (replacing a stale socket file).
    pub fn bind(path: &Path) -> Result<(ControlServer, mpsc::Receiver<Request>)> {
        let _ = std::fs::remove_file(path);
        let l = UnixListener::bind(path)
            .map_err(|e| LabError::io(format!("listening on {}", path.display()), e))?;
        l.set_nonblocking(true)
            .map_err(|e| LabError::io("control socket", e))?;
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("sonde-lab-control".into())
            .spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    match l.accept() {
                        Ok((conn, _)) => serve(conn, &tx),
                        Err(_) => std::thread::sleep(Duration::from_millis(20)),
                    }
                }
            })
            .map_err(|e| LabError::io("starting the control thread", e))?;
        Ok((
            ControlServer {
                path: path.to_path_buf(),
                stop,
                thread: Some(thread),
            },
            rx,
        ))
    }
}

fn serve(conn: UnixStream, tx: &mpsc::Sender<Request>) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let mut line = String::new();
    let mut r = BufReader::new(&conn);
    if r.read_line(&mut line).is_err() {
        return;
    }
    let reply = match serde_json::from_str::<LinkPoint>(line.trim()) {
        Err(e) => Reply::Error(format!("bad request: {e}")),
        Ok(point) => {
            let (rtx, rrx) = mpsc::channel();
            if tx.send(Request { point, reply: rtx }).is_err() {
                return;
            }
            rrx.recv_timeout(Duration::from_secs(120))
                .unwrap_or_else(|_| Reply::Error("the lab did not answer".into()))
        }
    };
    let mut w = &conn;
    let _ = writeln!(
        w,
        "{}",
        serde_json::to_string(&reply).expect("replies serialize")
    );
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Why asking the lab for a link failed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// The lab's socket is not there or refuses.
    #[error("cannot reach the lab at {}: {source}", path.display())]
    Connect {
        /// The socket.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Asking or waiting failed.
    #[error("{what}: {source}")]
    Io {
        /// `asking the lab` or `waiting for the lab`.
        what: &'static str,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The lab answered that it could not build the link, and why.
    #[error("the lab could not build the link: {0}")]
    Refused(String),
    /// An answer that does not parse.
    #[error("bad reply from the lab: {0}")]
    BadReply(#[source] serde_json::Error),
}

/// The asker's side: sends `point` to the lab at `path` and waits for the link.
pub fn request(path: &Path, point: &LinkPoint) -> std::result::Result<LinkRecord, ControlError> {
    let mut conn = UnixStream::connect(path).map_err(|source| ControlError::Connect {
        path: path.to_path_buf(),
        source,
    })?;
    let io = |what: &'static str| move |source| ControlError::Io { what, source };
    conn.set_read_timeout(Some(Duration::from_secs(130)))
        .map_err(io("setting the wait for the lab"))?;
    writeln!(
        conn,
        "{}",
        serde_json::to_string(point).expect("points serialize")
    )
    .map_err(io("asking the lab"))?;
    let mut line = String::new();
    BufReader::new(&conn)
        .read_line(&mut line)
        .map_err(io("waiting for the lab"))?;
    match serde_json::from_str::<Reply>(line.trim()).map_err(ControlError::BadReply)? {
        Reply::Ok(l) => Ok(*l),
        Reply::Error(e) => Err(ControlError::Refused(e)),
    }
}

/// The link this process runs over, from [`ENV_LINK`], when started by the lab.
pub fn link_from_env() -> Option<LinkRecord> {
    serde_json::from_str(&std::env::var(ENV_LINK).ok()?).ok()
}

/// The lab's process id, from [`ENV_PID`], when started by the lab.
pub fn pid_from_env() -> Option<u32> {
    std::env::var(ENV_PID).ok()?.parse().ok()
}

/// The lab's control socket, from [`ENV_CONTROL`], when started by the lab.
pub fn control_from_env() -> Option<PathBuf> {
    std::env::var_os(ENV_CONTROL).map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use netsonde_model::link::{LinkSpec, Mechanism};

    #[test]
    fn request_and_reply_over_the_socket() {
        let path = std::env::temp_dir().join(format!("sonde-ctl-{}.sock", std::process::id()));
        let (srv, rx) = ControlServer::bind(&path).unwrap();
        let lab = std::thread::spawn(move || {
            let req = rx.recv().unwrap();
            let mut spec = LinkSpec::default();
            spec.up.mtu = req.point.mtu.unwrap();
            req.answer(Ok(LinkRecord {
                spec,
                mechanism: Mechanism::Veth,
                detail: "d".into(),
            }));
            let req = rx.recv().unwrap();
            req.answer(Err(LabError::Unsupported("no netem".into())));
        });
        let p = LinkPoint {
            mtu: Some(9000),
            ..LinkPoint::default()
        };
        assert_eq!(request(&path, &p).unwrap().spec.up.mtu, 9000);
        match request(&path, &p) {
            Err(ControlError::Refused(why)) => assert_eq!(why, "no netem"),
            other => panic!("{other:?}"),
        }
        lab.join().unwrap();
        drop(srv);
        assert!(!path.exists());
    }
}

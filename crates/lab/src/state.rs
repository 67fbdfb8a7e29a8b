//! What the lab made, on disk, so that nothing it made outlives it unnoticed and
//! nothing it did not make is ever touched.
//!
//! Every lab has a state file `/run/netsonde-lab/NAME.json` (the directory can be
//! moved with `NETSONDE_LAB_DIR`), written *before* the lab creates anything and
//! updated as it goes: its namespaces, the processes it started (with their start
//! times, so a reused PID is never mistaken for ours), its owner process and the
//! link. `/run` is a tmpfs, so the files vanish on reboot together with what they
//! describe. A lock file serialises creating and cleaning labs.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use netsonde_model::link::LinkRecord;
use serde::{Deserialize, Serialize};

use crate::error::{LabError, Result};

/// Version of the state file format.
pub const STATE_VERSION: u32 = 1;

/// The directory holding state files, sockets and the lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDir {
    path: PathBuf,
}

impl Default for StateDir {
    /// `NETSONDE_LAB_DIR`, or `/run/netsonde-lab`.
    fn default() -> StateDir {
        StateDir::new(
            std::env::var_os("NETSONDE_LAB_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/run/netsonde-lab")),
        )
    }
}

impl StateDir {
    /// A state directory at `path`.
    pub fn new(path: impl Into<PathBuf>) -> StateDir {
        StateDir { path: path.into() }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn ensure(&self) -> Result<()> {
        std::fs::create_dir_all(&self.path)
            .map_err(|e| LabError::io(format!("creating {}", self.path.display()), e))
    }

    /// Takes the directory's lock (blocking); released when the returned file
    /// closes.
    pub fn lock(&self) -> Result<File> {
        self.ensure()?;
        let p = self.path.join(".lock");
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&p)
            .map_err(|e| LabError::io(format!("opening {}", p.display()), e))?;
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| LabError::io(format!("locking {}", p.display()), e.into()))?;
        Ok(f)
    }

    /// The state file of lab `name`.
    pub fn state_path(&self, name: &str) -> PathBuf {
        self.path.join(format!("{name}.json"))
    }

    /// The control socket of lab `name`.
    pub fn socket_path(&self, name: &str) -> PathBuf {
        self.path.join(format!("{name}.sock"))
    }

    /// Every state file, parsed (a file that does not parse is reported, not
    /// guessed at).
    pub fn load_all(&self) -> Vec<(PathBuf, Result<LabState>)> {
        let Ok(rd) = std::fs::read_dir(&self.path) else {
            return Vec::new();
        };
        let mut v: Vec<(PathBuf, Result<LabState>)> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let s = LabState::load(&p);
                (p, s)
            })
            .collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }
}

/// A process, identified beyond its PID by its start time (clock ticks after boot,
/// field 22 of `/proc/PID/stat`), so a PID reused after a crash is not mistaken
/// for ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcId {
    /// PID.
    pub pid: u32,
    /// Start time in clock ticks after boot.
    pub start: u64,
}

/// Start time and state letter of `pid` from `/proc/PID/stat`.
fn stat(pid: u32) -> Option<(u64, char)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain anything; fields after
    // the last ')' are space separated: state is field 3, starttime field 22.
    let rest = &s[s.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let state = f.first()?.chars().next()?;
    Some((f.get(19)?.parse().ok()?, state))
}

impl ProcId {
    /// The running process `pid`, if it exists.
    pub fn of(pid: u32) -> Option<ProcId> {
        stat(pid).map(|(start, _)| ProcId { pid, start })
    }

    /// This process.
    pub fn me() -> ProcId {
        ProcId::of(std::process::id()).expect("/proc/self/stat is readable")
    }

    /// Whether this very process still runs (a zombie does not count).
    pub fn alive(&self) -> bool {
        matches!(stat(self.pid), Some((start, st)) if start == self.start && st != 'Z' && st != 'X')
    }
}

/// How a lab lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// `lab run`: lives as long as its owner process.
    Run,
    /// `lab up`: lives until `lab down` or `lab clean`.
    Up,
}

/// A process the lab started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Started {
    /// What it is (`server`, `emulator`).
    pub role: String,
    /// Which process.
    pub proc: ProcId,
}

/// A lab's state file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabState {
    /// [`STATE_VERSION`].
    pub version: u32,
    /// The lab's name.
    pub name: String,
    /// Run or up.
    pub kind: Kind,
    /// The process that made it.
    pub owner: ProcId,
    /// Namespaces it creates or created (written before creating them).
    pub namespaces: Vec<String>,
    /// Processes it started.
    pub processes: Vec<Started>,
    /// The link as built, once built.
    pub link: Option<LinkRecord>,
    /// Unix seconds.
    pub created_at: u64,
}

impl LabState {
    /// Reads a state file.
    pub fn load(path: &Path) -> Result<LabState> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LabError::io(format!("reading {}", path.display()), e))?;
        let s: LabState = serde_json::from_str(&text).map_err(|e| LabError::State {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        if s.version != STATE_VERSION {
            return Err(LabError::State {
                path: path.to_path_buf(),
                message: format!(
                    "version {} (this netsonde reads {STATE_VERSION})",
                    s.version
                ),
            });
        }
        Ok(s)
    }

    /// Writes it atomically (a temporary file renamed over the old one).
    pub fn save(&self, dir: &StateDir) -> Result<()> {
        dir.ensure()?;
        let path = dir.state_path(&self.name);
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).expect("state serializes");
        let write = || -> std::io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        };
        write().map_err(|e| LabError::io(format!("writing {}", path.display()), e))
    }

    /// The lab as `lab list` shows it: name, kind, owner, use and link.
    pub fn line(&self) -> String {
        format!(
            "{:<16} {:<4} owner {:<7} {:<10} {}",
            self.name,
            match self.kind {
                Kind::Run => "run",
                Kind::Up => "up",
            },
            self.owner.pid,
            if self.in_use() { "in use" } else { "" },
            self.link
                .as_ref()
                .map(|l| format!("{} via {}", l.spec, l.mechanism))
                .unwrap_or_else(|| "no link yet".into())
        )
    }

    /// Whether the lab is in use: a `run` lab whose owner still runs. Anything
    /// else (an owner killed, a `lab up` lab) may be cleaned.
    pub fn in_use(&self) -> bool {
        self.kind == Kind::Run && self.owner.alive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmpdir(tag: &str) -> StateDir {
        let p = std::env::temp_dir().join(format!("netsonde-lab-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        StateDir::new(p)
    }

    #[test]
    fn state_round_trips_and_lists() {
        let dir = tmpdir("state");
        let s = LabState {
            version: STATE_VERSION,
            name: "t1".into(),
            kind: Kind::Run,
            owner: ProcId::me(),
            namespaces: vec!["sonde-t1-cli".into()],
            processes: vec![],
            link: None,
            created_at: 1,
        };
        s.save(&dir).unwrap();
        let all = dir.load_all();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].1.as_ref().unwrap(), &s);
        assert!(s.in_use());
        std::fs::write(dir.state_path("bad"), "{").unwrap();
        let all = dir.load_all();
        assert_eq!(all.len(), 2);
        assert!(all[0].1.is_err());
        let _g = dir.lock().unwrap();
        std::fs::remove_dir_all(dir.path()).unwrap();
    }

    #[test]
    fn a_reused_pid_is_not_ours() {
        let me = ProcId::me();
        assert!(me.alive());
        let other = ProcId {
            pid: me.pid,
            start: me.start + 1,
        };
        assert!(!other.alive());
        let up = LabState {
            version: STATE_VERSION,
            name: "u".into(),
            kind: Kind::Up,
            owner: me,
            namespaces: vec![],
            processes: vec![],
            link: None,
            created_at: 0,
        };
        assert!(!up.in_use());
    }
}

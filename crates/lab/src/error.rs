//! The lab's errors: one enum, context carried as data.

use std::path::PathBuf;

use netsonde_model::link::LinkError;

/// Why a lab operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// Not privileged enough to create namespaces and interfaces.
    #[error(
        "the lab needs root: it creates network namespaces, veth/TUN interfaces and qdiscs \
         (CAP_NET_ADMIN and CAP_SYS_ADMIN); run it as root or with sudo"
    )]
    NotRoot,
    /// A tool the lab drives is not installed.
    #[error("'{tool}' is not installed (the lab needs iproute2: apt-get install iproute2)")]
    MissingTool {
        /// `ip` or `tc`.
        tool: &'static str,
    },
    /// An `ip` or `tc` command failed.
    #[error("`{command}` failed: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// What it said.
        stderr: String,
    },
    /// A system call or file operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A lab name that cannot be used.
    #[error("bad lab name '{0}': use 1 to 16 of a-z, 0-9 and '-'")]
    BadName(String),
    /// The name is taken by a lab that is still in use (or a namespace the lab did
    /// not create).
    #[error("lab '{name}' exists: {why}")]
    Exists {
        /// The name.
        name: String,
        /// Owned by whom.
        why: String,
    },
    /// `lab down` of a lab that is not there.
    #[error("no lab named '{0}' (see `netsonde lab list`)")]
    NoSuchLab(String),
    /// The link settings are not usable.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// A cluster lab that cannot be made as asked (too few hosts, a slow pair
    /// naming a host it does not have).
    #[error("{0}")]
    BadCluster(String),
    /// The kernel lacks what the requested mechanism needs.
    #[error("{0}")]
    Unsupported(String),
    /// A state file that does not parse.
    #[error("state file {path}: {message}")]
    State {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The userspace emulator failed.
    #[error("link emulator: {0}")]
    Emulator(#[from] EmulatorError),
    /// The emulator process of a lab that stays up never attached to its link.
    #[error("the link emulator did not start: {0}")]
    EmulatorStart(String),
    /// The userspace emulator stopped while an invocation ran over it.
    #[error("the link emulator stopped; the invocation was ended")]
    EmulatorStopped,
    /// A daemon in the lab (its server, a host's agent) did not say it listens.
    #[error("{0}")]
    DaemonStart(String),
}

/// Why the userspace emulator (or one of its threads) stopped.
#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    /// A system call failed.
    #[error("{what}: {source}")]
    Sys {
        /// `ppoll`, `reading the TUN device`, ...
        what: &'static str,
        /// The error.
        #[source]
        source: rustix::io::Errno,
    },
    /// A thread panicked.
    #[error("{0}: thread panicked")]
    Panicked(String),
}

impl LabError {
    /// An I/O error with what was being done.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> LabError {
        LabError::Io {
            what: what.into(),
            source,
        }
    }
}

/// The lab's result type.
pub type Result<T> = std::result::Result<T, LabError>;

//! What the server and an agent's job handler share, and nothing else: the
//! server hands a job it was asked for to the handler its configuration holds
//! (`agent::handler` for `netsonde agent`), so the server does not depend on
//! the client code a job runs.

use std::any::Any;
use std::sync::Arc;

use netsonde_model::spec::TestSpec;
use netsonde_proto::auth::Key;
use netsonde_proto::message::{ErrorCode, Job};
use netsonde_proto::session::{Deadlines, ServerSession};

use crate::control::Control;
use crate::policy::SessionLog;

/// A refusal: its code, the words, when to retry.
pub type Refusal = (ErrorCode, String, Option<u64>);

/// Admits a test against the server's limits, slot and budget; what it returns
/// is held until the job ends.
pub type Admit<'a> = &'a dyn Fn(&TestSpec) -> Result<Box<dyn Any>, Refusal>;

/// What a job's handler gets from the server.
pub struct ServeCtx<'a> {
    /// The server's key, which the agent also presents to the job's target.
    pub key: Option<&'a Key>,
    /// Phase deadlines, for the client it runs.
    pub deadlines: Deadlines,
    /// Admits the job's test.
    pub admit: Admit<'a>,
    /// The session's log record.
    pub log: &'a mut SessionLog,
}

impl std::fmt::Debug for ServeCtx<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeCtx")
            .field("deadlines", &self.deadlines)
            .finish_non_exhaustive()
    }
}

/// The function that runs a job: the control connection, its session, the job.
pub type ServeJob = dyn Fn(&mut Control, &mut ServerSession, Job, ServeCtx<'_>) + Send + Sync;

/// Runs a job a controller asked for, to the end of its session.
#[derive(Clone)]
pub struct JobHandler(pub Arc<ServeJob>);

impl std::fmt::Debug for JobHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JobHandler")
    }
}

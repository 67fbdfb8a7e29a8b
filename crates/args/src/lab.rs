//! `netsonde lab ...`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

/// `netsonde lab ...`.
#[derive(Debug, Args)]
pub struct LabArgs {
    #[command(subcommand)]
    pub command: LabCommand,
}

/// Lab commands.
#[derive(Debug, Subcommand)]
pub enum LabCommand {
    /// Build a lab, run a client or sweep invocation in it against a server in
    /// it, and tear it down: `netsonde lab run --rate 200M --delay 10ms -- client -T tcp-rr`.
    Run(LabRunArgs),
    /// Build a lab with a server in it and leave it running.
    Up(LabUpArgs),
    /// Build a cluster (hosts h1..hN on one bridge, each in its own namespace
    /// running `netsonde agent`, some pairs slower), run `mesh ...` from the
    /// bridge against every host, and tear it down:
    /// `netsonde lab mesh --hosts 5 --slow h2-h4=100M -- mesh -t 3`.
    Mesh(LabMeshArgs),
    /// Tear down a lab made by `lab up`.
    Down {
        /// Its name.
        #[arg(default_value = "lab")]
        name: String,
    },
    /// Remove what killed lab runs left (namespaces, processes, state); with
    /// --all, also every lab made by `lab up`. Never touches anything a lab did not
    /// make.
    Clean {
        /// Also remove labs made by `lab up`.
        #[arg(long)]
        all: bool,
    },
    /// List labs.
    List,
    /// Run the userspace emulator of a `lab up` lab (started by `lab up`).
    #[command(hide = true)]
    Emulate {
        /// The lab.
        name: String,
    },
}

/// Link settings. Each takes one value for both directions or UP/DOWN
/// (client->server/server->client): `--delay 10ms/30ms`.
#[derive(Debug, Args, Default)]
pub struct LinkFlags {
    /// MTU of the link's interfaces, 68 to 65535.
    #[arg(long)]
    pub mtu: Option<String>,
    /// Line rate (decimal, 38 B of Ethernet framing per packet): 100M, 1G.
    #[arg(long)]
    pub rate: Option<String>,
    /// One-way delay: 10ms.
    #[arg(long)]
    pub delay: Option<String>,
    /// Uniform jitter around the delay (does not reorder): 1ms.
    #[arg(long)]
    pub jitter: Option<String>,
    /// Loss: 1% (random) or gemodel:P,R,BAD,GOOD (Gilbert-Elliott bursts; BAD and
    /// GOOD optional, default 100% and 0%).
    #[arg(long)]
    pub loss: Option<String>,
    /// Share of packets sent ahead of the delay (reordered): 5%.
    #[arg(long)]
    pub reorder: Option<String>,
    /// Share of packets delivered twice: 1%.
    #[arg(long)]
    pub duplicate: Option<String>,
    /// Bottleneck queue: 100p (packets) or bytes (256K). Default 50 ms at the rate.
    #[arg(long)]
    pub queue: Option<String>,
    /// Rate limiter on veth links: tbf or htb.
    #[arg(long)]
    pub shaper: Option<String>,
    /// auto (veth; netem or the userspace emulator for impairments), kernel, or
    /// emulator.
    #[arg(long)]
    pub mechanism: Option<String>,
    /// Seed of the emulator's random source (loss, reordering, duplication, jitter).
    #[arg(long)]
    pub seed: Option<u64>,
    /// A second path between the hosts at this rate (10.77.1.0/30, a veth pair
    /// of its own, the first path's MTU, no impairments), for `--mptcp` to add
    /// to the first: 50M, or UP/DOWN.
    #[arg(long, value_name = "RATE")]
    pub second_path: Option<String>,
    /// Segmentation and receive offloads (TSO and GSO where a direction sends,
    /// GRO where it receives; veth links): on (the default) or off, every
    /// packet then through the stack alone; or UP/DOWN.
    #[arg(long, value_name = "on|off")]
    pub offloads: Option<String>,
}

impl LinkFlags {
    pub fn settings(&self) -> netsonde_model::link::LinkSettings {
        use netsonde_model::link::LinkSettings;
        LinkSettings {
            mtu: self.mtu.clone(),
            rate: self.rate.clone(),
            delay: self.delay.clone(),
            jitter: self.jitter.clone(),
            loss: self.loss.clone(),
            reorder: self.reorder.clone(),
            duplicate: self.duplicate.clone(),
            queue: self.queue.clone(),
            shaper: self.shaper.clone(),
            mechanism: self.mechanism.clone(),
            seed: self.seed,
            second_path: self.second_path.clone(),
            offloads: self.offloads.clone(),
        }
    }
}

/// `netsonde lab run`.
#[derive(Debug, Args)]
pub struct LabRunArgs {
    /// A lab or experiment file (TOML): its `link` table sets the link (flags
    /// override it). An experiment file with no invocation runs as `run FILE`.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub link: LinkFlags,
    /// Lab name (namespaces sonde-NAME-cli and sonde-NAME-srv); default rPID.
    #[arg(long)]
    pub name: Option<String>,
    /// Write the userspace emulator's counters (packets, drops, delivery error
    /// percentiles per direction) to this file as JSON at the end.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,
    /// What to run in the client host: `client ...`, `search ...`, `sweep ...` or
    /// `run FILE`.
    /// Without a HOST it targets the lab's server.
    #[arg(last = true, value_name = "INVOCATION")]
    pub invocation: Vec<String>,
}

/// `netsonde lab mesh`.
#[derive(Debug, Args)]
pub struct LabMeshArgs {
    /// Hosts, 2 to 64: h1 at 10.78.0.1 ... hN at 10.78.0.N.
    #[arg(long, default_value_t = 4)]
    pub hosts: usize,
    /// Every host's egress rate, counted as an Ethernet line: 1G (default:
    /// unshaped, as fast as the host's CPU moves it).
    #[arg(long)]
    pub rate: Option<String>,
    /// A slower link between two hosts, each way: h2-h4=100M (repeat for more);
    /// h2-h4=100M@30s slows it only 30 s after the mesh or monitor starts, so a
    /// monitor sees the link get worse between its rounds.
    #[arg(long, value_name = "hA-hB=RATE")]
    pub slow: Vec<String>,
    /// Lab name (namespaces sonde-NAME-h1 ... and sonde-NAME-br); default mPID.
    #[arg(long)]
    pub name: Option<String>,
    /// What to run on the bridge: `mesh ...`; the lab adds every host as an
    /// --agent and the key it made for them.
    #[arg(last = true, value_name = "INVOCATION")]
    pub invocation: Vec<String>,
}

/// `netsonde lab up`.
#[derive(Debug, Args)]
pub struct LabUpArgs {
    /// A lab file (TOML) whose `link` table sets the link.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub link: LinkFlags,
    /// Lab name.
    #[arg(long, default_value = "lab")]
    pub name: String,
    /// Control port of the server in the lab.
    #[arg(short, long, default_value_t = netsonde_driver::client::DEFAULT_PORT)]
    pub port: u16,
}

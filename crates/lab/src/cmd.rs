//! Running iproute2: `ip` and `tc` (and `ethtool` through `ip netns exec`), each command's failure a [`LabError::Command`]
//! with its stderr. Every command the lab runs names a namespace it created (`-n`),
//! except `ip netns add/del` of those namespaces.

use std::process::{Command, Stdio};

use crate::error::{LabError, Result};

/// Runs `tool args...` and returns stdout; a non-zero exit is an error carrying
/// stderr.
pub fn run(tool: &'static str, args: &[&str]) -> Result<String> {
    let out = Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                LabError::MissingTool { tool }
            } else {
                LabError::io(format!("running {tool}"), e)
            }
        })?;
    if !out.status.success() {
        return Err(LabError::Command {
            command: format!("{tool} {}", args.join(" ")),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `ip args...`.
pub fn ip(args: &[&str]) -> Result<String> {
    run("ip", args)
}

/// `ip -n NS args...`.
pub fn ip_in(ns: &str, args: &[&str]) -> Result<String> {
    let mut all = vec!["-n", ns];
    all.extend_from_slice(args);
    run("ip", &all)
}

/// `tc -n NS args...` (owned strings: qdisc parameters are computed).
pub fn tc_in(ns: &str, args: &[String]) -> Result<String> {
    let mut all = vec!["-n", ns];
    all.extend(args.iter().map(String::as_str));
    run("tc", &all)
}

/// `ethtool args...` inside namespace `ns` (`ip netns exec`); ethtool missing is
/// [`LabError::MissingTool`].
pub fn ethtool_in(ns: &str, args: &[&str]) -> Result<String> {
    run("ethtool", &["--version"])?;
    let mut all = vec!["netns", "exec", ns, "ethtool"];
    all.extend_from_slice(args);
    run("ip", &all)
}

/// The network namespaces that exist (`ip netns list`, names only).
pub fn namespaces() -> Result<Vec<String>> {
    Ok(ip(&["netns", "list"])?
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect())
}

//! Issue 50: a container's CPU quota is named. The client runs in a cgroup of
//! its own limited to 0.3 CPU (cgroup v1's `cpu.cfs_quota_us` where this
//! kernel mounts the cpu controller so, v2's `cpu.max` otherwise; the test says
//! which), against a server outside it: the quota and its throttling are in
//! the JSON and the text, and the verdict is `cpu-quota`. Needs root and a
//! cgroup cpu controller; skips out loud without them. The cgroup is removed
//! on every way out.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::util::{is_root, wait_bounded, wrapped, ServerProc};

/// A cgroup this test made, with a CPU quota; removed when dropped (its
/// processes have ended by then: the client is awaited first).
struct Limited {
    dir: PathBuf,
    version: u8,
}

impl Limited {
    /// A cgroup of 0.3 CPU, or why there cannot be one here.
    fn make(name: &str) -> Result<Limited, String> {
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").map_err(|e| e.to_string())?;
        let point = |want: &dyn Fn(&str, &str) -> bool| {
            mounts.lines().find_map(|l| {
                let (left, right) = l.split_once(" - ")?;
                let mut r = right.split(' ');
                let (fs, _, opts) = (r.next()?, r.next()?, r.next().unwrap_or(""));
                let at = PathBuf::from(left.split(' ').nth(4)?);
                want(fs, opts).then_some(at)
            })
        };
        let v1 = point(&|fs, opts| fs == "cgroup" && opts.split(',').any(|o| o == "cpu"));
        let (root, version) = match v1 {
            Some(p) => (p, 1),
            None => {
                let p = point(&|fs, _| fs == "cgroup2").ok_or("no cgroup cpu controller")?;
                let ctl = std::fs::read_to_string(p.join("cgroup.controllers")).unwrap_or_default();
                if !ctl.split_whitespace().any(|c| c == "cpu") {
                    return Err(format!(
                        "cgroup v2 at {} has no cpu controller",
                        p.display()
                    ));
                }
                let _ = std::fs::write(p.join("cgroup.subtree_control"), "+cpu");
                (p, 2)
            }
        };
        let dir = root.join(format!("{name}-{}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let limited = Limited { dir, version };
        let set = match version {
            1 => std::fs::write(limited.dir.join("cpu.cfs_period_us"), "100000")
                .and_then(|()| std::fs::write(limited.dir.join("cpu.cfs_quota_us"), "30000")),
            _ => std::fs::write(limited.dir.join("cpu.max"), "30000 100000"),
        };
        set.map_err(|e| format!("setting the quota: {e}"))?;
        Ok(limited)
    }

    fn procs(&self) -> String {
        self.dir.join("cgroup.procs").display().to_string()
    }
}

impl Drop for Limited {
    fn drop(&mut self) {
        // A process left in it (the test failed mid-way) goes back to the root.
        let root = self
            .dir
            .parent()
            .unwrap_or(Path::new("/"))
            .join("cgroup.procs");
        if let Ok(left) = std::fs::read_to_string(self.dir.join("cgroup.procs")) {
            for pid in left.lines() {
                let _ = std::fs::write(&root, pid);
            }
        }
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn a_client_held_to_a_cpu_quota_is_told_so() {
    if !is_root() {
        eprintln!("skipped: needs root to make a cgroup");
        return;
    }
    let limited = match Limited::make("sonde-quota") {
        Ok(l) => l,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    eprintln!("cgroup v{} at {}", limited.version, limited.dir.display());
    let server = ServerProc::start_with(&["--no-store"]);
    let port = server.port();
    for _ in 0..3 {
        // The wrapper moves itself into the cgroup, then becomes netsonde.
        let script = format!("echo $$ > {} && exec \"$0\" \"$@\"", limited.procs());
        let child = wrapped("sh", &["-c", &script])
            .args([
                "client",
                "127.0.0.1",
                "-p",
                &port,
                "-t",
                "3",
                "--no-store",
                "--json",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = wait_bounded(child, Duration::from_secs(60));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{err}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let g = &v["client"]["cpu"]["cgroup"];
        assert_eq!(g["version"], limited.version, "{g}");
        assert!(
            (g["quota_cores"].as_f64().unwrap() - 0.3).abs() < 1e-9,
            "{g}"
        );
        let (periods, throttled) = (
            g["periods"].as_u64().unwrap(),
            g["throttled_periods"].as_u64().unwrap(),
        );
        assert!(periods >= 20 && throttled * 2 >= periods, "{g}");
        // The server, outside it, has no quota.
        assert!(
            v["server"]["cpu"]["cgroup"]["quota_cores"].is_null(),
            "{}",
            v["server"]["cpu"]["cgroup"]
        );
        let d = &v["diagnosis"]["bottleneck"];
        assert_eq!(d["kind"], "cpu-quota", "{}", v["diagnosis"]);
        assert_eq!(d["side"], "client", "{d}");
        let evidence = v["diagnosis"]["evidence"].as_str().unwrap();
        assert!(evidence.contains("quota of 0.30 CPU"), "{evidence}");
    }
}

#!/usr/bin/env python3
"""netsonde against every peer from Debian's packages, on loopback.

A benchmark, not a test: it prints one table of ratios and asserts nothing.

Peers: iperf3, iperf (2.x), nuttcp, sockperf, qperf. Each case runs every tool
that can do it, interleaved: one round runs each case once per tool, in an order
that rotates from round to round, so slow drift of the machine falls on every tool
alike. Figures are medians over the rounds, with min-max.

CPU is measured the same way for every tool, from outside: the server's CPU time
from /proc/PID/stat across the run, plus the client's from wait4's rusage. On
loopback the receive path runs in the sender's softirq, so only the sum of both
ends means anything; it is given as CPU-seconds per GB moved (streams) or CPU-us
per transaction (request/response).

Placement: streams unpinned; request/response servers pinned to core 1 and
clients to core 0 (a cross-core round trip, about 50-120 us on a small VM); no
busy polling anywhere.

Usage:  python3 bench/compare_peers.py [--rounds 5] [--time 4] [--cases a,b]
        (bench/compare-peers.sh wraps it and installs the peers.)
"""

import argparse
import json
import os
import re
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HOST = "127.0.0.1"
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid):
    """CPU seconds (user + system, all threads) a process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def wait_port(port, udp=False, timeout=5.0):
    """Waits until something listens on the port."""
    deadline = time.time() + timeout
    flag = "-Hlun" if udp else "-Hltn"
    while time.time() < deadline:
        out = subprocess.run(["ss", flag, f"sport = :{port}"], capture_output=True, text=True).stdout
        if out.strip():
            return
        time.sleep(0.05)
    raise SystemExit(f"nothing listens on port {port}")


class Servers:
    """The servers, started once, killed by PID at the end."""

    def __init__(self, netsonde, base):
        self.procs = {}
        self.netsonde = netsonde
        self.port = {}
        self.base = base

    def start(self, name, argv, port, udp=False, pin=None):
        if pin is not None:
            argv = ["taskset", "-c", str(pin)] + argv
        p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.procs[name] = p
        self.port[name] = port
        wait_port(port, udp)

    def pid(self, name):
        return self.procs[name].pid

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs.values():
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def run(argv, server_pid, timeout):
    """Runs a client; returns (stdout, CPU seconds of client + server)."""
    s0 = proc_cpu(server_pid) if server_pid else 0.0
    c0 = children_cpu()
    for attempt in range(3):
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if p.returncode == 0:
            break
        sys.stderr.write(f"  (attempt {attempt + 1} failed: {' '.join(argv)}: {p.stderr.strip()[-300:]})\n")
        time.sleep(1.5)
        s0 = proc_cpu(server_pid) if server_pid else 0.0
        c0 = children_cpu()
    else:
        return None, None
    cpu = children_cpu() - c0 + ((proc_cpu(server_pid) - s0) if server_pid else 0.0)
    return p.stdout, cpu


# ---------------------------------------------------------------------------
# Tools: each returns a dict with the case's metric, and bytes or transactions
# for the CPU figure, or None when it cannot run the case.


class Netsonde:
    name = "netsonde"

    def __init__(self, bin, servers, t):
        self.bin, self.s, self.t = bin, servers, t

    def stream(self, size, parallel=1, bidir=False, udp=False):
        a = [self.bin, "client", HOST, "-p", str(self.s.port["netsonde"]), "-l", str(size),
             "-t", str(self.t), "-P", str(parallel), "--json"]
        if bidir:
            a.append("--bidir")
        if udp:
            a += ["-T", "udp-stream", "-b", "0"]
        out, cpu = run(a, self.s.pid("netsonde"), self.t + 30)
        if out is None:
            return None
        d = json.loads(out)
        dirs = d["directions"]
        moved = sum(x["bytes"] for x in dirs)
        secs = max(x["elapsed"] for x in dirs) / 1e9
        r = {"goodput": sum(x["goodput"] for x in dirs) / 1e9, "bytes": moved, "cpu": cpu,
             "messages": sum(x["messages_per_sec"] for x in dirs)}
        if udp:
            u = dirs[0]["udp"]
            r["pps"] = u["packets"] / secs
            r["loss"] = dirs[0]["loss"]
        return r

    def rr(self, size):
        a = ["taskset", "-c", "0", self.bin, "client", HOST, "-p", str(self.s.port["netsonde-rr"]),
             "-T", "tcp-rr", "--request-size", str(size), "--response-size", str(size),
             "-t", str(self.t), "--json"]
        out, cpu = run(a, self.s.pid("netsonde-rr"), self.t + 30)
        if out is None:
            return None
        d = json.loads(out)
        n = d["rr"]["transactions"]
        return {"p50": d["rr"]["latency"]["p50"] / 1e3, "tps": d["rr"]["transactions_per_sec"],
                "transactions": n, "cpu": cpu}

    def crr(self):
        a = ["taskset", "-c", "0", self.bin, "client", HOST, "-p", str(self.s.port["netsonde-rr"]),
             "-T", "tcp-crr", "-t", str(self.t), "--json"]
        out, cpu = run(a, self.s.pid("netsonde-rr"), self.t + 30)
        if out is None:
            return None
        d = json.loads(out)
        return {"tps": d["rr"]["transactions_per_sec"], "transactions": d["rr"]["transactions"],
                "cpu": cpu}


class Iperf3:
    name = "iperf3"

    def __init__(self, servers, t):
        self.s, self.t = servers, t

    def stream(self, size, parallel=1, bidir=False, udp=False):
        a = ["iperf3", "-c", HOST, "-p", str(self.s.port["iperf3"]), "-l", str(size),
             "-t", str(self.t), "-P", str(parallel), "-J"]
        if bidir:
            a.append("--bidir")
        if udp:
            a += ["-u", "-b", "0"]
        out, cpu = run(a, self.s.pid("iperf3"), self.t + 30)
        if out is None:
            return None
        e = json.loads(out)["end"]
        if udp:
            s = e["sum"]
            got = s["packets"] - s["lost_packets"]
            return {"pps": got / s["seconds"], "loss": s["lost_percent"], "bytes": got * size,
                    "cpu": cpu, "goodput": got * size * 8 / s["seconds"] / 1e9}
        rx = [e["sum_received"]] + ([e["sum_received_bidir_reverse"]] if bidir else [])
        moved = sum(x["bytes"] for x in rx)
        gbps = sum(x["bits_per_second"] for x in rx) / 1e9
        return {"goodput": gbps, "bytes": moved, "cpu": cpu, "messages": gbps * 1e9 / 8 / size}


class Iperf2:
    name = "iperf2"

    def __init__(self, servers, t):
        self.s, self.t = servers, t

    def stream(self, size, parallel=1, bidir=False, udp=False):
        if udp:
            return None  # its client does not report what the server received
        a = ["iperf", "-c", HOST, "-p", str(self.s.port["iperf2"]), "-l", str(size),
             "-t", str(self.t), "-P", str(parallel), "-y", "C"]
        if bidir:
            a.append("--full-duplex")
        out, cpu = run(a, self.s.pid("iperf2"), self.t + 30)
        if out is None:
            return None
        rows = [l.split(",") for l in out.strip().splitlines() if l.count(",") >= 8]
        # One row per stream (and a sum row, id -1, when there are several).
        sums = [r for r in rows if r[5] == "-1"]
        use = sums if sums else rows
        moved = sum(int(r[7]) for r in use)
        gbps = sum(int(r[8]) for r in use) / 1e9
        return {"goodput": gbps, "bytes": moved, "cpu": cpu, "messages": gbps * 1e9 / 8 / size}


class Nuttcp:
    name = "nuttcp"

    def __init__(self, servers, t):
        self.s, self.t = servers, t

    def stream(self, size, parallel=1, bidir=False, udp=False):
        if bidir:
            return None
        p = self.s.port["nuttcp"]
        a = ["nuttcp", f"-P{p}", f"-p{p + 1}", f"-T{self.t}", f"-l{size}", f"-N{parallel}"]
        if udp:
            a += ["-u", "-R100g"]
        a.append(HOST)
        # A one-shot server per run (its forking server drops UDP): its CPU comes
        # with the client's from wait4.
        c0 = children_cpu()
        srv = subprocess.Popen(["nuttcp", "-1", f"-P{p}", f"-p{p + 1}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_port(p)
            c = subprocess.run(a, capture_output=True, text=True, timeout=self.t + 30)
            srv.wait(timeout=10)
        finally:
            if srv.poll() is None:
                srv.kill()
                srv.wait()
        if c.returncode != 0:
            sys.stderr.write(f"  (nuttcp failed: {c.stderr.strip()[-300:]})\n")
            return None
        out, cpu = c.stdout, children_cpu() - c0
        m = re.search(r"([\d.]+) MB /\s+([\d.]+) sec =\s+([\d.]+) Mbps", out)
        if not m:
            return None
        mb, secs, mbps = float(m.group(1)), float(m.group(2)), float(m.group(3))
        r = {"goodput": mbps / 1e3, "bytes": mb * 1048576, "cpu": cpu,
             "messages": mbps * 1e6 / 8 / size}
        if udp:
            d = re.search(r"(\d+) / (\d+) drop/pkt ([\d.]+) %loss", out)
            if not d:
                return None
            got = int(d.group(2)) - int(d.group(1))
            r.update(pps=got / secs, loss=float(d.group(3)))
        return r


class Sockperf:
    name = "sockperf"

    def __init__(self, servers, t):
        self.s, self.t = servers, t

    def rr(self, size):
        a = ["taskset", "-c", "0", "sockperf", "ping-pong", "--tcp", "-i", HOST,
             "-p", str(self.s.port["sockperf"]), "-t", str(self.t), "-m", str(size), "--full-rtt"]
        out, cpu = run(a, self.s.pid("sockperf"), self.t + 30)
        if out is None:
            return None
        p50 = re.search(r"percentile 50\.000 =\s+([\d.]+)", out)
        v = re.search(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=\d+; ReceivedMessages=(\d+)", out)
        if not (p50 and v):
            return None
        n = int(v.group(2))
        return {"p50": float(p50.group(1)), "tps": n / float(v.group(1)), "transactions": n,
                "cpu": cpu}


class Qperf:
    name = "qperf"

    def __init__(self, servers, t):
        self.s, self.t = servers, t

    def rr(self, size):
        a = ["taskset", "-c", "0", "qperf", HOST, "-lp", str(self.s.port["qperf"]),
             "-t", str(self.t), "-m", str(size), "-vu", "tcp_lat"]
        out, cpu = run(a, self.s.pid("qperf"), self.t + 30)
        if out is None:
            return None
        m = re.search(r"latency\s+=\s+([\d.]+) (us|ms|ns)", out)
        n = re.search(r"msg_rate\s+=\s+([\d.]+) (K/sec|/sec|M/sec)", out)
        if not m:
            return None
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[m.group(2)]
        # qperf reports half the round trip.
        rtt = 2 * float(m.group(1)) * scale
        tps = 1e6 / rtt
        if n:
            tps = float(n.group(1)) * {"/sec": 1, "K/sec": 1e3, "M/sec": 1e6}[n.group(2)] / 2
        return {"p50": rtt, "tps": tps, "transactions": tps * self.t, "cpu": cpu,
                "note": "mean, not p50"}


# ---------------------------------------------------------------------------
# Cases: (name, what, metric, unit, higher-is-better, (tool method, its arguments))

def cases():
    k = 1024
    return [
        ("tcp-128k", "TCP, 1 stream, 128 KiB writes", "goodput", "Gbit/s", True,
         ("stream", {"size": 128 * k})),
        ("tcp-64", "TCP, 64 B writes", "messages", "msg/s", True, ("stream", {"size": 64})),
        ("tcp-1k", "TCP, 1 KiB writes", "goodput", "Gbit/s", True, ("stream", {"size": k})),
        ("tcp-16k", "TCP, 16 KiB writes", "goodput", "Gbit/s", True, ("stream", {"size": 16 * k})),
        ("tcp-p2", "TCP, -P 2, 128 KiB", "goodput", "Gbit/s", True,
         ("stream", {"size": 128 * k, "parallel": 2})),
        ("tcp-p4", "TCP, -P 4, 128 KiB", "goodput", "Gbit/s", True,
         ("stream", {"size": 128 * k, "parallel": 4})),
        ("tcp-bidir", "TCP, --bidir, 128 KiB", "goodput", "Gbit/s", True,
         ("stream", {"size": 128 * k, "bidir": True})),
        ("udp-64", "UDP, 64 B, unpaced, received", "pps", "pkt/s", True,
         ("stream", {"size": 64, "udp": True})),
        ("udp-1472", "UDP, 1472 B, unpaced, received", "pps", "pkt/s", True,
         ("stream", {"size": 1472, "udp": True})),
        ("tcp-rr", "tcp-rr 14 B, blocking, cross-core p50", "p50", "us RTT", False,
         ("rr", {"size": 14})),
        # No Debian peer connects, requests, responds and closes (netperf's TCP_CRR
        # is not in Debian main; iperf2's --connect-only is rate-limited): netsonde
        # alone, for the record.
        ("tcp-crr", "tcp-crr 1 B", "tps", "trans/s", True,
         ("crr", {})),
    ]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=float, default=4.0)
    ap.add_argument("--cases", default="")
    ap.add_argument("--netsonde", default="")
    ap.add_argument("--port", type=int, default=25300)
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    bin = a.netsonde or os.path.join(root, "target", "release", "netsonde")
    if not os.access(bin, os.X_OK):
        raise SystemExit(f"no netsonde binary at {bin}: cargo build --release")
    for tool in ["iperf3", "iperf", "nuttcp", "sockperf", "qperf", "taskset", "ss"]:
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is missing (bench/compare-peers.sh installs the peers)")
    chosen = [c for c in cases() if not a.cases or c[0] in a.cases.split(",")]
    t = a.time
    p = a.port
    s = Servers(bin, p)
    try:
        s.start("netsonde", [bin, "server", "-p", str(p), "--bind", HOST], p)
        s.start("netsonde-rr", [bin, "server", "-p", str(p + 1), "--bind", HOST], p + 1, pin=1)
        s.start("iperf3", ["iperf3", "-s", "-p", str(p + 2), "-B", HOST], p + 2)
        s.start("iperf2", ["iperf", "-s", "-p", str(p + 3), "-B", HOST], p + 3)
        s.port["nuttcp"] = p + 5  # a one-shot server per run
        s.start("sockperf", ["sockperf", "server", "--tcp", "-i", HOST, "-p", str(p + 8)],
                p + 8, pin=1)
        s.start("qperf", ["qperf", "-lp", str(p + 9)], p + 9, pin=1)
        tools = [Netsonde(bin, s, t), Iperf3(s, t), Iperf2(s, t), Nuttcp(s, t), Sockperf(s, t),
                 Qperf(s, t)]
        version = subprocess.run([bin, "--version"], capture_output=True, text=True).stdout.strip()
        print(f"netsonde: {bin} ({version})")
        print(f"host: {os.uname().release}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; "
              f"{a.rounds} rounds, {t:g} s per run; streams unpinned; RR servers on core 1, "
              f"clients on core 0; no busy polling")
        results = {}  # (case, tool) -> list of dicts
        for r in range(a.rounds):
            print(f"round {r + 1}/{a.rounds}", flush=True)
            for name, what, metric, unit, higher, call in chosen:
                order = tools[r % len(tools):] + tools[:r % len(tools)]
                for tool in order:
                    method, kwargs = call
                    fn = getattr(tool, method, None)
                    v = fn(**kwargs) if fn else None
                    if v is None:
                        continue
                    results.setdefault((name, tool.name), []).append(v)
                    print(f"  {name:<10} {tool.name:<9} {metric} {v[metric]:.4g} {unit}", flush=True)
        report(chosen, tools, results, a)
    finally:
        s.stop()


def fmt(v):
    if v >= 1e5:
        return f"{v / 1e6:.3f}M"
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.2f}"


def cpu_figure(runs):
    """CPU-s/GB (streams) or CPU-us/transaction, median over runs."""
    per = []
    for v in runs:
        if v.get("cpu") is None:
            continue
        if "bytes" in v and v["bytes"]:
            per.append(v["cpu"] / (v["bytes"] / 1e9))
        elif v.get("transactions"):
            per.append(v["cpu"] / v["transactions"] * 1e6)
    return statistics.median(per) if per else None


def report(chosen, tools, results, a):
    print()
    print(f"Medians of {a.rounds} interleaved rounds, {a.time:g} s each; [min-max]; CPU = client + "
          "server CPU per GB moved (streams) or per transaction (rr, crr)")
    print(f"{'case':<44} {'netsonde':>22} {'CPU':>9}   {'best peer':<9} {'peer':>22} {'CPU':>9} "
          f"{'ratio':>6}")
    for name, what, metric, unit, higher, _ in chosen:
        ns = results.get((name, "netsonde"), [])
        if not ns:
            continue
        peers = []
        for tool in tools[1:]:
            runs = results.get((name, tool.name), [])
            if runs:
                peers.append((statistics.median(v[metric] for v in runs), tool.name, runs))
        med = statistics.median(v[metric] for v in ns)
        if not peers:
            label = f"{what} ({unit})"
            print(f"{label:<44} {fmt(med):>9} {cpu_figure(ns) or 0:>22.3f}   (no peer)")
            continue
        best = max(peers) if higher else min(peers)
        rng = lambda runs: f"[{fmt(min(v[metric] for v in runs))}-{fmt(max(v[metric] for v in runs))}]"
        ratio = med / best[0] if best[0] else float("nan")
        cpu_unit = "s/GB" if "bytes" in ns[0] else "us/tr"
        c1, c2 = cpu_figure(ns), cpu_figure(best[2])
        cs = lambda c: f"{c:.3f}" if c is not None else "-"
        label = f"{what} ({unit}{'' if higher else ', lower better'})"
        print(f"{label:<44} {fmt(med):>9} {rng(ns):>12} {cs(c1):>9}   {best[1]:<9} {fmt(best[0]):>9} "
              f"{rng(best[2]):>12} {cs(c2):>9} {ratio:>6.2f}")
        extra = []
        if "loss" in ns[0]:
            extra.append(f"loss % netsonde {statistics.median(v['loss'] for v in ns):.2f}, "
                         f"{best[1]} {statistics.median(v['loss'] for v in best[2]):.2f}")
        others = [f"{n} {fmt(m)}" for m, n, _ in sorted(peers, reverse=higher) if n != best[1]]
        if others:
            extra.append("others: " + ", ".join(others))
        if extra:
            print(f"{'':<46}{'; '.join(extra)}  (CPU in {cpu_unit})")
    print("ratio = netsonde / best peer (above 1 is better, except for latency)")


if __name__ == "__main__":
    main()

"""ceiling.py: netsonde's data path as a ratio to the host's ceiling.

The ceiling is bench/bare.c: the barest loops a socket can be driven with (one
system call per message, or per batch of 64 with sendmmsg/recvmmsg; no clock, no
sequence number, no bookkeeping). Every case runs the bare loop, netsonde and
iperf3 (where it can) in interleaved rounds, the order rotating each round, on
loopback with the sender on core 0 and the receiver on core 1 (taskset): TCP
64 B and 128 KiB writes (goodput), UDP 64 B and 1472 B (datagrams received per
second), the same UDP sizes batched (netsonde --io batch --no-gso, sendmmsg and
recvmmsg of 64 as the batched loop's), and TCP request/response at 64 B (transactions per second, one in
flight). The UDP copy cases also run the bare loops doing the least that loss
and jitter need per datagram (BARE_STAMP: a clock read and a sequence number
and send time at the sender; a clock read, the loss count and RFC 3550 jitter
at the receiver), the floor of what netsonde's figures cost, and the same in
processes with three more (idle) threads, the loop on a descriptor table of its
own (BARE_THREADS), as a tool with a control connection and a sampler is; with
--rx-work,
also the bare loop whose UDP receiver spins N ns per datagram
(BARE_RX_WORK_NS). A case's ratio is the median over rounds of netsonde / bare (and
iperf3 / bare) in the same round. A benchmark: it asserts nothing.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HOST = "127.0.0.1"


def sh(argv, timeout, env=None):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    if p.returncode != 0:
        sys.stderr.write(f"  ({' '.join(argv)} failed: {p.stderr.strip()[-300:]})\n")
        return None
    return p.stdout


def bare_line(out):
    f = out.split()
    return {f[i]: float(f[i + 1]) for i in range(0, len(f) - 1, 2)}


class Bare:
    name = "bare"

    def __init__(self, exe, t, port):
        self.exe, self.t, self.port = exe, t, port

    env = None

    def pair(self, server, client):
        srv = subprocess.Popen(["taskset", "-c", "1", self.exe] + server,
                               stdout=subprocess.PIPE, text=True, env=self.env)
        time.sleep(0.3)
        sh(["taskset", "-c", "0", self.exe] + client, self.t + 20, self.env)
        try:
            out, _ = srv.communicate(timeout=self.t + 20)
        except subprocess.TimeoutExpired:
            srv.kill()
            return None
        return bare_line(out) if out.strip() else None

    def tcp(self, size):
        p = str(self.port)
        r = self.pair(["tcp-recv", p, str(size)], ["tcp-send", HOST, p, str(size), str(self.t)])
        return r and r["bytes"] * 8 / r["secs"] / 1e9

    def udp(self, size, batch):
        p, b = str(self.port), str(64 if batch else 1)
        r = self.pair(["udp-recv", p, str(size), str(self.t), b],
                      ["udp-send", HOST, p, str(size), str(self.t + 1), b])
        return r and r["msgs"] / r["secs"]

    def rr(self, size):
        p = str(self.port)
        srv = subprocess.Popen(["taskset", "-c", "1", self.exe, "rr-server", p, str(size)])
        time.sleep(0.3)
        out = sh(["taskset", "-c", "0", self.exe, "rr-client", HOST, p, str(size), str(self.t)],
                 self.t + 20)
        srv.wait(timeout=10)
        if not out:
            return None
        r = bare_line(out)
        return r["msgs"] / r["secs"]


class BareWork(Bare):
    """The bare loop whose UDP receiver spins `ns` after each datagram
    (BARE_RX_WORK_NS): how far the ceiling moves with a receiver's time per
    datagram. UDP copy cases only."""

    def __init__(self, exe, t, port, ns):
        super().__init__(exe, t, port)
        self.name = f"bare+{ns}ns"
        self.env = dict(os.environ, BARE_RX_WORK_NS=str(ns))

    def tcp(self, size):
        return None

    def udp(self, size, batch):
        return None if batch else super().udp(size, batch)

    def rr(self, size):
        return None


class BareStamped(BareWork):
    """The bare UDP copy loops doing the least that loss and jitter need per
    datagram (BARE_STAMP): a clock read, a sequence number and a send time at
    the sender; a clock read, the loss count and RFC 3550 jitter at the
    receiver. The floor of what netsonde's figures cost."""

    def __init__(self, exe, t, port, threads=0):
        super().__init__(exe, t, port, 0)
        self.name = "bare+stamp" + ("+threads" if threads else "")
        self.env = dict(os.environ, BARE_STAMP="1")
        if threads:
            # A process with other threads, its loop on a descriptor table of
            # its own, as netsonde's flow threads are (BARE_THREADS).
            self.env["BARE_THREADS"] = str(threads)


class Netsonde:
    name = "netsonde"

    def __init__(self, exe, t, port):
        self.exe, self.t, self.port = exe, t, port
        self.srv = subprocess.Popen(["taskset", "-c", "1", exe, "server", "-p", str(port),
                                     "--bind", HOST, "--no-store"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)

    def client(self, args):
        out = sh(["taskset", "-c", "0", self.exe, "client", HOST, "-p", str(self.port),
                  "-t", str(self.t), "--no-store", "--json"] + args, self.t + 30)
        return json.loads(out) if out else None

    def tcp(self, size):
        d = self.client(["-l", str(size)])
        return d and d["directions"][0]["goodput"] / 1e9

    def udp(self, size, batch):
        args = ["-T", "udp-stream", "-l", str(size), "-b", "0"]
        if batch:
            # sendmmsg/recvmmsg of 64, as the bare batched loop: every datagram
            # a packet (GSO on loopback sends datagrams that never cross as one).
            args += ["--io", "batch", "--no-gso"]
        d = self.client(args)
        if not d:
            return None
        x = d["directions"][0]
        return x["udp"]["packets"] / (x["elapsed"] / 1e9)

    def rr(self, size):
        d = self.client(["-T", "tcp-rr", "--request-size", str(size), "--response-size", str(size)])
        return d and d["rr"]["transactions_per_sec"]

    def stop(self):
        self.srv.terminate()
        self.srv.wait(timeout=10)


class Iperf3:
    name = "iperf3"

    def __init__(self, t, port):
        self.t, self.port = t, port
        self.srv = subprocess.Popen(["taskset", "-c", "1", "iperf3", "-s", "-p", str(port),
                                     "-B", HOST], stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        time.sleep(0.5)

    def client(self, args):
        out = sh(["taskset", "-c", "0", "iperf3", "-c", HOST, "-p", str(self.port), "-t",
                  str(int(self.t)), "-J"] + args, self.t + 30)
        return json.loads(out) if out else None

    def tcp(self, size):
        d = self.client(["-l", str(size)])
        return d and d["end"]["sum_received"]["bits_per_second"] / 1e9

    def udp(self, size, batch):
        if batch:
            return None
        d = self.client(["-u", "-b", "0", "-l", str(size)])
        if not d:
            return None
        s = d["end"]["sum"]
        return (s["packets"] - s["lost_packets"]) / s["seconds"]

    def rr(self, size):
        return None

    def stop(self):
        self.srv.terminate()
        self.srv.wait(timeout=10)


CASES = [
    ("tcp-64", "TCP, 64 B writes", "Gbit/s", ("tcp", {"size": 64})),
    ("tcp-128k", "TCP, 128 KiB writes", "Gbit/s", ("tcp", {"size": 131072})),
    ("udp-64", "UDP, 64 B, received", "pkt/s", ("udp", {"size": 64, "batch": False})),
    ("udp-1472", "UDP, 1472 B, received", "pkt/s", ("udp", {"size": 1472, "batch": False})),
    ("udp-64-batch", "UDP, 64 B, batched, received", "pkt/s", ("udp", {"size": 64, "batch": True})),
    ("udp-1472-batch", "UDP, 1472 B, batched, received", "pkt/s",
     ("udp", {"size": 1472, "batch": True})),
    ("tcp-rr", "TCP RR, 64 B, one in flight", "trans/s", ("rr", {"size": 64})),
]


def fmt(v):
    return f"{v / 1e6:.3f}M" if v >= 1e5 else f"{v:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=float, default=3.0)
    ap.add_argument("--cases", default="")
    ap.add_argument("--netsonde", required=True)
    ap.add_argument("--bare", required=True)
    ap.add_argument("--port", type=int, default=26300)
    ap.add_argument("--rx-work", default="",
                    help="also the bare loop with its UDP receiver spinning N ns per "
                         "datagram, for each N of a comma-separated list (UDP copy cases)")
    a = ap.parse_args()
    chosen = [c for c in CASES if not a.cases or c[0] in a.cases.split(",")]
    bare = Bare(a.bare, a.time, a.port)
    ns = Netsonde(a.netsonde, a.time, a.port + 1)
    i3 = Iperf3(a.time, a.port + 2)
    works = [int(w) for w in a.rx_work.split(",") if w]
    tools = [bare, ns, i3, BareStamped(a.bare, a.time, a.port),
             BareStamped(a.bare, a.time, a.port, threads=3)] + [
        BareWork(a.bare, a.time, a.port, w) for w in works]
    results = {}
    try:
        print(f"host: {os.uname().release}, {os.cpu_count()} cores; {a.rounds} rounds of "
              f"{a.time:g} s; sender on core 0, receiver on core 1; loopback", flush=True)
        for r in range(a.rounds):
            for key, _, unit, (method, kw) in chosen:
                order = tools[r % len(tools):] + tools[:r % len(tools)]
                for t in order:
                    v = getattr(t, method)(**kw)
                    if v:
                        results.setdefault((key, t.name), {})[r] = v
                        print(f"  round {r + 1} {key:<15} {t.name:<9} {fmt(v)} {unit}", flush=True)
                    time.sleep(0.2)
    finally:
        ns.stop()
        i3.stop()
    print()
    print(f"Medians of {a.rounds} interleaved rounds [min-max]; ratio: median over rounds of "
          "tool / bare loop in the same round")
    print(f"{'case':<32} {'bare loop':>22} {'netsonde':>22} {'ratio':>6} {'iperf3':>10} {'ratio':>6}")
    for key, what, unit, _ in chosen:
        b = results.get((key, "bare"), {})
        row = [f"{what} ({unit})"]
        if not b:
            continue
        bv = list(b.values())
        row.append(f"{fmt(statistics.median(bv))} [{fmt(min(bv))}-{fmt(max(bv))}]")
        for tool in ("netsonde", "iperf3"):
            t = results.get((key, tool), {})
            if not t:
                row += ["-", "-"]
                continue
            ratios = [t[r] / b[r] for r in t if r in b]
            tv = list(t.values())
            cell = f"{fmt(statistics.median(tv))}" + (
                f" [{fmt(min(tv))}-{fmt(max(tv))}]" if tool == "netsonde" else "")
            row += [cell, f"{statistics.median(ratios):.3f}" if ratios else "-"]
        print(f"{row[0]:<32} {row[1]:>22} {row[2]:>22} {row[3]:>6} {row[4]:>10} {row[5]:>6}")
    for key, what, unit, _ in chosen:
        b = results.get((key, "bare"), {})
        n = results.get((key, "netsonde"), {})
        for name, label in (("bare+stamp", "bare loops stamping as the figures need"),
                            ("bare+stamp+threads", "the same in processes with 3 more threads")):
            st = results.get((key, name), {})
            per = [n[r] / st[r] for r in n if r in st]
            if st and per:
                sv = list(st.values())
                print(f"{what} ({unit}), {label}: "
                      f"{fmt(statistics.median(sv))} [{fmt(min(sv))}-{fmt(max(sv))}], ratio "
                      f"{statistics.median([st[r] / b[r] for r in st if r in b]):.3f}; "
                      f"netsonde / it {statistics.median(per):.3f}")
        for w in works:
            t = results.get((key, f"bare+{w}ns"), {})
            ratios = [t[r] / b[r] for r in t if r in b]
            if ratios:
                tv = list(t.values())
                print(f"{what} ({unit}), bare receiver +{w} ns per datagram: "
                      f"{fmt(statistics.median(tv))} [{fmt(min(tv))}-{fmt(max(tv))}], "
                      f"ratio {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()

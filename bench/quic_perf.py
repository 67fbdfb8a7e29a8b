"""quic_perf.py: netsonde's QUIC against another stack's QUIC perf peer, side by side.

A benchmark for issue-level claims, not a test: it asserts nothing. The peer is
quinn's `perf` (its `quinn-perf` binary), which speaks the QUIC performance
protocol (draft-banks-quic-performance); build it yourself from quinn's public
source and pass its path (this project never builds or ships it). Every case
runs in interleaved rounds on loopback, client on core 0, server on core 1:

  up    netsonde -> quinn perf server    (--peer quic-perf -T quic-stream)
        quinn perf client -> quinn perf server  (one request, upload only)
        netsonde -> netsonde server      (-T quic-stream)
  down  the same with the server sending (-R; quinn: --download-size)
  rr    1-byte requests and responses, one at a time: netsonde quic-rr against
        the quinn perf server, quinn's client against it, netsonde against
        netsonde
  and in each case quinn's perf client against `netsonde server --quic-perf`
  (other stacks' clients measuring a netsonde server)

Goodput is each client's own figure (quinn's: the bytes its intervals count,
netsonde's: its measured interval's); medians over rounds, and each case's
ratio to quinn-client/quinn-server in the same round.
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import time

HOST = "127.0.0.1"


def run(argv, timeout):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        sys.stderr.write(f"  ({' '.join(argv)} failed: {p.stderr.strip()[-300:]})\n")
        return None
    return p.stdout


def netsonde(exe, port, t, case, peer):
    args = ["taskset", "-c", "0", exe, "client", HOST, "-p", str(port), "-t", str(t),
            "--no-store", "--json"] + (["--peer", "quic-perf"] if peer else [])
    args += {"up": ["-T", "quic-stream"], "down": ["-T", "quic-stream", "-R"],
             "rr": ["-T", "quic-rr"]}[case]
    out = run(args, t + 30)
    if not out:
        return None
    d = json.loads(out)
    if case == "rr":
        return d["rr"]["transactions_per_sec"]
    return d["directions"][0]["goodput"] / 1e9


def quinn_client(exe, port, t, case):
    size = {"up": ["--upload-size", "1000G", "--download-size", "0"],
            "down": ["--upload-size", "0", "--download-size", "1000G"],
            "rr": ["--upload-size", "1", "--download-size", "1"]}[case]
    out = run(["taskset", "-c", "0", exe, "client", f"{HOST}:{port}", "--duration",
               str(int(t)), "--json", "/dev/stdout"] + size, t + 30)
    if not out:
        return None
    if case == "rr":
        # Its own count: "RPS: N (M requests in S s)".
        m = re.search(r"RPS: ([0-9.]+)", out)
        return float(m.group(1)) if m else None
    start = out.find("{")
    d = json.loads(out[start:out.rfind("}") + 1])
    ivs = d["intervals"]
    want = case == "up"
    bits = [i["sum"]["bits_per_second"] for i in ivs if i["sum"].get("sender") == want]
    return statistics.mean(bits) / 1e9 if bits else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("quinn_perf", help="path to quinn's perf binary (quinn-perf)")
    ap.add_argument("--netsonde", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=float, default=3.0)
    ap.add_argument("--port", type=int, default=26500)
    ap.add_argument("--cases", default="up,down")
    a = ap.parse_args()
    qport, nport, pport = a.port, a.port + 1, a.port + 2
    srv = [subprocess.Popen(["taskset", "-c", "1", a.quinn_perf, "server", "--listen",
                             f"{HOST}:{qport}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL),
           subprocess.Popen(["taskset", "-c", "1", a.netsonde, "server", "-p", str(nport),
                             "--bind", HOST, "--no-store", "--quic-perf", str(pport)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    time.sleep(0.5)
    tools = [
        ("netsonde->quinn", lambda c: netsonde(a.netsonde, qport, a.time, c, True)),
        ("quinn->quinn", lambda c: quinn_client(a.quinn_perf, qport, a.time, c)),
        ("netsonde->netsonde", lambda c: netsonde(a.netsonde, nport, a.time, c, False)),
        ("quinn->netsonde", lambda c: quinn_client(a.quinn_perf, pport, a.time, c)),
    ]
    res = {}
    try:
        for r in range(a.rounds):
            for case in a.cases.split(","):
                order = tools[r % len(tools):] + tools[:r % len(tools)]
                for name, f in order:
                    v = f(case)
                    if v:
                        res.setdefault((case, name), {})[r] = v
                        print(f"  round {r + 1} {case:<5} {name:<19} {v:.3f}", flush=True)
                    time.sleep(0.3)
    finally:
        for s in srv:
            s.terminate()
            s.wait(timeout=10)
    print()
    print(f"Medians of {a.rounds} interleaved rounds (Gbit/s, or transactions/s for rr); "
          "ratio: median of per-round ratios to quinn->quinn")
    for case in a.cases.split(","):
        base = res.get((case, "quinn->quinn"), {})
        for name, _ in tools:
            v = res.get((case, name), {})
            if not v:
                continue
            ratios = [v[r] / base[r] for r in v if r in base]
            ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
            print(f"{case:<5} {name:<19} {statistics.median(v.values()):>9.3f} "
                  f"[{min(v.values()):.3f}-{max(v.values()):.3f}]  x {ratio}")


if __name__ == "__main__":
    main()

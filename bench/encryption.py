"""encryption.py: what TLS and QUIC cost a host, against plain TCP, side by side.

Every case runs in interleaved rounds (the order rotating each round) against
one netsonde server on loopback, client on core 0 and server on core 1
(taskset): tcp-stream, tls-stream with each suite asked, and quic-stream with
GSO and without it, with four streams on its connection and as four
connections, at each message size; request/response on a kept
connection (tcp-rr, tls-rr, quic-rr: 1-byte messages, one in flight) and a
connection per transaction (tcp-crr, tls-crr and quic-crr, full and resumed:
handshakes per second, each end's CPU per transaction, and the part of it
the handshake's public-key operations took, timed: "pk c" and "pk s", us per
transaction). Per case: goodput, and each end's CPU per KiB of plaintext (the test's
own CPU: its flow threads and its share of the host's busy time), as medians
over rounds, and the part of it the records' or packets' crypto took (timed
on the flow threads: "crypto c" and "crypto s", us per KiB); the ratio of
each TLS case to TCP at the same size is the median of the per-round ratios. A benchmark: it asserts nothing.
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

HOST = "127.0.0.1"
SUITES = [
    ("tcp", ["-T", "tcp-stream"]),
    ("tls13-aes128", ["-T", "tls-stream", "--tls-suite", "TLS13_AES_128_GCM_SHA256"]),
    ("tls13-aes256", ["-T", "tls-stream", "--tls-suite", "TLS13_AES_256_GCM_SHA384"]),
    ("tls13-chacha", ["-T", "tls-stream", "--tls-suite", "TLS13_CHACHA20_POLY1305_SHA256"]),
    ("tls12-aes128", ["-T", "tls-stream", "--tls-suite", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]),
    ("quic", ["-T", "quic-stream"]),
    ("quic-no-gso", ["-T", "quic-stream", "--no-gso"]),
    # Four streams on one connection, and four connections of one stream.
    ("quic-4streams", ["-T", "quic-stream", "--quic-streams", "4"]),
    ("quic-P4", ["-T", "quic-stream", "-P", "4"]),
]
# Request/response on one kept connection per flow: what TLS's records and
# QUIC's user-space stack add to each round trip.
RR = [
    ("tcp-rr", ["-T", "tcp-rr"]),
    ("tls-rr", ["-T", "tls-rr"]),
    ("quic-rr", ["-T", "quic-rr"]),
]
# A connection per transaction: handshakes per second, full and resumed.
CRR = [
    ("tcp-crr", ["-T", "tcp-crr"]),
    ("tls13-full", ["-T", "tls-crr"]),
    ("tls13-resumed", ["-T", "tls-crr", "--tls-resume"]),
    ("tls12-full", ["-T", "tls-crr", "--tls-suite", "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]),
    ("tls12-resumed", ["-T", "tls-crr", "--tls-resume", "--tls-suite",
                       "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"]),
    ("quic-full", ["-T", "quic-crr"]),
    ("quic-resumed", ["-T", "quic-crr", "--tls-resume"]),
]


def client(exe, port, t, size, case):
    args = ["taskset", "-c", "0", exe, "client", HOST, "-p", str(port), "-t", str(t),
            "--no-store", "--json"] + case + (["-l", str(size)] if size else [])
    p = subprocess.run(args, capture_output=True, text=True, timeout=t + 30)
    if p.returncode != 0:
        sys.stderr.write(f"  ({' '.join(args)} failed: {p.stderr.strip()[-300:]})\n")
        return None
    d = json.loads(p.stdout)
    if d.get("rr"):
        n = d["rr"]["transactions"] or 1
        return {
            "tps": d["rr"]["transactions_per_sec"],
            "client": d["client_cost"]["us_per_transaction"],
            "server": d["server_cost"]["us_per_transaction"],
            "client_pk": interval_ns(d["client"]["flows"], "handshake_ns") / 1e3 / n,
            "server_pk": interval_ns(d["server"]["flows"], "handshake_ns") / 1e3 / n,
        }
    return {
        "gbps": d["directions"][0]["goodput"] / 1e9,
        "client": d["client_cost"]["us_per_kib"],
        "server": d["server_cost"]["us_per_kib"],
        "client_crypto": crypto_us_per_kib(d["client"]["flows"]),
        "server_crypto": crypto_us_per_kib(d["server"]["flows"]),
    }


def interval_ns(flows, key):
    """A crypto time of the flows (`ns`: the records' or packets' sealing
    and opening; `handshake_ns`: the handshakes' public-key operations),
    timed on the flow threads, in the measured interval (0 for plain TCP)."""
    ns = 0.0
    for f in flows:
        c = (f.get("io") or {}).get("crypto")
        if c and f["bytes_total"]:
            ns += c.get(key, 0) * f["bytes"] / f["bytes_total"]
    return ns


def crypto_us_per_kib(flows):
    """The records' or packets' sealing and opening per KiB of plaintext in
    the measured interval: the crypto's part of the end's CPU per KiB."""
    kib = sum(f["bytes"] for f in flows) / 1024
    return interval_ns(flows, "ns") / 1e3 / kib if kib else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--time", type=float, default=2.0)
    ap.add_argument("--sizes", default="16384,131072")
    ap.add_argument("--netsonde", required=True)
    ap.add_argument("--port", type=int, default=26400)
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",") if s]
    srv = subprocess.Popen(["taskset", "-c", "1", a.netsonde, "server", "-p", str(a.port),
                            "--bind", HOST, "--no-store"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    res = {}
    try:
        for r in range(a.rounds):
            order = (RR + CRR)[r % len(RR + CRR):] + (RR + CRR)[:r % len(RR + CRR)]
            for name, case in order:
                v = client(a.netsonde, a.port, a.time, None, case)
                if v:
                    res.setdefault(("trans", name), {})[r] = v
                    print(f"  round {r + 1} {name:<14} {v['tps']:9.0f} trans/s  client "
                          f"{v['client']:.1f} server {v['server']:.1f} us/trans", flush=True)
                time.sleep(0.2)
            for size in sizes:
                order = SUITES[r % len(SUITES):] + SUITES[:r % len(SUITES)]
                for name, suite in order:
                    v = client(a.netsonde, a.port, a.time, size, suite)
                    if v:
                        res.setdefault((size, name), {})[r] = v
                        print(f"  round {r + 1} {size:>7} B {name:<13} {v['gbps']:6.2f} Gbit/s  "
                              f"client {v['client']:.3f} (crypto {v['client_crypto']:.3f}) "
                              f"server {v['server']:.3f} (crypto {v['server_crypto']:.3f}) us/KiB",
                              flush=True)
                    time.sleep(0.2)
    finally:
        srv.terminate()
        srv.wait(timeout=10)
    med = statistics.median
    print()
    print(f"Medians of {a.rounds} interleaved rounds; x TCP: median of per-round ratios to "
          "tcp-stream at the same size")
    print(f"{'size':>7} {'case':<13} {'Gbit/s':>7} {'x TCP':>6} {'client us/KiB':>14} "
          f"{'x TCP':>6} {'server us/KiB':>14} {'x TCP':>6} {'crypto c':>9} {'crypto s':>9}")
    for size in sizes:
        base = res.get((size, "tcp"), {})
        for name, _ in SUITES:
            v = res.get((size, name), {})
            if not v:
                continue
            row = [f"{size:>7}", f"{name:<13}"]
            for key, w in (("gbps", 7), ("client", 14), ("server", 14)):
                row.append(f"{med([x[key] for x in v.values()]):>{w}.3f}")
                ratios = [v[r][key] / base[r][key] for r in v if r in base and base[r][key]]
                row.append(f"{med(ratios):>6.2f}" if ratios else f"{'-':>6}")
            for key in ("client_crypto", "server_crypto"):
                row.append(f"{med([x[key] for x in v.values()]):>9.3f}")
            print(" ".join(row))
    for cases in (RR, CRR):
        print()
        print(f"{'case':<14} {'trans/s':>9} {'x TCP':>6} {'client us/trans':>16} {'x TCP':>6} "
              f"{'server us/trans':>16} {'x TCP':>6} {'pk c':>7} {'pk s':>7}   "
              f"(x TCP: against {cases[0][0]})")
        base = res.get(("trans", cases[0][0]), {})
        for name, _ in cases:
            v = res.get(("trans", name), {})
            if not v:
                continue
            row = [f"{name:<14}"]
            for key, w in (("tps", 9), ("client", 16), ("server", 16)):
                row.append(f"{med([x[key] for x in v.values()]):>{w}.1f}")
                ratios = [v[r][key] / base[r][key] for r in v if r in base and base[r][key]]
                row.append(f"{med(ratios):>6.2f}" if ratios else f"{'-':>6}")
            for key in ("client_pk", "server_pk"):
                row.append(f"{med([x[key] for x in v.values()]):>7.1f}")
            print(" ".join(row))


if __name__ == "__main__":
    main()

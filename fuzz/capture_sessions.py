#!/usr/bin/env python3
"""Seeds the fuzz corpora from real sessions.

Runs `netsonde server` on loopback and a few real `netsonde client` tests through a
proxy that records both directions of each control connection, then writes:

  corpus/frame_decoder/<name>-c2s, <name>-s2c   the raw bytes each way
  corpus/handshake/<name>                       mode byte (1: keyed) + client bytes

Usage (from fuzz/): python3 capture_sessions.py ../target/release/netsonde
Loopback only; every process it starts is ended by its PID.
"""
import os, socket, subprocess, sys, tempfile, threading, time

BIN = sys.argv[1] if len(sys.argv) > 1 else "../target/release/netsonde"
HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def pump(src, dst, log):
    while True:
        try:
            b = src.recv(65536)
        except OSError:
            b = b""
        if not b:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            return
        log.extend(b)
        dst.sendall(b)


def capture(name, server_port, client_args, keyed):
    lst = socket.socket()
    lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lst.bind(("127.0.0.1", 0))
    lst.listen(1)
    port = lst.getsockname()[1]
    logs = {}

    def serve():
        c, _ = lst.accept()
        s = socket.create_connection(("127.0.0.1", server_port))
        c2s, s2c = bytearray(), bytearray()
        a = threading.Thread(target=pump, args=(c, s, c2s))
        b = threading.Thread(target=pump, args=(s, c, s2c))
        a.start(); b.start(); a.join(); b.join()
        logs["c2s"], logs["s2c"] = bytes(c2s), bytes(s2c)

    t = threading.Thread(target=serve)
    t.start()
    subprocess.run([BIN, "client", "127.0.0.1", "--port", str(port)] + client_args,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60)
    t.join(timeout=30)
    lst.close()
    fd = os.path.join(HERE, "corpus", "frame_decoder")
    hs = os.path.join(HERE, "corpus", "handshake")
    os.makedirs(fd, exist_ok=True)
    os.makedirs(hs, exist_ok=True)
    for way in ("c2s", "s2c"):
        with open(os.path.join(fd, f"{name}-{way}"), "wb") as f:
            f.write(logs.get(way, b""))
    with open(os.path.join(hs, name), "wb") as f:
        f.write(bytes([1 if keyed else 0]) + logs.get("c2s", b""))


def main():
    tmp = tempfile.mkdtemp(prefix="sonde-fuzz-")
    key = os.path.join(tmp, "k.key")
    subprocess.run([BIN, "keygen", "--out", key], check=True, stderr=subprocess.DEVNULL)
    sessions = [
        ("tcp-stream", ["-T", "tcp-stream", "-t", "0.2"]),
        ("udp-stream", ["-T", "udp-stream", "-t", "0.2", "-b", "10M"]),
        ("tcp-rr-p2", ["-T", "tcp-rr", "-t", "0.2", "-P", "2"]),
        ("tcp-crr", ["-T", "tcp-crr", "-t", "0.2"]),
        ("udp-rr", ["-T", "udp-rr", "-t", "0.2", "-i", "0.1"]),
    ]
    for keyed in (False, True):
        port = free_port()
        args = [BIN, "server", "--bind", "127.0.0.1", "--port", str(port)]
        if keyed:
            args += ["--auth-key", key]
        srv = subprocess.Popen(args, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        try:
            for name, cargs in sessions:
                extra = ["--auth-key", key] if keyed else []
                capture(("keyed-" if keyed else "") + name, port, cargs + extra, keyed)
        finally:
            srv.kill()
            srv.wait()


if __name__ == "__main__":
    main()

/* bare.c — the host's ceiling for bench/ceiling.sh: the barest loops a
 * socket can be driven with, one system call per message (or one per batch of
 * 64 with sendmmsg/recvmmsg), no clock read, no sequence number, no
 * bookkeeping beyond a counter. netsonde's data path is measured as a ratio to
 * these in the same rounds. Built by the bench (cc -O2); not part of netsonde.
 *
 *   bare tcp-recv PORT SIZE            accept one connection, read SIZE at a time to EOF
 *   bare tcp-send HOST PORT SIZE SECS  write SIZE at a time for SECS
 *   bare udp-recv PORT SIZE SECS BATCH receive for SECS from the first datagram
 *   bare udp-send HOST PORT SIZE SECS BATCH  send on a connected socket for SECS
 *   bare rr-server PORT SIZE           answer each SIZE-byte request with SIZE bytes
 *   bare rr-client HOST PORT SIZE SECS one request in flight, for SECS
 *
 * Receivers and the RR client print one line: "bytes N secs S msgs M" (the
 * figures over the measured time); the UDP sender "sent N secs S". BATCH is 1
 * (send/recv) or 64 (sendmmsg/recvmmsg).
 *
 * BARE_STAMP=1 makes the UDP copy loops do the least that loss and RFC 3550
 * jitter need per datagram, as netsonde's figures do: the sender reads the
 * time stamp counter and writes a sequence number and its send time in the
 * datagram; the receiver reads the counter, the two fields, counts what is
 * missing and keeps the jitter in integers (RFC 3550 A.8).
 *
 * BARE_THREADS=N starts N idle threads beside the loop, whose own thread
 * then takes a descriptor table of its own (unshare(CLONE_FILES)), as
 * netsonde's flow threads do: what being a process with other threads (a
 * control connection's, a sampler's) costs a data path on this kernel.
 *
 * BARE_RX_WORK_NS=N makes the UDP receiver spin N ns after each datagram (on
 * the time stamp counter, calibrated at the start): how far the ceiling
 * itself moves when a receiver does a little more per datagram (see
 * docs/PERFORMANCE.md). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MAXB 64

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* Time stamp counter ticks per ns, over 20 ms of CLOCK_MONOTONIC. */
static double tsc_per_ns(void) {
    double t0 = now();
    unsigned long long c0 = __builtin_ia32_rdtsc();
    while (now() - t0 < 0.02)
        ;
    return (__builtin_ia32_rdtsc() - c0) / ((now() - t0) * 1e9);
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static struct sockaddr_in addr(const char *host, int port) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1) die("address");
    return a;
}

static int listener(int port, int type) {
    int s = socket(AF_INET, type, 0), one = 1;
    if (s < 0) die("socket");
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = addr("127.0.0.1", port);
    if (bind(s, (struct sockaddr *)&a, sizeof a)) die("bind");
    if (type == SOCK_STREAM && listen(s, 1)) die("listen");
    return s;
}

static int connected(const char *host, int port, int type) {
    int s = socket(AF_INET, type, 0);
    if (s < 0) die("socket");
    struct sockaddr_in a = addr(host, port);
    if (connect(s, (struct sockaddr *)&a, sizeof a)) die("connect");
    return s;
}

static void *idle(void *arg) {
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv) {
    if (getenv("BARE_THREADS")) {
        for (int i = 0; i < atoi(getenv("BARE_THREADS")); i++) {
            pthread_t t;
            if (pthread_create(&t, NULL, idle, NULL)) die("pthread_create");
        }
        if (unshare(CLONE_FILES)) die("unshare");
    }
    if (argc < 4) {
        fprintf(stderr, "usage: see the head of bare.c\n");
        return 2;
    }
    const char *mode = argv[1];
    static char buf[1 << 20];
    if (!strcmp(mode, "tcp-recv")) {
        int l = listener(atoi(argv[2]), SOCK_STREAM);
        size_t size = atol(argv[3]);
        int c = accept(l, NULL, NULL);
        if (c < 0) die("accept");
        long long bytes = 0, msgs = 0;
        double t0 = 0;
        for (;;) {
            ssize_t n = read(c, buf, size);
            if (n <= 0) break;
            if (!bytes) t0 = now();
            bytes += n;
            msgs++;
        }
        printf("bytes %lld secs %.6f msgs %lld\n", bytes, now() - t0, msgs);
    } else if (!strcmp(mode, "tcp-send")) {
        int s = connected(argv[2], atoi(argv[3]), SOCK_STREAM);
        size_t size = atol(argv[4]);
        double end = now() + atof(argv[5]);
        for (long i = 0;; i++) {
            if (write(s, buf, size) < 0) die("write");
            /* The clock every 1024 writes: the loop is the write. */
            if ((i & 1023) == 0 && now() >= end) break;
        }
        close(s);
    } else if (!strcmp(mode, "udp-recv")) {
        int s = listener(atoi(argv[2]), SOCK_DGRAM);
        size_t size = atol(argv[3]);
        double secs = atof(argv[4]);
        /* The kernel's default buffers, as netsonde's and iperf3's defaults
         * have them: a like-for-like ceiling. */
        int batch = argc > 5 ? atoi(argv[5]) : 1;
        /* BARE_RCVBUF=N asks for N bytes of receive buffer, as netsonde's -w. */
        if (getenv("BARE_RCVBUF")) {
            int rb = atoi(getenv("BARE_RCVBUF"));
            setsockopt(s, SOL_SOCKET, SO_RCVBUF, &rb, sizeof rb);
        }
        struct timeval tv = {0, 200000};
        setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        static struct mmsghdr m[MAXB];
        static struct iovec iov[MAXB];
        for (int i = 0; i < MAXB; i++) {
            iov[i].iov_base = buf + i * 2048;
            iov[i].iov_len = 2048;
            m[i].msg_hdr.msg_iov = &iov[i];
            m[i].msg_hdr.msg_iovlen = 1;
        }
        long long msgs = 0, bytes = 0, calls = 0;
        double t0 = 0, end = 1e300;
        unsigned long long work = 0, next = 0, missing = 0, jitter16 = 0;
        long long last_transit = 0;
        int stamp = getenv("BARE_STAMP") != NULL;
        if (getenv("BARE_RX_WORK_NS"))
            work = (unsigned long long)(atof(getenv("BARE_RX_WORK_NS")) * tsc_per_ns());
        for (;;) {
            int n;
            if (batch > 1) {
                n = recvmmsg(s, m, batch, 0, NULL);
            } else {
                n = recv(s, buf, size, 0) < 0 ? -1 : 1;
            }
            if (stamp && n > 0) {
                unsigned long long at = __builtin_ia32_rdtsc(), seq, tx;
                memcpy(&seq, buf, 8);
                memcpy(&tx, buf + 8, 8);
                if (seq >= next) {
                    missing += seq - next;
                    next = seq + 1;
                }
                long long transit = (long long)(at - tx), d = transit - last_transit;
                jitter16 += (unsigned long long)(d < 0 ? -d : d) - ((jitter16 + 8) >> 4);
                last_transit = transit;
            }
            if (work && n > 0) {
                unsigned long long c = __builtin_ia32_rdtsc();
                while (__builtin_ia32_rdtsc() - c < work)
                    ;
            }
            if (n < 0) {
                if (msgs) break; /* the sender stopped */
                continue;
            }
            if (!msgs) {
                t0 = now();
                end = t0 + secs;
            }
            msgs += n;
            bytes += (long long)n * size;
            /* The clock every 64 calls. */
            if ((++calls & 63) == 0 && now() >= end) break;
        }
        printf("bytes %lld secs %.6f msgs %lld", bytes, now() - t0, msgs);
        if (stamp)
            printf(" missing %llu jitter_ticks %llu", missing, jitter16 >> 4);
        printf("\n");
    } else if (!strcmp(mode, "udp-send")) {
        int s = connected(argv[2], atoi(argv[3]), SOCK_DGRAM);
        size_t size = atol(argv[4]);
        double end = now() + atof(argv[5]);
        int batch = argc > 6 ? atoi(argv[6]) : 1;
        static struct mmsghdr m[MAXB];
        static struct iovec iov[MAXB];
        for (int i = 0; i < MAXB; i++) {
            iov[i].iov_base = buf;
            iov[i].iov_len = size;
            m[i].msg_hdr.msg_iov = &iov[i];
            m[i].msg_hdr.msg_iovlen = 1;
        }
        double t0 = now();
        long long sent = 0;
        int stamp = getenv("BARE_STAMP") != NULL;
        for (long i = 0;; i++) {
            if (batch > 1) {
                int n = sendmmsg(s, m, batch, 0);
                sent += n > 0 ? n : 0;
            } else {
                if (stamp) {
                    unsigned long long t = __builtin_ia32_rdtsc();
                    memcpy(buf, &sent, 8);
                    memcpy(buf + 8, &t, 8);
                }
                sent += send(s, buf, size, 0) >= 0;
            }
            if ((i & 1023) == 0 && now() >= end) break;
        }
        /* What was sent, for the receiver's count beside it (its loss). */
        printf("sent %lld secs %.6f\n", sent, now() - t0);
    } else if (!strcmp(mode, "rr-server")) {
        int l = listener(atoi(argv[2]), SOCK_STREAM);
        size_t size = atol(argv[3]);
        int c = accept(l, NULL, NULL), one = 1;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        for (;;) {
            size_t got = 0;
            while (got < size) {
                ssize_t n = read(c, buf + got, size - got);
                if (n <= 0) return 0;
                got += n;
            }
            if (write(c, buf, size) < 0) return 0;
        }
    } else if (!strcmp(mode, "rr-client")) {
        int s = connected(argv[2], atoi(argv[3]), SOCK_STREAM), one = 1;
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        size_t size = atol(argv[4]);
        double t0 = now(), end = t0 + atof(argv[5]);
        long long n = 0;
        while (now() < end) {
            if (write(s, buf, size) < 0) die("write");
            size_t got = 0;
            while (got < size) {
                ssize_t r = read(s, buf + got, size - got);
                if (r <= 0) die("read");
                got += r;
            }
            n++;
        }
        printf("bytes %lld secs %.6f msgs %lld\n", n * (long long)size, now() - t0, n);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}

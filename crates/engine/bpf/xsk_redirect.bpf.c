// SPDX-License-Identifier: MIT OR Apache-2.0
//
// netsonde's XDP program for the `xdp` I/O strategy (crates/engine/src/io/xdp.rs).
//
// It hands the AF_XDP socket of the receiving queue every UDP datagram, IPv4 or
// IPv6, of the test's flow (to PORT from PEER_PORT, and over IPv4 to ADDR4 from
// PEER4, set by the loader before the program is loaded) and passes every other
// frame to the kernel stack untouched: the
// control connection, ARP and neighbour discovery, latency probes and other
// flows keep working while a test receives through XDP. A datagram whose queue
// has no socket in XSKS goes to the stack too (bpf_redirect_map's fallback).
//
// Rebuild with ./build.sh (clang -target bpf); the object it writes is
// committed, so building netsonde needs no BPF toolchain.

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, 64);
	__type(key, __u32);
	__type(value, __u32);
} XSKS SEC(".maps");

// The flow, as its connected socket would take it, in network byte order: its
// port, its peer's port, and over IPv4 its address and its peer's (0: any).
volatile const __u16 PORT = 0;
volatile const __u16 PEER_PORT = 0;
volatile const __u32 ADDR4 = 0;
volatile const __u32 PEER4 = 0;

static __always_inline int to_socket(struct xdp_md *ctx, struct udphdr *udp, void *end)
{
	if ((void *)(udp + 1) > end || udp->dest != PORT)
		return XDP_PASS;
	if (PEER_PORT && udp->source != PEER_PORT)
		return XDP_PASS;
	return bpf_redirect_map(&XSKS, ctx->rx_queue_index, XDP_PASS);
}

SEC("xdp")
int netsonde_xsk(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);
		if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_UDP)
			return XDP_PASS;
		// Fragments (more to come, or an offset) are the stack's to reassemble.
		if (ip->frag_off & bpf_htons(0x3fff))
			return XDP_PASS;
		if ((ADDR4 && ip->daddr != ADDR4) || (PEER4 && ip->saddr != PEER4))
			return XDP_PASS;
		return to_socket(ctx, (void *)ip + ip->ihl * 4, end);
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);
		// A UDP header right after the fixed one; extension headers go to the stack.
		if ((void *)(ip6 + 1) > end || ip6->nexthdr != IPPROTO_UDP)
			return XDP_PASS;
		return to_socket(ctx, (void *)(ip6 + 1), end);
	}
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";

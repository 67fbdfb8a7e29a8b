//! The kernel's UDP drop counters (`/proc/net/snmp`, per network namespace): where
//! datagrams a test lost were dropped. `RcvbufErrors` counts datagrams dropped
//! because a receiving socket's buffer was full (the receiver could not keep up);
//! `SndbufErrors` those a sender could not queue.

use netsonde_model::cpu::UdpDrops;

/// Parses the `Udp:` header and value lines of `/proc/net/snmp`.
pub fn parse_snmp(text: &str) -> Option<UdpDrops> {
    let mut lines = text.lines().filter(|l| l.starts_with("Udp:"));
    let names: Vec<&str> = lines.next()?.split_whitespace().skip(1).collect();
    let values: Vec<u64> = lines
        .next()?
        .split_whitespace()
        .skip(1)
        .map(|v| v.parse().ok())
        .collect::<Option<_>>()?;
    let get = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .and_then(|i| values.get(i).copied())
    };
    Some(UdpDrops {
        rcvbuf_errors: get("RcvbufErrors")?,
        sndbuf_errors: get("SndbufErrors")?,
        in_errors: get("InErrors")?,
    })
}

/// The counters now, where the kernel has them.
pub fn read_udp_drops() -> Option<UdpDrops> {
    parse_snmp(&std::fs::read_to_string("/proc/net/snmp").ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_udp_lines_by_name() {
        let text = "Ip: Forwarding DefaultTTL\nIp: 1 64\n\
                    Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n\
                    Udp: 58337443 2528 374183 58712872 374180 7\n\
                    UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors\n\
                    UdpLite: 0 0 0 0 0 0\n";
        assert_eq!(
            parse_snmp(text),
            Some(UdpDrops {
                rcvbuf_errors: 374_180,
                sndbuf_errors: 7,
                in_errors: 374_183,
            })
        );
        assert_eq!(parse_snmp("Udp: A B\nUdp: 1 x\n"), None);
        assert!(read_udp_drops().is_some(), "this host has /proc/net/snmp");
    }
}

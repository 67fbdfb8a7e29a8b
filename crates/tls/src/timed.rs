//! What the record crypto costs, measured where it runs: every suite netsonde
//! offers is the provider's own with its AEAD wrapped ([`timed`]), so each
//! TLS record sealed or opened (TLS 1.3 and 1.2) and each QUIC packet
//! protected or unprotected is counted on the thread that does it, and about
//! one call in [`EVERY`], picked at random, is timed (a sample longer than
//! [`PREEMPTED_NS`] was preempted and is left out). The estimate
//! ([`take`]) is the sampled calls' time scaled by all calls over sampled
//! ones: unbiased whatever the mix of sizes (16 KiB records, QUIC's full
//! packets and its small acknowledgements), and no clock read on the other
//! calls. The handshakes' public-key operations (key exchange, signature and
//! its check) are timed beside them ([`crate::pubkey`]); what it leaves out is
//! said with it: the handshake's key schedule (hashes) and QUIC's header
//! protection (one AES block per packet).
//!
//! A flow's crypto runs on its own thread (TLS's records in the flow's
//! loops, QUIC's in the connection's runtime on the flow's thread), so a
//! thread's tally is its flow's.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::Instant;

use netsonde_model::result::CryptoCost;
use netsonde_model::units::Nanos;
use rustls::crypto::cipher::{
    AeadKey, InboundOpaqueMessage, InboundPlainMessage, Iv, KeyBlockShape, MessageDecrypter,
    MessageEncrypter, OutboundOpaqueMessage, OutboundPlainMessage, Tls12AeadAlgorithm,
    Tls13AeadAlgorithm, UnsupportedOperationError,
};
use rustls::crypto::CipherSuiteCommon;
use rustls::quic::{self, HeaderProtectionKey, PacketKey, Tag};
use rustls::{ConnectionTrafficSecrets, SupportedCipherSuite, Tls12CipherSuite, Tls13CipherSuite};

/// About one call in this many is timed.
pub(crate) const EVERY: u64 = 8;
/// A timed call that took longer than this was preempted or interrupted (no
/// seal or open of a 16 KiB record, or of a QUIC packet, takes a tenth of it
/// on a core): its time is the scheduler's, so it is left out of the sample.
/// The clock is wall time, and a busy host preempts a flow thread in the
/// middle of its crypto as anywhere else.
pub(crate) const PREEMPTED_NS: u64 = 100_000;

#[derive(Clone, Copy, Default)]
struct Tally {
    calls: u64,
    sampled: u64,
    sampled_ns: u64,
    /// xorshift64 state for picking the calls to time.
    rng: u64,
}

thread_local! {
    static TALLY: Cell<Tally> = const { Cell::new(Tally { calls: 0, sampled: 0, sampled_ns: 0, rng: 0x9e37_79b9_7f4a_7c15 }) };
}

/// What reading the clock twice costs, so a timed call is not charged for it:
/// the least of a hundred tries (made once per process).
fn clock_cost() -> u64 {
    static COST: OnceLock<u64> = OnceLock::new();
    *COST.get_or_init(|| {
        (0..100)
            .map(|_| {
                let t = Instant::now();
                t.elapsed().as_nanos() as u64
            })
            .min()
            .unwrap_or(0)
    })
}

/// Runs one seal or open, counted, and timed when picked.
fn count<R>(f: impl FnOnce() -> R) -> R {
    let mut t = TALLY.with(Cell::get);
    t.calls += 1;
    t.rng ^= t.rng << 13;
    t.rng ^= t.rng >> 7;
    t.rng ^= t.rng << 17;
    if !t.rng.is_multiple_of(EVERY) {
        TALLY.with(|c| c.set(t));
        return f();
    }
    let start = Instant::now();
    let r = f();
    let took = start.elapsed().as_nanos() as u64;
    if took <= PREEMPTED_NS {
        t.sampled_ns += took.saturating_sub(clock_cost());
        t.sampled += 1;
    }
    TALLY.with(|c| c.set(t));
    r
}

/// The calling thread's crypto since the last `take` (the records' and, from
/// `pubkey.rs`, the handshakes' public-key operations), and starts
/// afresh.
pub fn take() -> CryptoCost {
    let t = TALLY.with(|c| {
        let t = c.get();
        c.set(Tally {
            rng: t.rng,
            ..Tally::default()
        });
        t
    });
    let ns = match t.sampled {
        0 => 0,
        s => (t.sampled_ns as f64 * t.calls as f64 / s as f64) as u64,
    };
    let pk = crate::pubkey::take();
    CryptoCost {
        ns: Nanos(ns),
        calls: t.calls,
        sampled: t.sampled,
        handshake_ns: Nanos(pk.ns),
        key_exchanges: pk.key_exchanges,
        signatures: pk.signatures,
    }
}

/// The provider's suites with their AEADs counted (made once per process).
pub(crate) fn timed(suites: &[SupportedCipherSuite]) -> Vec<SupportedCipherSuite> {
    static ALL: OnceLock<Vec<(SupportedCipherSuite, SupportedCipherSuite)>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        rustls::crypto::ring::ALL_CIPHER_SUITES
            .iter()
            .map(|s| (*s, wrap(*s)))
            .collect()
    });
    suites
        .iter()
        .map(|s| {
            all.iter()
                .find(|(plain, _)| plain.suite() == s.suite())
                .map_or(*s, |(_, t)| *t)
        })
        .collect()
}

fn common(c: &CipherSuiteCommon) -> CipherSuiteCommon {
    CipherSuiteCommon {
        suite: c.suite,
        hash_provider: c.hash_provider,
        confidentiality_limit: c.confidentiality_limit,
    }
}

fn wrap(s: SupportedCipherSuite) -> SupportedCipherSuite {
    match s {
        SupportedCipherSuite::Tls13(t) => {
            let quic = t
                .quic
                .map(|q| &*Box::leak(Box::new(Quic(q))) as &'static dyn quic::Algorithm);
            SupportedCipherSuite::Tls13(Box::leak(Box::new(Tls13CipherSuite {
                common: common(&t.common),
                hkdf_provider: t.hkdf_provider,
                aead_alg: Box::leak(Box::new(Aead13(t.aead_alg))),
                quic,
            })))
        }
        SupportedCipherSuite::Tls12(t) => {
            SupportedCipherSuite::Tls12(Box::leak(Box::new(Tls12CipherSuite {
                common: common(&t.common),
                prf_provider: t.prf_provider,
                kx: t.kx,
                sign: t.sign,
                aead_alg: Box::leak(Box::new(Aead12(t.aead_alg))),
            })))
        }
    }
}

struct Seal(Box<dyn MessageEncrypter>);
struct Open(Box<dyn MessageDecrypter>);

impl MessageEncrypter for Seal {
    fn encrypt(
        &mut self,
        msg: OutboundPlainMessage<'_>,
        seq: u64,
    ) -> Result<OutboundOpaqueMessage, rustls::Error> {
        count(|| self.0.encrypt(msg, seq))
    }

    fn encrypted_payload_len(&self, payload_len: usize) -> usize {
        self.0.encrypted_payload_len(payload_len)
    }
}

impl MessageDecrypter for Open {
    fn decrypt<'a>(
        &mut self,
        msg: InboundOpaqueMessage<'a>,
        seq: u64,
    ) -> Result<InboundPlainMessage<'a>, rustls::Error> {
        count(|| self.0.decrypt(msg, seq))
    }
}

struct Aead13(&'static dyn Tls13AeadAlgorithm);

impl Tls13AeadAlgorithm for Aead13 {
    fn encrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageEncrypter> {
        Box::new(Seal(self.0.encrypter(key, iv)))
    }

    fn decrypter(&self, key: AeadKey, iv: Iv) -> Box<dyn MessageDecrypter> {
        Box::new(Open(self.0.decrypter(key, iv)))
    }

    fn key_len(&self) -> usize {
        self.0.key_len()
    }

    fn extract_keys(
        &self,
        key: AeadKey,
        iv: Iv,
    ) -> Result<ConnectionTrafficSecrets, UnsupportedOperationError> {
        self.0.extract_keys(key, iv)
    }

    fn fips(&self) -> bool {
        self.0.fips()
    }
}

struct Aead12(&'static dyn Tls12AeadAlgorithm);

impl Tls12AeadAlgorithm for Aead12 {
    fn encrypter(&self, key: AeadKey, iv: &[u8], extra: &[u8]) -> Box<dyn MessageEncrypter> {
        Box::new(Seal(self.0.encrypter(key, iv, extra)))
    }

    fn decrypter(&self, key: AeadKey, iv: &[u8]) -> Box<dyn MessageDecrypter> {
        Box::new(Open(self.0.decrypter(key, iv)))
    }

    fn key_block_shape(&self) -> KeyBlockShape {
        self.0.key_block_shape()
    }

    fn extract_keys(
        &self,
        key: AeadKey,
        iv: &[u8],
        explicit: &[u8],
    ) -> Result<ConnectionTrafficSecrets, UnsupportedOperationError> {
        self.0.extract_keys(key, iv, explicit)
    }

    fn fips(&self) -> bool {
        self.0.fips()
    }
}

struct Quic(&'static dyn quic::Algorithm);

impl quic::Algorithm for Quic {
    fn packet_key(&self, key: AeadKey, iv: Iv) -> Box<dyn PacketKey> {
        Box::new(Packets(self.0.packet_key(key, iv)))
    }

    fn header_protection_key(&self, key: AeadKey) -> Box<dyn HeaderProtectionKey> {
        self.0.header_protection_key(key)
    }

    fn aead_key_len(&self) -> usize {
        self.0.aead_key_len()
    }

    fn fips(&self) -> bool {
        self.0.fips()
    }
}

struct Packets(Box<dyn PacketKey>);

impl PacketKey for Packets {
    fn encrypt_in_place(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, rustls::Error> {
        count(|| self.0.encrypt_in_place(packet_number, header, payload))
    }

    fn decrypt_in_place<'a>(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        count(|| self.0.decrypt_in_place(packet_number, header, payload))
    }

    fn tag_len(&self) -> usize {
        self.0.tag_len()
    }

    fn confidentiality_limit(&self) -> u64 {
        self.0.confidentiality_limit()
    }

    fn integrity_limit(&self) -> u64 {
        self.0.integrity_limit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A timed call that was preempted (here: one that sleeps past
    /// PREEMPTED_NS) is counted but never enters the estimate, so a busy host
    /// does not book the scheduler's time as the crypto's.
    #[test]
    fn a_preempted_sample_is_counted_but_not_timed() {
        let _ = take();
        for _ in 0..64 {
            count(|| std::thread::sleep(std::time::Duration::from_nanos(2 * PREEMPTED_NS)));
        }
        let c = take();
        assert_eq!((c.calls, c.sampled, c.ns.0), (64, 0, 0), "{c:?}");
        for _ in 0..400 {
            count(|| std::hint::black_box(0u64));
        }
        let c = take();
        assert_eq!(c.calls, 400);
        assert!(c.sampled > 0 && c.ns.0 < 400 * PREEMPTED_NS, "{c:?}");
    }
}

//! What a handshake's public-key operations cost, measured where they run:
//! the provider's key-exchange groups and the server's signing key are the
//! provider's own, wrapped, and the client's signature check is timed where
//! it calls the provider ([`crate::client_config`]'s verifier). Each key
//! exchange completed (its key share made, then the shared secret: X25519 or
//! ECDHE), each signature made (the server's, ECDSA P-256) and each checked
//! (the client's) is timed, on the thread that does it: they are tens of
//! microseconds each, so every one is timed, not a sample (one longer than a
//! millisecond was preempted: the others' mean stands for it). A full handshake
//! makes one signature at the server and checks it at the client; a resumed
//! one has none, which is how a flow's full handshakes are counted where the
//! TLS library does not say ([`crate::take_crypto`]).

use std::cell::Cell;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use rustls::crypto::{ActiveKeyExchange, KeyProvider, SharedSecret, SupportedKxGroup};
use rustls::pki_types::{PrivateKeyDer, SubjectPublicKeyInfoDer};
use rustls::sign::{Signer, SigningKey};
use rustls::{NamedGroup, ProtocolVersion, SignatureAlgorithm, SignatureScheme};

/// A thread's public-key operations since its last [`take`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct PkTally {
    /// Their estimated time: the kept timings' mean times every operation.
    pub ns: u64,
    /// Key exchanges completed.
    pub key_exchanges: u64,
    /// Signatures made or checked.
    pub signatures: u64,
}

/// The running counts behind a [`PkTally`].
#[derive(Clone, Copy)]
struct Counts {
    /// Operations (key shares made, exchanges completed, signatures).
    ops: u64,
    /// Of them, timed without preemption, and their time.
    kept: u64,
    kept_ns: u64,
    key_exchanges: u64,
    signatures: u64,
}

/// A public-key operation that took longer than this was preempted (none
/// takes a fifth of it on a core): its time is left out, and the others'
/// mean stands for it.
const PREEMPTED_NS: u64 = 1_000_000;

thread_local! {
    static PK: Cell<Counts> = const {
        Cell::new(Counts { ops: 0, kept: 0, kept_ns: 0, key_exchanges: 0, signatures: 0 })
    };
}

/// Which operation.
#[derive(Clone, Copy)]
enum Op {
    /// A key share made: its time only (the exchange counts when completed).
    Share,
    KeyExchange,
    Signature,
}

fn timed<R>(op: Op, f: impl FnOnce() -> R) -> R {
    let start = Instant::now();
    let r = f();
    let ns = start.elapsed().as_nanos() as u64;
    PK.with(|c| {
        let mut t = c.get();
        t.ops += 1;
        if ns <= PREEMPTED_NS {
            t.kept += 1;
            t.kept_ns += ns;
        }
        match op {
            Op::Share => {}
            Op::KeyExchange => t.key_exchanges += 1,
            Op::Signature => t.signatures += 1,
        }
        c.set(t);
    });
    r
}

/// Times a signature check (the client's verifier calls it).
pub(crate) fn check<R>(f: impl FnOnce() -> R) -> R {
    timed(Op::Signature, f)
}

/// The calling thread's operations since the last `take`, and starts afresh.
pub(crate) fn take() -> PkTally {
    let c = PK.with(|c| {
        c.replace(Counts {
            ops: 0,
            kept: 0,
            kept_ns: 0,
            key_exchanges: 0,
            signatures: 0,
        })
    });
    PkTally {
        ns: match c.kept {
            0 => 0,
            k => (c.kept_ns as f64 * c.ops as f64 / k as f64) as u64,
        },
        key_exchanges: c.key_exchanges,
        signatures: c.signatures,
    }
}

/// The provider's key-exchange groups with each exchange timed (made once
/// per process: rustls holds them as `&'static`).
pub(crate) fn kx_groups(
    groups: &[&'static dyn SupportedKxGroup],
) -> Vec<&'static dyn SupportedKxGroup> {
    static ALL: OnceLock<Vec<(NamedGroup, &'static dyn SupportedKxGroup)>> = OnceLock::new();
    let all = ALL.get_or_init(|| {
        rustls::crypto::ring::ALL_KX_GROUPS
            .iter()
            .map(|g| {
                let timed: &'static dyn SupportedKxGroup = Box::leak(Box::new(Kx(*g)));
                (g.name(), timed)
            })
            .collect()
    });
    groups
        .iter()
        .map(|g| {
            all.iter()
                .find(|(name, _)| *name == g.name())
                .map_or(*g, |(_, t)| *t)
        })
        .collect()
}

#[derive(Debug)]
struct Kx(&'static dyn SupportedKxGroup);

impl SupportedKxGroup for Kx {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, rustls::Error> {
        let inner = timed(Op::Share, || self.0.start())?;
        Ok(Box::new(Active(inner)))
    }

    fn ffdhe_group(&self) -> Option<rustls::ffdhe_groups::FfdheGroup<'static>> {
        self.0.ffdhe_group()
    }

    fn name(&self) -> NamedGroup {
        self.0.name()
    }

    fn fips(&self) -> bool {
        self.0.fips()
    }

    fn usable_for_version(&self, version: ProtocolVersion) -> bool {
        self.0.usable_for_version(version)
    }
}

struct Active(Box<dyn ActiveKeyExchange>);

impl ActiveKeyExchange for Active {
    fn complete(self: Box<Self>, peer_pub_key: &[u8]) -> Result<SharedSecret, rustls::Error> {
        timed(Op::KeyExchange, || self.0.complete(peer_pub_key))
    }

    fn pub_key(&self) -> &[u8] {
        self.0.pub_key()
    }

    fn ffdhe_group(&self) -> Option<rustls::ffdhe_groups::FfdheGroup<'static>> {
        self.0.ffdhe_group()
    }

    fn group(&self) -> NamedGroup {
        self.0.group()
    }
}

/// The provider's key loading, each key's signatures timed.
#[derive(Debug)]
pub(crate) struct Keys;

/// The one [`Keys`] (rustls holds a provider's as `&'static`).
pub(crate) static KEYS: Keys = Keys;

impl KeyProvider for Keys {
    fn load_private_key(
        &self,
        key_der: PrivateKeyDer<'static>,
    ) -> Result<Arc<dyn SigningKey>, rustls::Error> {
        let inner = rustls::crypto::ring::sign::any_supported_type(&key_der)?;
        Ok(Arc::new(Signing(inner)))
    }
}

#[derive(Debug)]
struct Signing(Arc<dyn SigningKey>);

impl SigningKey for Signing {
    fn choose_scheme(&self, offered: &[SignatureScheme]) -> Option<Box<dyn Signer>> {
        self.0
            .choose_scheme(offered)
            .map(|s| Box::new(Sign(s)) as Box<dyn Signer>)
    }

    fn public_key(&self) -> Option<SubjectPublicKeyInfoDer<'_>> {
        self.0.public_key()
    }

    fn algorithm(&self) -> SignatureAlgorithm {
        self.0.algorithm()
    }
}

#[derive(Debug)]
struct Sign(Box<dyn Signer>);

impl Signer for Sign {
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, rustls::Error> {
        timed(Op::Signature, || self.0.sign(message))
    }

    fn scheme(&self) -> SignatureScheme {
        self.0.scheme()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation counts; one preempted (slept past PREEMPTED_NS) is
    /// given the others' mean time, not its own.
    #[test]
    fn a_preempted_operation_takes_the_others_mean() {
        let _ = take();
        // Each sleep's own time, as the operation's: on a busy host a 50 us
        // sleep wakes late, and one that wakes past PREEMPTED_NS is left out.
        let mut own = Vec::new();
        for _ in 0..9 {
            let t = check(|| {
                let t = Instant::now();
                std::thread::sleep(std::time::Duration::from_micros(50));
                t.elapsed().as_nanos() as u64
            });
            own.push(t);
        }
        check(|| std::thread::sleep(std::time::Duration::from_nanos(3 * PREEMPTED_NS)));
        let t = take();
        assert_eq!(t.signatures, 10);
        let kept: Vec<u64> = own.into_iter().filter(|&n| n <= PREEMPTED_NS).collect();
        if kept.is_empty() {
            eprintln!("skipped: every 50 us sleep woke past {PREEMPTED_NS} ns");
            return;
        }
        // The kept ones' time, and their mean for each left out (the long
        // one, and any sleep preempted): not three milliseconds more.
        let sum: u64 = kept.iter().sum();
        let expected = sum + (10 - kept.len() as u64) * (sum / kept.len() as u64);
        assert!(
            t.ns.abs_diff(expected) <= 10 * 20_000,
            "{} ns for ten checks, {expected} expected",
            t.ns
        );
        assert_eq!(take(), PkTally::default());
    }
}

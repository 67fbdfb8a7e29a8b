//! What a handshake's public-key operations cost, measured where they run:
//! the provider's key-exchange groups and the server's signing key are the
//! provider's own, wrapped, and the client's signature check is timed where
//! it calls the provider ([`crate::client_config`]'s verifier). Each key
//! exchange completed (its key share made, then the shared secret: X25519 or
//! ECDHE), each signature made (the server's, ECDSA P-256) and each checked
//! (the client's) is timed, on the thread that does it: they are tens of
//! microseconds each, so every one is timed, not a sample. A full handshake
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
    /// Their time, every one timed.
    pub ns: u64,
    /// Key exchanges completed.
    pub key_exchanges: u64,
    /// Signatures made or checked.
    pub signatures: u64,
}

thread_local! {
    static PK: Cell<PkTally> = const { Cell::new(PkTally { ns: 0, key_exchanges: 0, signatures: 0 }) };
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
        t.ns += ns;
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
    PK.with(|c| c.replace(PkTally::default()))
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

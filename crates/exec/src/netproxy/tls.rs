//! HTTPS interception for secrets brokering: a certificate authority made
//! per proxy (its key never leaves this process's memory) that the sandbox
//! trusts through a CA bundle bound in, leaf certificates made on demand for
//! the hosts a secret may go to, and the TLS client to the real upstream
//! (the system's roots, plus any configured private CA). Only `CONNECT`s to
//! a secret's hosts are intercepted; every other tunnel stays end to end.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::sync::Mutex;

use openssl::asn1::Asn1Time;
use openssl::bn::{BigNum, MsbOption};
use openssl::ec::{EcGroup, EcKey};
use openssl::hash::MessageDigest;
use openssl::nid::Nid;
use openssl::pkey::{PKey, Private};
use openssl::x509::extension::{
    BasicConstraints, ExtendedKeyUsage, KeyUsage, SubjectAlternativeName,
};
use openssl::x509::{X509, X509Name, X509NameBuilder};

fn err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("TLS interception: {e}"))
}

/// Where the system's roots usually are (Debian, Fedora, Alpine, SUSE).
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
    "/etc/ssl/ca-bundle.pem",
];

pub(crate) struct Interceptor {
    ca_cert: X509,
    ca_key: PKey<Private>,
    ca_name: X509Name,
    /// The system's roots and this CA, PEM: what the sandbox trusts.
    pub(crate) bundle: Vec<u8>,
    leaves: Mutex<HashMap<String, tokio_native_tls::TlsAcceptor>>,
    pub(crate) upstream: tokio_native_tls::TlsConnector,
}

fn new_key() -> io::Result<PKey<Private>> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(err)?;
    PKey::from_ec_key(EcKey::generate(&group).map_err(err)?).map_err(err)
}

fn serial() -> io::Result<openssl::asn1::Asn1Integer> {
    let mut bn = BigNum::new().map_err(err)?;
    bn.rand(127, MsbOption::MAYBE_ZERO, false).map_err(err)?;
    bn.to_asn1_integer().map_err(err)
}

fn name(cn: &str) -> io::Result<X509Name> {
    let mut n = X509NameBuilder::new().map_err(err)?;
    n.append_entry_by_nid(Nid::COMMONNAME, cn).map_err(err)?;
    Ok(n.build())
}

/// Valid from an hour ago (clocks differ) for `days`.
fn validity(b: &mut openssl::x509::X509Builder, days: u32) -> io::Result<()> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let from = Asn1Time::from_unix(now - 3600).map_err(err)?;
    let until = Asn1Time::days_from_now(days).map_err(err)?;
    b.set_not_before(&from).map_err(err)?;
    b.set_not_after(&until).map_err(err)
}

impl Interceptor {
    /// A fresh CA; `extra_roots` (PEM) are trusted for upstreams beside
    /// the system's.
    pub(crate) fn new(extra_roots: &[Vec<u8>]) -> io::Result<Interceptor> {
        let ca_key = new_key()?;
        let ca_name = name("hermes-tools sandbox proxy CA (this runtime only)")?;
        let mut b = X509::builder().map_err(err)?;
        b.set_version(2).map_err(err)?;
        let sn = serial()?;
        b.set_serial_number(&sn).map_err(err)?;
        b.set_subject_name(&ca_name).map_err(err)?;
        b.set_issuer_name(&ca_name).map_err(err)?;
        b.set_pubkey(&ca_key).map_err(err)?;
        validity(&mut b, 30)?;
        b.append_extension(
            BasicConstraints::new()
                .critical()
                .ca()
                .pathlen(0)
                .build()
                .map_err(err)?,
        )
        .map_err(err)?;
        b.append_extension(
            KeyUsage::new()
                .critical()
                .key_cert_sign()
                .crl_sign()
                .build()
                .map_err(err)?,
        )
        .map_err(err)?;
        b.sign(&ca_key, MessageDigest::sha256()).map_err(err)?;
        let ca_cert = b.build();
        let mut bundle = SYSTEM_BUNDLES
            .iter()
            .find_map(|p| std::fs::read(Path::new(p)).ok())
            .unwrap_or_default();
        if !bundle.is_empty() && !bundle.ends_with(b"\n") {
            bundle.push(b'\n');
        }
        bundle.extend_from_slice(&ca_cert.to_pem().map_err(err)?);
        let mut cb = native_tls::TlsConnector::builder();
        cb.min_protocol_version(Some(native_tls::Protocol::Tlsv12));
        for pem in extra_roots {
            let c = native_tls::Certificate::from_pem(pem).map_err(err)?;
            cb.add_root_certificate(c);
        }
        let upstream = tokio_native_tls::TlsConnector::from(cb.build().map_err(err)?);
        Ok(Interceptor {
            ca_cert,
            ca_key,
            ca_name,
            bundle,
            leaves: Mutex::new(HashMap::new()),
            upstream,
        })
    }

    /// The acceptor presenting a certificate for `host` signed by this CA.
    pub(crate) fn acceptor(&self, host: &str) -> io::Result<tokio_native_tls::TlsAcceptor> {
        let mut leaves = self.leaves.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = leaves.get(host) {
            return Ok(a.clone());
        }
        let key = new_key()?;
        let mut b = X509::builder().map_err(err)?;
        b.set_version(2).map_err(err)?;
        let sn = serial()?;
        b.set_serial_number(&sn).map_err(err)?;
        let subject = name(host)?;
        b.set_subject_name(&subject).map_err(err)?;
        b.set_issuer_name(&self.ca_name).map_err(err)?;
        b.set_pubkey(&key).map_err(err)?;
        validity(&mut b, 7)?;
        let ctx = b.x509v3_context(Some(&self.ca_cert), None);
        let mut san = SubjectAlternativeName::new();
        if host.parse::<std::net::IpAddr>().is_ok() {
            san.ip(host);
        } else {
            san.dns(host);
        }
        let san = san.build(&ctx).map_err(err)?;
        b.append_extension(san).map_err(err)?;
        b.append_extension(BasicConstraints::new().build().map_err(err)?)
            .map_err(err)?;
        b.append_extension(
            KeyUsage::new()
                .critical()
                .digital_signature()
                .key_agreement()
                .build()
                .map_err(err)?,
        )
        .map_err(err)?;
        b.append_extension(ExtendedKeyUsage::new().server_auth().build().map_err(err)?)
            .map_err(err)?;
        b.sign(&self.ca_key, MessageDigest::sha256()).map_err(err)?;
        let cert = b.build();
        let mut chain = cert.to_pem().map_err(err)?;
        chain.extend_from_slice(&self.ca_cert.to_pem().map_err(err)?);
        let id =
            native_tls::Identity::from_pkcs8(&chain, &key.private_key_to_pem_pkcs8().map_err(err)?)
                .map_err(err)?;
        let mut ab = native_tls::TlsAcceptor::builder(id);
        ab.min_protocol_version(Some(native_tls::Protocol::Tlsv12));
        let a = tokio_native_tls::TlsAcceptor::from(ab.build().map_err(err)?);
        leaves.insert(host.to_string(), a.clone());
        Ok(a)
    }
}

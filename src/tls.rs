//! TLS settings (cargo feature `tls`, on rustls): the server certificate is verified by
//! default, against the CA file given; a client certificate is optional.

use std::path::PathBuf;

/// Whether this build speaks TLS (the cargo feature `tls`): every surface asks this one
/// place (C `mcpool_tls_supported`, Python `mcpool.tls_supported()`, Perl
/// `Mcpool::tls_supported`, Java `Mcpool.tlsSupported()`, the CLI's `--version`).
pub const TLS_SUPPORTED: bool = cfg!(feature = "tls");

/// What a TLS setting answers when the library was built without the `tls` feature: how to
/// build it with TLS, for every surface (the C ABI's setters say the same).
#[doc(hidden)]
pub const NOT_BUILT: &str = "mcpool was built without the `tls` feature; build it with TLS: \
    `--features tls` for the Rust crate, `MCPOOL_FEATURES=tls` for the C library, the CLI and \
    the Python, Perl and Java packages (README.md, \"TLS in every package\")";

/// How to speak TLS to the servers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// PEM file of the CA certificates that sign the servers' certificates. Required unless
    /// `verify` is off.
    pub ca_file: Option<PathBuf>,
    /// PEM files of a client certificate chain and its private key, for servers that ask.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// The name to verify the server certificate against; default: the server's host.
    pub server_name: Option<String>,
    /// Verify the server's certificate (default on). Off only for tests against
    /// throwaway certificates: it allows anyone on the path to read and alter the traffic.
    pub insecure_skip_verify: bool,
}

#[cfg(feature = "tls")]
pub(crate) use enabled::*;

#[cfg(feature = "tls")]
mod enabled {
    use super::TlsOptions;
    use crate::error::{Error, Result};
    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
    use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
    use std::path::Path;
    use std::sync::Arc;

    /// A built rustls client configuration, shared by every connection.
    pub(crate) type TlsConfig = Arc<ClientConfig>;

    fn bad(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
        Error::Config(format!("TLS {what} {}: {e}", path.display()))
    }

    /// The certificates of the PEM file at `path` (`what` names it in errors): at least one.
    fn certificates(what: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>> {
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| bad(what, path, e))?
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| bad(what, path, e))?;
        if certs.is_empty() {
            return Err(bad(
                what,
                path,
                "no PEM certificate (BEGIN CERTIFICATE) in it",
            ));
        }
        Ok(certs)
    }

    /// The private key of the PEM file at `path`, with an error that says what is wrong
    /// with the file (an encrypted key, a certificate, nothing usable).
    fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>> {
        PrivateKeyDer::from_pem_file(path).map_err(|e| {
            let text = std::fs::read(path).unwrap_or_default();
            let has = |s: &str| text.windows(s.len()).any(|w| w == s.as_bytes());
            if has("ENCRYPTED") {
                bad(
                    "client key",
                    path,
                    "the key is encrypted (passphrase-protected), which mcpool cannot read; \
                     give it unencrypted (openssl pkey -in KEY -out PLAIN.key)",
                )
            } else if matches!(e, rustls::pki_types::pem::Error::NoItemsFound) {
                let what = if has("BEGIN CERTIFICATE") {
                    "no PEM private key in it (it holds a certificate: is it the \
                     tls_client_cert file?)"
                } else {
                    "no PEM private key (BEGIN PRIVATE KEY) in it"
                };
                bad("client key", path, what)
            } else {
                bad("client key", path, e)
            }
        })
    }

    /// Builds the rustls configuration from the options, reading and checking every file
    /// and name now, so that a mistake is a configuration error when the client is built,
    /// never a handshake failure later (which would mark the server dead).
    pub(crate) fn build(opts: &TlsOptions) -> Result<TlsConfig> {
        // rustls 0.23.48 and later deprecate ring's provider (no post-quantum key exchange,
        // which memcached's OpenSSL does not offer either); a crate that depends on mcpool
        // resolves its own rustls 0.23 and must build warning-free with `-D warnings`
        // (tester finding secure 7).
        #[allow(deprecated)]
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Config(format!("TLS: {e}")))?;
        if let Some(name) = &opts.server_name {
            ServerName::try_from(name.clone())
                .map_err(|e| Error::Config(format!("tls_server_name {name:?}: {e}")))?;
        }
        if opts.insecure_skip_verify {
            if let Some(path) = &opts.ca_file {
                return Err(Error::Config(format!(
                    "tls_insecure_skip_verify turns the server's verification off, so \
                     tls_ca_file ({}) would not be used: give one or the other",
                    path.display()
                )));
            }
        }
        let builder = if opts.insecure_skip_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
        } else {
            let path = opts.ca_file.as_ref().ok_or_else(|| {
                Error::Config(
                    "TLS needs a CA file (tls_ca_file) to verify servers; mcpool does not \
                     use the system's trusted certificates"
                        .into(),
                )
            })?;
            let mut roots = RootCertStore::empty();
            for cert in certificates("CA file", path)? {
                roots.add(cert).map_err(|e| bad("CA file", path, e))?;
            }
            builder.with_root_certificates(roots)
        };
        let mut config = match &opts.client_cert {
            None => builder.with_no_client_auth(),
            Some((chain, _)) if chain.as_os_str().is_empty() => {
                return Err(Error::Config(
                    "tls_client_key is given without tls_client_cert (the certificate chain \
                     it belongs to)"
                        .into(),
                ))
            }
            Some((_, key)) if key.as_os_str().is_empty() => {
                return Err(Error::Config(
                    "tls_client_cert is given without tls_client_key (its private key)".into(),
                ))
            }
            Some((chain, key)) => {
                let certs = certificates("client certificate", chain).map_err(|e| match e {
                    Error::Config(m) if private_key(chain).is_ok() => Error::Config(format!(
                        "{m} (it holds a private key: is it the tls_client_key file?)"
                    )),
                    other => other,
                })?;
                let key_der = private_key(key)?;
                builder.with_client_auth_cert(certs, key_der).map_err(|e| {
                    Error::Config(format!(
                        "TLS client certificate {} and key {}: {}",
                        chain.display(),
                        key.display(),
                        client_cert_refusal(&e)
                    ))
                })?
            }
        };
        // No session resumption: memcached 1.6.18 (Debian 12's) answers a resumed session
        // with a fatal "internal error" alert whenever it verifies client certificates
        // (`ssl_verify_mode` 1 or 2), so connections after a client's first failed their
        // handshakes and the server was marked dead. A pooled connection
        // lives long; a full handshake for each costs nothing worth the risk.
        config.resumption = rustls::client::Resumption::disabled();
        Ok(Arc::new(config))
    }

    /// Why rustls refuses the client's own certificate, in words about it (rustls's own say
    /// "invalid peer certificate" for it too), with the way out of the usual cause: `openssl
    /// x509 -req` without `-extfile` makes an X.509 v1 certificate, which memcached takes and
    /// rustls does not (tester finding packaging 1).
    fn client_cert_refusal(e: &rustls::Error) -> String {
        match e {
            rustls::Error::InvalidCertificate(c) => {
                let reason = format!("{c:?}");
                let hint = if is_v1_certificate(&reason) {
                    " (it must be an X.509 v3 certificate: `openssl x509 -req` makes v1 unless \
                     given -extfile, e.g. a file with extendedKeyUsage=clientAuth)"
                } else {
                    ""
                };
                format!("the certificate is refused: {reason}{hint}")
            }
            other => other.to_string(),
        }
    }

    /// Whether webpki's reason for refusing a certificate (rustls keeps it opaque: known by
    /// its name only) is what an X.509 v1 certificate gets, the usual `openssl x509 -req`
    /// without `-extfile` (no version 3, no extensions).
    pub(crate) fn is_v1_certificate(reason: &str) -> bool {
        reason.contains("UnsupportedCertVersion") || reason.contains("MissingOrMalformedExtensions")
    }

    /// The name to check the certificate against.
    pub(crate) fn server_name(opts: &TlsOptions, host: &str) -> Result<ServerName<'static>> {
        let name = opts.server_name.as_deref().unwrap_or(host).to_owned();
        ServerName::try_from(name).map_err(|e| Error::Config(format!("TLS server name: {e}")))
    }

    #[derive(Debug)]
    struct NoVerify(Arc<rustls::crypto::CryptoProvider>);

    impl ServerCertVerifier for NoVerify {
        fn verify_server_cert(
            &self,
            _: &CertificateDer<'_>,
            _: &[CertificateDer<'_>],
            _: &ServerName<'_>,
            _: &[u8],
            _: UnixTime,
        ) -> std::result::Result<ServerCertVerified, rustls::Error> {
            Ok(ServerCertVerified::assertion())
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls12_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(
                message,
                cert,
                dss,
                &self.0.signature_verification_algorithms,
            )
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.0.signature_verification_algorithms.supported_schemes()
        }
    }
}

/// The error of asking for TLS without the `tls` feature, on every surface and path (a TLS
/// option by name, the typed setters, the C ABI): [`NOT_BUILT`].
pub(crate) fn not_built() -> crate::Error {
    crate::Error::Unsupported(format!("TLS: {NOT_BUILT}"))
}

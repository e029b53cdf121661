//! TLS settings (cargo feature `tls`, on rustls): the server certificate is verified by
//! default, against the CA file given; a client certificate is optional.

use std::path::PathBuf;

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
    use std::sync::Arc;

    /// A built rustls client configuration, shared by every connection.
    pub(crate) type TlsConfig = Arc<ClientConfig>;

    fn bad(what: &str, path: &std::path::Path, e: impl std::fmt::Display) -> Error {
        Error::Config(format!("TLS {what} {}: {e}", path.display()))
    }

    /// Builds the rustls configuration from the options.
    pub(crate) fn build(opts: &TlsOptions) -> Result<TlsConfig> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Config(format!("TLS: {e}")))?;
        let builder = if opts.insecure_skip_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(NoVerify(provider)))
        } else {
            let path = opts.ca_file.as_ref().ok_or_else(|| {
                Error::Config("TLS needs a CA file (tls_ca_file) to verify servers".into())
            })?;
            let mut roots = RootCertStore::empty();
            for cert in CertificateDer::pem_file_iter(path).map_err(|e| bad("CA file", path, e))? {
                roots
                    .add(cert.map_err(|e| bad("CA file", path, e))?)
                    .map_err(|e| bad("CA file", path, e))?;
            }
            builder.with_root_certificates(roots)
        };
        let config = match &opts.client_cert {
            None => builder.with_no_client_auth(),
            Some((chain, key)) => {
                let certs = CertificateDer::pem_file_iter(chain)
                    .map_err(|e| bad("client certificate", chain, e))?
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(|e| bad("client certificate", chain, e))?;
                let key =
                    PrivateKeyDer::from_pem_file(key).map_err(|e| bad("client key", key, e))?;
                builder
                    .with_client_auth_cert(certs, key)
                    .map_err(|e| Error::Config(format!("TLS client certificate: {e}")))?
            }
        };
        Ok(Arc::new(config))
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

/// Without the `tls` feature, asking for TLS is a configuration error.
#[cfg(not(feature = "tls"))]
pub(crate) fn unavailable() -> crate::Error {
    crate::Error::Config("TLS requested but mcpool was built without the `tls` feature".into())
}

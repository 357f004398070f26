//! Handshakes over loopback with a real rustls client, through
//! [`TlsAcceptor`] and [`TlsListener`].

pub(crate) mod certs;

use std::{io, sync::Arc, time::Duration};

use rustls::{ClientConfig, RootCertStore, crypto::ring, pki_types::ServerName};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    time::timeout,
};
use tokio_rustls::{TlsConnector, client};

use crate::{
    TlsAcceptor, TlsFiles, TlsListener, TlsStream,
    reload::RECHECK_INTERVAL,
    tests::certs::{Authority, Files, Issued},
};

/// A client that trusts `ca`, asks for `h2` and presents `identity`, if any.
fn client(ca: &Authority, identity: Option<Issued>) -> TlsConnector {
    let mut roots = RootCertStore::empty();
    roots.add(ca.cert()).unwrap();
    let builder = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let mut config = match identity {
        Some(identity) => builder
            .with_client_auth_cert(vec![identity.cert], identity.key)
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"h2".to_vec()];
    TlsConnector::from(Arc::new(config))
}

fn acceptor(files: TlsFiles) -> TlsAcceptor {
    TlsAcceptor::new(files, &["h2"]).unwrap()
}

async fn connect(client: &TlsConnector, port: u16) -> io::Result<client::TlsStream<TcpStream>> {
    let tcp = TcpStream::connect(("127.0.0.1", port)).await?;
    let name = ServerName::try_from("localhost").unwrap();
    client.connect(name, tcp).await
}

/// Both ends of one handshake between `client` and `acceptor`.
async fn handshake(
    acceptor: &TlsAcceptor,
    client: &TlsConnector,
) -> (
    io::Result<TlsStream<TcpStream>>,
    io::Result<client::TlsStream<TcpStream>>,
) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = async { acceptor.accept(listener.accept().await?.0).await };
    tokio::join!(server, connect(client, port))
}

#[tokio::test]
async fn a_client_trusting_the_authority_gets_the_certificate_and_h2() {
    let dir = Files::new();
    let ca = Authority::new("trusted");
    let (server, client) = handshake(&acceptor(dir.server(&ca, false)), &client(&ca, None)).await;
    let (mut server, mut client) = (server.unwrap(), client.unwrap());
    assert_eq!(server.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    server.write_all(b"hello").await.unwrap();
    server.flush().await.unwrap();
    let mut got = [0; 5];
    client.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"hello");
}

#[tokio::test]
async fn a_client_trusting_another_authority_refuses_the_certificate() {
    let dir = Files::new();
    let files = dir.server(&Authority::new("server's"), false);
    let (_, client) = handshake(&acceptor(files), &client(&Authority::new("other"), None)).await;
    let message = client.expect_err("an unknown issuer").to_string();
    assert!(message.contains("UnknownIssuer"), "{message}");
}

#[tokio::test]
async fn rotated_files_serve_the_next_connections() {
    let dir = Files::new();
    let (old, new) = (Authority::new("old"), Authority::new("new"));
    let acceptor = acceptor(dir.server(&old, false));
    assert!(handshake(&acceptor, &client(&old, None)).await.1.is_ok());
    dir.server(&new, false);
    tokio::time::sleep(RECHECK_INTERVAL + Duration::from_millis(100)).await;
    assert!(handshake(&acceptor, &client(&new, None)).await.1.is_ok());
    assert!(handshake(&acceptor, &client(&old, None)).await.1.is_err());
}

#[tokio::test]
async fn mutual_tls_takes_a_client_certificate_of_the_root() {
    let dir = Files::new();
    let ca = Authority::new("mutual");
    let acceptor = acceptor(dir.server(&ca, true));
    let (server, client) = handshake(&acceptor, &client(&ca, Some(ca.client()))).await;
    assert!(client.is_ok());
    let server = server.unwrap();
    assert_eq!(
        server.get_ref().1.peer_certificates().map(<[_]>::len),
        Some(1)
    );
}

#[tokio::test]
async fn mutual_tls_refuses_a_client_without_a_certificate() {
    let dir = Files::new();
    let ca = Authority::new("mutual");
    let acceptor = acceptor(dir.server(&ca, true));
    let (server, _) = handshake(&acceptor, &client(&ca, None)).await;
    let message = server.expect_err("no client certificate").to_string();
    assert!(message.contains("peer sent no certificates"), "{message}");
}

#[tokio::test]
async fn mutual_tls_refuses_a_client_certificate_of_another_authority() {
    let dir = Files::new();
    let ca = Authority::new("mutual");
    let acceptor = acceptor(dir.server(&ca, true));
    let stranger = Authority::new("stranger").client();
    let (server, _) = handshake(&acceptor, &client(&ca, Some(stranger))).await;
    let message = server.expect_err("an unknown client issuer").to_string();
    assert!(message.contains("UnknownIssuer"), "{message}");
}

#[tokio::test]
async fn the_listener_serves_a_client_while_others_stall_or_fail() {
    let dir = Files::new();
    let ca = Authority::new("listener");
    let tcp = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = tcp.local_addr().unwrap().port();
    let mut listener = TlsListener::new(tcp, acceptor(dir.server(&ca, false)));
    let _silent = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut plaintext = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    plaintext
        .write_all(b"GET / HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let connector = client(&ca, None);
    let (served, client) = tokio::join!(
        timeout(Duration::from_secs(5), listener.accept()),
        connect(&connector, port)
    );
    let (mut server, peer) = served.expect("the TLS client waited").unwrap();
    let mut client = client.unwrap();
    assert_eq!(peer, client.get_ref().0.local_addr().unwrap());
    server.write_all(b"ok").await.unwrap();
    server.flush().await.unwrap();
    let mut got = [0; 2];
    client.read_exact(&mut got).await.unwrap();
    assert_eq!(&got, b"ok");
    // The plaintext client's connection was closed (after a TLS alert).
    let mut rest = Vec::new();
    let closed = timeout(Duration::from_secs(5), plaintext.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "the failed connection stays open");
}

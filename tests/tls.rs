//! TLS for staging servers: a local HTTPS server (`openssl s_server`) with
//! its own CA is refused by default (exit 3, saying why), reached with
//! `--cacert` and with `--insecure` (which warns, and says so in the report),
//! and one that asks for a client certificate is reached with `--cert --key`.

use crate::support;

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::cli::{cartograph, read_report};

const SPEC: &str = r#"openapi: 3.0.3
info: {title: tls, version: "1"}
paths:
  /:
    get:
      operationId: status
      responses:
        '200':
          description: the server's status page
          content:
            text/html:
              schema: {type: string}
"#;

fn openssl(dir: &Path, list: &[&str]) -> bool {
    Command::new("openssl")
        .args(list)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A CA, a server certificate for 127.0.0.1 and a client certificate, all
/// signed by the CA; false when openssl cannot make them.
fn certificates(dir: &Path) -> bool {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    std::fs::write(
        dir.join("server.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("client.cnf"),
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
    )
    .unwrap();
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=Cartograph test CA",
    ]);
    let mut ok = openssl(dir, &ca);
    for who in ["server", "client"] {
        let key = format!("{who}.key");
        let csr = format!("{who}.csr");
        let pem = format!("{who}.pem");
        let cnf = format!("{who}.cnf");
        let mut req = vec!["req"];
        req.extend(ec);
        req.extend(["-keyout", &key, "-out", &csr, "-subj", "/CN=127.0.0.1"]);
        ok = ok
            && openssl(dir, &req)
            && openssl(
                dir,
                &[
                    "x509",
                    "-req",
                    "-in",
                    &csr,
                    "-CA",
                    "ca.pem",
                    "-CAkey",
                    "ca.key",
                    "-CAcreateserial",
                    "-out",
                    &pem,
                    "-days",
                    "2",
                    "-extfile",
                    &cnf,
                ],
            );
    }
    ok
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `openssl s_server -www` on a free port of 127.0.0.1 (answering every
/// GET with its status page); with `client_ca`, it requires a client
/// certificate signed by it.
///
/// The port is free when chosen but another process may take it before
/// s_server binds it (s_server then exits, and the readiness probe may
/// still connect to whoever holds it), so a server is only handed out once
/// it answers and is still alive; otherwise a fresh port is tried.
fn serve(dir: &Path, client_ca: bool) -> Option<(Server, u16)> {
    serve_as(dir, "server", client_ca)
}

/// [`serve`] with the certificate `NAME.pem` and its key `NAME.key`.
fn serve_as(dir: &Path, name: &str, client_ca: bool) -> Option<(Server, u16)> {
    (0..5).find_map(|_| serve_once(dir, name, client_ca))
}

fn serve_once(dir: &Path, name: &str, client_ca: bool) -> Option<(Server, u16)> {
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let mut cmd = Command::new("openssl");
    cmd.current_dir(dir)
        .args(["s_server", "-www", "-quiet", "-accept"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-cert")
        .arg(format!("{name}.pem"))
        .arg("-key")
        .arg(format!("{name}.key"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if client_ca {
        cmd.args(["-Verify", "1", "-CAfile", "ca.pem"]);
    }
    let mut server = Server(cmd.spawn().ok()?);
    let start = Instant::now();
    loop {
        if !matches!(server.0.try_wait(), Ok(None)) {
            return None;
        }
        if TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_ok() {
            break;
        }
        if start.elapsed() > Duration::from_secs(10) {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(200));
    matches!(server.0.try_wait(), Ok(None)).then_some((server, port))
}

async fn run(dir: &Path, port: u16, extra: &[&str]) -> (Option<i32>, String, std::path::PathBuf) {
    let out = dir.join(format!("out-{}", extra.join("-").replace(['/', '.'], "_")));
    let mut list = vec![
        "run".to_string(),
        dir.join("spec.yaml").to_string_lossy().into_owned(),
        "--target".into(),
        format!("https://127.0.0.1:{port}"),
        "--max-requests".into(),
        "6".into(),
        "--no-replay".into(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
    ];
    list.extend(extra.iter().map(|s| s.to_string()));
    let done = cartograph(list).await;
    (
        done.status.code(),
        String::from_utf8_lossy(&done.stderr).into_owned(),
        out,
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_with_its_own_ca_is_reached_with_cacert_or_insecure_and_refused_without() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    if !certificates(dir) {
        support::skip_for("openssl cannot make test certificates here");
        return;
    }
    std::fs::write(dir.join("spec.yaml"), SPEC).unwrap();
    let Some((_server, port)) = serve(dir, false) else {
        support::skip_for("openssl s_server did not start");
        return;
    };

    let (code, stderr, _) = run(dir, port, &[]).await;
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.to_lowercase().contains("certificate"), "{stderr}");

    let ca = dir.join("ca.pem");
    let (code, stderr, out) = run(dir, port, &["--cacert", ca.to_str().unwrap()]).await;
    assert_eq!(code, Some(0), "{stderr}");
    let report = read_report(&out);
    assert_eq!(report["operations_reached"], 1, "{stderr}");
    assert_eq!(report["settings"]["insecure"], false);

    let (code, stderr, out) = run(dir, port, &["--insecure"]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("--insecure"), "{stderr}");
    let report = read_report(&out);
    assert_eq!(report["operations_reached"], 1);
    assert_eq!(report["settings"]["insecure"], true);

    let (code, stderr, _) = run(
        dir,
        port,
        &["--cacert", dir.join("spec.yaml").to_str().unwrap()],
    )
    .await;
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("--cacert") && stderr.contains("spec.yaml"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_asks_for_a_client_certificate_is_reached_with_cert_and_key() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    if !certificates(dir) {
        support::skip_for("openssl cannot make test certificates here");
        return;
    }
    std::fs::write(dir.join("spec.yaml"), SPEC).unwrap();
    let Some((_server, port)) = serve(dir, true) else {
        support::skip_for("openssl s_server did not start");
        return;
    };
    let ca = dir.join("ca.pem");
    let ca = ca.to_str().unwrap();
    let (code, stderr, _) = run(dir, port, &["--cacert", ca]).await;
    assert_eq!(code, Some(3), "without a client certificate: {stderr}");

    let (cert, key) = (dir.join("client.pem"), dir.join("client.key"));
    let (code, stderr, out) = run(
        dir,
        port,
        &[
            "--cacert",
            ca,
            "--cert",
            cert.to_str().unwrap(),
            "--key",
            key.to_str().unwrap(),
        ],
    )
    .await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(read_report(&out)["operations_reached"], 1, "{stderr}");
}

/// A self-signed certificate as `openssl req -x509` makes it by default
/// (marked CA:TRUE), for the names `san`, as `NAME.pem` and `NAME.key`.
fn self_signed(dir: &Path, name: &str, san: &str) -> bool {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.pem"),
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            &format!("subjectAltName={san}"),
        ],
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_self_signed_certificate_given_with_cacert_is_trusted_for_its_own_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    if !self_signed(dir, "own", "DNS:localhost,IP:127.0.0.1")
        || !self_signed(dir, "other", "DNS:elsewhere.test")
    {
        support::skip_for("openssl cannot make test certificates here");
        return;
    }
    std::fs::write(dir.join("spec.yaml"), SPEC).unwrap();
    let Some((_server, port)) = serve_as(dir, "own", false) else {
        support::skip_for("openssl s_server did not start");
        return;
    };
    let own = dir.join("own.pem");
    let (code, stderr, out) = run(dir, port, &["--cacert", own.to_str().unwrap()]).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(read_report(&out)["operations_reached"], 1, "{stderr}");

    // Exactly that certificate, and only for the names it was made for.
    let other = dir.join("other.pem");
    let (code, stderr, _) = run(dir, port, &["--cacert", other.to_str().unwrap()]).await;
    assert_eq!(code, Some(3), "another certificate: {stderr}");
    // The advice is not to pass what was passed.
    assert!(stderr.contains("although --cacert was given"), "{stderr}");
    assert!(!stderr.contains("pass --cacert"), "{stderr}");
    drop(_server);
    let Some((_server, port)) = serve_as(dir, "other", false) else {
        support::skip_for("openssl s_server did not start");
        return;
    };
    let (code, stderr, _) = run(dir, port, &["--cacert", other.to_str().unwrap()]).await;
    assert_eq!(code, Some(3), "not made for 127.0.0.1: {stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn https_to_a_plain_http_port_says_so_instead_of_certificate_advice() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("spec.yaml"), SPEC).unwrap();
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    // What a plain-HTTP server answers to the bytes of a TLS handshake.
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                let _ = socket.read(&mut buf).await;
                let _ = socket
                    .write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    .await;
            });
        }
    });
    let (code, stderr, _) = run(dir, port, &[]).await;
    assert_eq!(code, Some(3), "{stderr}");
    assert!(stderr.contains("plain HTTP"), "{stderr}");
    assert!(
        stderr.contains(&format!("http://127.0.0.1:{port}")),
        "{stderr}"
    );
    assert!(!stderr.contains("--insecure"), "{stderr}");
}

/// A plain-HTTP target needs no certificate of the machine's: its clients
/// never speak TLS (their redirects keep to its origin), so a machine with
/// none (a slim container) tests it all the same. Each client used to read
/// them all, and a run there stopped: "No CA certificates were loaded".
#[tokio::test(flavor = "multi_thread")]
async fn a_plain_http_target_needs_no_certificates_of_the_machine() {
    let server = cartograph::testing::DemoServer::start(0).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let list = vec![
        "run".to_string(),
        "models/demo/openapi.yaml".into(),
        "--target".into(),
        server.base_url(),
        "--max-requests".into(),
        "30".into(),
        "--no-replay".into(),
        "--out".into(),
        out.to_string_lossy().into_owned(),
    ];
    let missing = dir.path().join("no-certificates-here");
    let done = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_cartograph"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(&list)
            .env("SSL_CERT_FILE", &missing)
            .env("SSL_CERT_DIR", &missing)
            .output()
            .expect("binary runs")
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        matches!(done.status.code(), Some(0 | 1)),
        "exit {:?}: {stderr}",
        done.status.code()
    );
    assert_eq!(read_report(&out)["requests"], 30, "{stderr}");
}

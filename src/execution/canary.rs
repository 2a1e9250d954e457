//! A listener Cartograph runs for the SSRF probes: an input that takes a
//! URL is given this listener's address with a token in its path, and a
//! request that arrives bearing the token shows that the server fetched
//! what a client named. It binds 127.0.0.1 and nothing else, ever: it
//! must not be reachable from any other machine.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Request targets kept, at most: a server that loops on the address
/// cannot fill the memory.
const MAX_HITS: usize = 1000;

/// Bytes of a request read, at most: the request line is all it needs.
const MAX_HEAD: usize = 8 * 1024;

/// How long one connection may take to send its request line.
const READ_TIME: Duration = Duration::from_secs(2);

/// The listener; dropping it stops it.
pub struct Canary {
    addr: SocketAddr,
    hits: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Canary {
    /// Starts a listener on a free port of 127.0.0.1.
    pub async fn start() -> std::io::Result<Canary> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let hits: Arc<Mutex<Vec<String>>> = Arc::default();
        let seen = hits.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let seen = seen.clone();
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    let read = tokio::time::timeout(READ_TIME, async {
                        while head.len() < MAX_HEAD && !head.windows(2).any(|w| w == b"\r\n") {
                            match stream.read(&mut buf).await {
                                Ok(0) | Err(_) => break,
                                Ok(n) => head.extend_from_slice(&buf[..n]),
                            }
                        }
                    })
                    .await;
                    if read.is_err() && head.is_empty() {
                        return;
                    }
                    if let Some(target) = request_target(&head) {
                        let mut hits = seen.lock().unwrap_or_else(|e| e.into_inner());
                        if hits.len() < MAX_HITS {
                            hits.push(target);
                        }
                    }
                    let _ = stream
                        .write_all(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                        .await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        Ok(Canary { addr, hits, task })
    }

    /// Its base URL, `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The request targets (path and query) that arrived so far, in order.
    pub fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Forgets the requests that arrived so far.
    pub fn clear(&self) {
        self.hits.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

impl Drop for Canary {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The target of an HTTP request line (`GET /x/y HTTP/1.1` → `/x/y`).
fn request_target(head: &[u8]) -> Option<String> {
    let line = head.split(|b| *b == b'\n').next()?;
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    let _method = words.next()?;
    words.next().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn it_records_what_arrives_and_listens_on_loopback_only() {
        let canary = Canary::start().await.unwrap();
        assert!(canary.addr.ip().is_loopback());
        let mut s = tokio::net::TcpStream::connect(canary.addr).await.unwrap();
        s.write_all(b"GET /cartograph-ssrf/t1?x=1 HTTP/1.1\r\nHost: a\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 204"), "{answer}");
        assert_eq!(canary.hits(), vec!["/cartograph-ssrf/t1?x=1".to_string()]);
        canary.clear();
        assert!(canary.hits().is_empty());
    }
}

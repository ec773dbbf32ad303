//! An HTTP/1.1 delay proxy for `scripts/bench_remote.py`: it holds every
//! request a fixed time before forwarding it, so a benchmark can show whether
//! a client hides network latency (prefetch, requests in flight) against a
//! local server that answers in microseconds.
//!
//! It works at the TCP level: each client connection gets its own upstream
//! connection; request heads are parsed only to find where one request ends
//! (`Content-Length` bodies; a chunked request body switches the connection
//! to plain pass-through after its delay). Responses stream back unparsed in
//! 256 KiB reads, so keep-alive, many connections and large bodies all work.
//! Hosts and signatures are untouched (a SigV4 signature covers the `Host`
//! the client sent, and the server checks what it received).
//!
//! ```text
//! cargo build --release --example delay_proxy
//! target/release/examples/delay_proxy --listen 127.0.0.1:0 --upstream 127.0.0.1:8080 \
//!     --delay-ms 20 [--threads 2] [--stats-file PATH]
//! ```
//!
//! It prints `listening on ADDR` once bound. With `--stats-file` it rewrites
//! PATH (JSON: connections, requests, bytes_up, bytes_down) every 100 ms while
//! the counts change.

use std::error::Error;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Largest request head accepted; a longer one closes the connection.
const MAX_HEAD: usize = 64 * 1024;
/// Read size of both directions.
const BUF: usize = 256 * 1024;

/// Counters shared by every connection.
#[derive(Default)]
struct Stats {
    connections: AtomicU64,
    requests: AtomicU64,
    bytes_up: AtomicU64,
    bytes_down: AtomicU64,
}

impl Stats {
    fn json(&self) -> String {
        format!(
            "{{\"connections\": {}, \"requests\": {}, \"bytes_up\": {}, \"bytes_down\": {}}}\n",
            self.connections.load(Ordering::Relaxed),
            self.requests.load(Ordering::Relaxed),
            self.bytes_up.load(Ordering::Relaxed),
            self.bytes_down.load(Ordering::Relaxed)
        )
    }
}

/// Command-line options.
struct Options {
    listen: SocketAddr,
    upstream: SocketAddr,
    delay: Duration,
    threads: usize,
    stats_file: Option<PathBuf>,
}

fn parse_args() -> Result<Options, String> {
    let usage = "usage: delay_proxy --listen ADDR --upstream ADDR [--delay-ms N] [--threads N] [--stats-file PATH]";
    let mut listen = None;
    let mut upstream = None;
    let mut delay_ms = 20u64;
    let mut threads = 2usize;
    let mut stats_file = None;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value\n{usage}"));
        match flag.as_str() {
            "--listen" => listen = Some(value()?.parse().map_err(|e| format!("--listen: {e}"))?),
            "--upstream" => upstream = Some(value()?.parse().map_err(|e| format!("--upstream: {e}"))?),
            "--delay-ms" => delay_ms = value()?.parse().map_err(|e| format!("--delay-ms: {e}"))?,
            "--threads" => threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?,
            "--stats-file" => stats_file = Some(PathBuf::from(value()?)),
            "-h" | "--help" => return Err(usage.to_string()),
            other => return Err(format!("unknown argument {other}\n{usage}")),
        }
    }
    Ok(Options {
        listen: listen.ok_or_else(|| format!("--listen is required\n{usage}"))?,
        upstream: upstream.ok_or_else(|| format!("--upstream is required\n{usage}"))?,
        delay: Duration::from_millis(delay_ms),
        threads: threads.max(1),
        stats_file,
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(opts.threads).enable_all().build()?;
    rt.block_on(serve(opts))
}

async fn serve(opts: Options) -> Result<(), Box<dyn Error>> {
    let listener = TcpListener::bind(opts.listen).await?;
    println!("listening on {}", listener.local_addr()?);
    let stats = Arc::new(Stats::default());
    if let Some(path) = opts.stats_file.clone() {
        tokio::spawn(write_stats(path, stats.clone()));
    }
    loop {
        let (client, _) = listener.accept().await?;
        stats.connections.fetch_add(1, Ordering::Relaxed);
        let (upstream, delay, stats) = (opts.upstream, opts.delay, stats.clone());
        tokio::spawn(async move {
            if let Err(e) = proxy(client, upstream, delay, stats).await {
                eprintln!("delay_proxy: connection ended: {e}");
            }
        });
    }
}

/// Rewrite `path` with the counters whenever they changed.
async fn write_stats(path: PathBuf, stats: Arc<Stats>) {
    let tmp = path.with_extension("tmp");
    let mut last = String::new();
    loop {
        let now = stats.json();
        if now != last && std::fs::write(&tmp, &now).and_then(|_| std::fs::rename(&tmp, &path)).is_ok() {
            last = now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn proxy(client: TcpStream, upstream: SocketAddr, delay: Duration, stats: Arc<Stats>) -> std::io::Result<()> {
    let server = TcpStream::connect(upstream).await?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (client_r, client_w) = client.into_split();
    let (server_r, server_w) = server.into_split();
    let up = tokio::spawn(requests(client_r, server_w, delay, stats.clone()));
    // Responses flow until the server closes (after the client's EOF was
    // passed on, or on its own keep-alive timeout); then the connection is done.
    let down = pump(server_r, client_w, &stats.bytes_down).await;
    up.abort();
    down
}

/// Client → server: each request head is held `delay`, then forwarded with its body.
async fn requests<R, W>(mut from: R, mut to: W, delay: Duration, stats: Arc<Stats>) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        // Gather one request head.
        let end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i + 4;
            }
            if buf.len() > MAX_HEAD {
                return Err(std::io::Error::other("request head longer than 64 KiB"));
            }
            let n = from.read(&mut chunk).await?;
            if n == 0 {
                return to.shutdown().await;
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let framing = body_framing(&buf[..end]);
        stats.requests.fetch_add(1, Ordering::Relaxed);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        match framing {
            Framing::Length(len) => {
                let buffered = (buf.len() - end).min(usize::try_from(len).unwrap_or(usize::MAX));
                let take = end + buffered;
                to.write_all(&buf[..take]).await?;
                stats.bytes_up.fetch_add(take as u64, Ordering::Relaxed);
                buf.drain(..take);
                let mut left = len - buffered as u64;
                while left > 0 {
                    let want = chunk.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    let n = from.read(&mut chunk[..want]).await?;
                    if n == 0 {
                        return Err(std::io::Error::other("client closed inside a request body"));
                    }
                    to.write_all(&chunk[..n]).await?;
                    stats.bytes_up.fetch_add(n as u64, Ordering::Relaxed);
                    left -= n as u64;
                }
            }
            Framing::Chunked => {
                // Rare here (benchmark clients only GET and HEAD): stop parsing.
                to.write_all(&buf).await?;
                stats.bytes_up.fetch_add(buf.len() as u64, Ordering::Relaxed);
                pump(from, to, &stats.bytes_up).await?;
                return Ok(());
            }
        }
    }
}

/// How a request's body is delimited.
enum Framing {
    /// `Content-Length` bytes follow the head (0 when absent).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
}

fn body_framing(head: &[u8]) -> Framing {
    let text = String::from_utf8_lossy(head);
    let mut len = 0;
    for line in text.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else { continue };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("content-length") {
            len = value.parse().unwrap_or(0);
        } else if name.eq_ignore_ascii_case("transfer-encoding") && value.to_ascii_lowercase().contains("chunked") {
            return Framing::Chunked;
        }
    }
    Framing::Length(len)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Copy until EOF in large reads, counting bytes; shut the writer down at the end.
async fn pump<R, W>(mut from: R, mut to: W, counter: &AtomicU64) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; BUF];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf[..n]).await?;
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }
}

//! An HTTP/1.1 delay proxy for `scripts/bench/bench_remote.py`: it holds every
//! request a fixed time before forwarding it, so a benchmark can show whether
//! a client hides network latency (prefetch, requests in flight) against a
//! local server that answers in microseconds.
//!
//! It works at the TCP level: each client connection gets its own upstream
//! connection; request heads are parsed only to find where one request ends
//! (`Content-Length` bodies; a chunked request body switches the connection
//! to plain pass-through after its delay). Responses stream back unparsed,
//! moved socket → pipe → socket with splice(2) (no copy through user space;
//! `--no-splice` copies through a 256 KiB buffer instead), so keep-alive,
//! many connections and large bodies all work without the proxy becoming the
//! bottleneck.
//! Hosts and signatures are untouched (a SigV4 signature covers the `Host`
//! the client sent, and the server checks what it received).
//!
//! ```text
//! cargo build --release --example delay_proxy
//! target/release/examples/delay_proxy --listen 127.0.0.1:0 --upstream 127.0.0.1:8080 \
//!     --delay-ms 20 [--threads 2] [--stats-file PATH] [--no-splice]
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

use std::io;
use std::os::fd::AsRawFd;

use nix::fcntl::{fcntl, splice, FcntlArg, OFlag, SpliceFFlags};
use tokio::io::Interest;
use tokio::net::{TcpListener, TcpStream};

/// Largest request head accepted; a longer one closes the connection.
const MAX_HEAD: usize = 64 * 1024;
/// Read size of the copying paths; pipe size of the splicing one.
const BUF: usize = 256 * 1024;
/// Bytes moved by one splice call.
const PIPE: usize = 1024 * 1024;

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
    splice: bool,
}

fn parse_args() -> Result<Options, String> {
    let usage = "usage: delay_proxy --listen ADDR --upstream ADDR [--delay-ms N] [--threads N] [--stats-file PATH] [--no-splice]";
    let mut listen = None;
    let mut upstream = None;
    let mut delay_ms = 20u64;
    let mut threads = 2usize;
    let mut stats_file = None;
    let mut splice = true;
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{flag} needs a value\n{usage}"))
        };
        match flag.as_str() {
            "--listen" => listen = Some(value()?.parse().map_err(|e| format!("--listen: {e}"))?),
            "--upstream" => {
                upstream = Some(value()?.parse().map_err(|e| format!("--upstream: {e}"))?)
            }
            "--delay-ms" => delay_ms = value()?.parse().map_err(|e| format!("--delay-ms: {e}"))?,
            "--threads" => threads = value()?.parse().map_err(|e| format!("--threads: {e}"))?,
            "--stats-file" => stats_file = Some(PathBuf::from(value()?)),
            "--no-splice" => splice = false,
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
        splice,
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
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(opts.threads)
        .enable_all()
        .build()?;
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
        let (upstream, delay, stats, use_splice) =
            (opts.upstream, opts.delay, stats.clone(), opts.splice);
        tokio::spawn(async move {
            if let Err(e) = proxy(client, upstream, delay, stats, use_splice).await {
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
        if now != last
            && std::fs::write(&tmp, &now)
                .and_then(|_| std::fs::rename(&tmp, &path))
                .is_ok()
        {
            last = now;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn proxy(
    client: TcpStream,
    upstream: SocketAddr,
    delay: Duration,
    stats: Arc<Stats>,
    use_splice: bool,
) -> io::Result<()> {
    let server = TcpStream::connect(upstream).await?;
    client.set_nodelay(true)?;
    server.set_nodelay(true)?;
    let (client, server) = (Arc::new(client), Arc::new(server));
    let up = tokio::spawn(requests(
        client.clone(),
        server.clone(),
        delay,
        stats.clone(),
    ));
    // Responses flow until the server closes (after the client's EOF was
    // passed on, or on its own keep-alive timeout); then the connection is done.
    let down = if use_splice {
        splice_pump(&server, &client, &stats.bytes_down).await
    } else {
        pump(&server, &client, &stats.bytes_down).await
    };
    up.abort();
    down
}

/// Client → server: each request head is held `delay`, then forwarded with its body.
async fn requests(
    from: Arc<TcpStream>,
    to: Arc<TcpStream>,
    delay: Duration,
    stats: Arc<Stats>,
) -> io::Result<()> {
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut chunk = vec![0u8; 16 * 1024];
    loop {
        // Gather one request head.
        let end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i + 4;
            }
            if buf.len() > MAX_HEAD {
                return Err(io::Error::other("request head longer than 64 KiB"));
            }
            let n = read_some(&from, &mut chunk).await?;
            if n == 0 {
                return shutdown_write(&to);
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
                write_all(&to, &buf[..take]).await?;
                stats.bytes_up.fetch_add(take as u64, Ordering::Relaxed);
                buf.drain(..take);
                let mut left = len - buffered as u64;
                while left > 0 {
                    let want = chunk.len().min(usize::try_from(left).unwrap_or(usize::MAX));
                    let n = read_some(&from, &mut chunk[..want]).await?;
                    if n == 0 {
                        return Err(io::Error::other("client closed inside a request body"));
                    }
                    write_all(&to, &chunk[..n]).await?;
                    stats.bytes_up.fetch_add(n as u64, Ordering::Relaxed);
                    left -= n as u64;
                }
            }
            Framing::Chunked => {
                // Rare here (benchmark clients only GET and HEAD): stop parsing.
                write_all(&to, &buf).await?;
                stats
                    .bytes_up
                    .fetch_add(buf.len() as u64, Ordering::Relaxed);
                return pump(&from, &to, &stats.bytes_up).await;
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
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("content-length") {
            len = value.parse().unwrap_or(0);
        } else if name.eq_ignore_ascii_case("transfer-encoding")
            && value.to_ascii_lowercase().contains("chunked")
        {
            return Framing::Chunked;
        }
    }
    Framing::Length(len)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Some bytes from `s` (0 at EOF), waiting for readiness.
async fn read_some(s: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        s.readable().await?;
        match s.try_read(buf) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

/// All of `buf` to `s`, waiting for readiness.
async fn write_all(s: &TcpStream, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        s.writable().await?;
        match s.try_write(buf) {
            Ok(n) => buf = &buf[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn shutdown_write(s: &TcpStream) -> io::Result<()> {
    match nix::sys::socket::shutdown(s.as_raw_fd(), nix::sys::socket::Shutdown::Write) {
        Ok(()) | Err(nix::errno::Errno::ENOTCONN) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Copy until EOF through a buffer, counting bytes; shut the writer down at the end.
async fn pump(from: &TcpStream, to: &TcpStream, counter: &AtomicU64) -> io::Result<()> {
    let mut buf = vec![0u8; BUF];
    loop {
        let n = read_some(from, &mut buf).await?;
        if n == 0 {
            return shutdown_write(to);
        }
        write_all(to, &buf[..n]).await?;
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// Move bytes socket → pipe → socket with splice(2) until EOF, counting them;
/// shut the writer down at the end. Falls back to [`pump`] when no pipe can be made.
async fn splice_pump(from: &TcpStream, to: &TcpStream, counter: &AtomicU64) -> io::Result<()> {
    let Ok((pipe_r, pipe_w)) = nix::unistd::pipe2(OFlag::O_NONBLOCK | OFlag::O_CLOEXEC) else {
        return pump(from, to, counter).await;
    };
    // A larger pipe moves more per call; the default (64 KiB) still works.
    let _ = fcntl(&pipe_w, FcntlArg::F_SETPIPE_SZ(PIPE as i32));
    let flags = SpliceFFlags::SPLICE_F_MOVE | SpliceFFlags::SPLICE_F_NONBLOCK;
    loop {
        // The pipe is empty here, so EAGAIN can only mean "socket not readable".
        let n = loop {
            from.readable().await?;
            match from.try_io(Interest::READABLE, || {
                splice(from, None, &pipe_w, None, PIPE, flags).map_err(io::Error::from)
            }) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                other => break other?,
            }
        };
        if n == 0 {
            return shutdown_write(to);
        }
        let mut left = n;
        while left > 0 {
            to.writable().await?;
            match to.try_io(Interest::WRITABLE, || {
                splice(&pipe_r, None, to, None, left, flags).map_err(io::Error::from)
            }) {
                Ok(m) => left -= m,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            }
        }
        counter.fetch_add(n as u64, Ordering::Relaxed);
    }
}

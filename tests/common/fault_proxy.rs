//! A fault-injecting HTTP proxy on 127.0.0.1 in front of an S3 API server
//! (moto): it forwards each request and, as its [`Rules`] say, stalls GETs
//! of some keys, answers 503, resets the connection, truncates or corrupts
//! bodies, or answers a listing with a forged one. One request per
//! connection (it answers `Connection: close`), each on its own thread, so
//! a stalled answer holds up only its own connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// What the proxy does to the requests it forwards.
#[derive(Debug, Default, Clone)]
pub struct Rules {
    /// GETs (not listings) whose path contains one of these are never
    /// answered (until the proxy is dropped).
    pub stall: Vec<String>,
    /// The next this many GETs are answered 503.
    pub fail_503: usize,
    /// The next this many GETs get their connection closed, unanswered.
    pub reset: usize,
    /// The next this many GETs get their headers and half their body.
    pub truncate: usize,
    /// GETs whose path contains one of these get their body's bytes
    /// flipped (same length, same headers and ETag).
    pub corrupt: Vec<String>,
    /// A listing of prefix `.0` (decoded, as the `prefix=` query gives it)
    /// is answered with the XML body `.1`.
    pub forged: Vec<(String, String)>,
}

/// What the proxy saw.
#[derive(Debug, Default, Clone, Copy)]
pub struct Seen {
    /// Listing requests.
    pub lists: usize,
    /// Other GETs.
    pub gets: usize,
    /// HEADs.
    pub heads: usize,
    /// Requests it spoiled (any fault above).
    pub faults: usize,
}

/// The proxy; stops (and lets stalled connections go) when dropped.
pub struct FaultProxy {
    /// Its port.
    pub port: u16,
    /// Its rules, changeable while it runs.
    pub rules: Arc<Mutex<Rules>>,
    seen: Arc<Mutex<Seen>>,
    stop: Arc<AtomicBool>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

impl FaultProxy {
    /// A proxy in front of `127.0.0.1:upstream`.
    pub fn start(upstream: u16, rules: Rules) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let proxy = FaultProxy {
            port,
            rules: Arc::new(Mutex::new(rules)),
            seen: Arc::new(Mutex::new(Seen::default())),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (rules, seen, stop) = (proxy.rules.clone(), proxy.seen.clone(), proxy.stop.clone());
        thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((conn, _)) => {
                        let (rules, seen, stop) = (rules.clone(), seen.clone(), stop.clone());
                        thread::spawn(move || {
                            let _ = conn.set_nonblocking(false);
                            serve(conn, upstream, &rules, &seen, &stop);
                        });
                    }
                    Err(_) => thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        proxy
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// What it saw so far.
    pub fn seen(&self) -> Seen {
        *self.seen.lock().unwrap()
    }

    /// Change its rules.
    pub fn set(&self, rules: Rules) {
        *self.rules.lock().unwrap() = rules;
    }
}

/// `%XX` escapes of a query value decoded (`+` kept).
fn decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match (bytes[i], value.get(i + 1..i + 3)) {
            (b'%', Some(hex)) if u8::from_str_radix(hex, 16).is_ok() => {
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The fault for this request, taken from the rules (counted ones used up).
enum Fault {
    None,
    Stall,
    Fail503,
    Reset,
    Truncate,
    Corrupt,
    Forged(String),
}

fn choose(method: &str, target: &str, rules: &Mutex<Rules>, seen: &Mutex<Seen>) -> Fault {
    let mut rules = rules.lock().unwrap();
    let mut seen = seen.lock().unwrap();
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    if method == "HEAD" {
        seen.heads += 1;
        return Fault::None;
    }
    if query.split('&').any(|p| p == "list-type=2") {
        seen.lists += 1;
        let prefix = query
            .split('&')
            .find_map(|p| p.strip_prefix("prefix="))
            .map(decode)
            .unwrap_or_default();
        return match rules.forged.iter().find(|(p, _)| *p == prefix) {
            Some((_, body)) => {
                seen.faults += 1;
                Fault::Forged(body.clone())
            }
            None => Fault::None,
        };
    }
    seen.gets += 1;
    let fault = if rules.stall.iter().any(|s| path.contains(s.as_str())) {
        Fault::Stall
    } else if rules.fail_503 > 0 {
        rules.fail_503 -= 1;
        Fault::Fail503
    } else if rules.reset > 0 {
        rules.reset -= 1;
        Fault::Reset
    } else if rules.truncate > 0 {
        rules.truncate -= 1;
        Fault::Truncate
    } else if rules.corrupt.iter().any(|s| path.contains(s.as_str())) {
        Fault::Corrupt
    } else {
        Fault::None
    };
    if !matches!(fault, Fault::None) {
        seen.faults += 1;
    }
    fault
}

fn serve(
    conn: TcpStream,
    upstream: u16,
    rules: &Mutex<Rules>,
    seen: &Mutex<Seen>,
    stop: &AtomicBool,
) {
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
            if name.eq_ignore_ascii_case("connection") {
                continue;
            }
        }
        if line == "\r\n" {
            head.push_str("Connection: close\r\n\r\n");
            break;
        }
        head.push_str(&line);
    }
    let mut body = vec![0; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let mut words = head.split(' ');
    let (method, target) = (
        words.next().unwrap_or("").to_string(),
        words.next().unwrap_or("").to_string(),
    );
    let mut conn = conn;
    let fault = choose(&method, &target, rules, seen);
    match fault {
        Fault::Stall => {
            while !stop.load(Ordering::SeqCst) {
                thread::sleep(Duration::from_millis(20));
            }
            return;
        }
        Fault::Fail503 => {
            let _ = conn.write_all(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
            return;
        }
        Fault::Reset => {
            let _ = conn.shutdown(Shutdown::Both);
            return;
        }
        Fault::Forged(xml) => {
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{xml}",
                xml.len()
            );
            let _ = conn.write_all(answer.as_bytes());
            return;
        }
        _ => {}
    }
    let Ok(mut up) = TcpStream::connect(("127.0.0.1", upstream)) else {
        return;
    };
    if up.write_all(head.as_bytes()).is_err() || up.write_all(&body).is_err() {
        return;
    }
    let mut answer = Vec::new();
    let _ = up.read_to_end(&mut answer);
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(answer.len(), |p| p + 4);
    let (head, body) = answer.split_at(split);
    let mut body = body.to_vec();
    let head: String = String::from_utf8_lossy(head)
        .split("\r\n")
        .filter(|l| !l.to_ascii_lowercase().starts_with("connection:") && !l.is_empty())
        .map(|l| format!("{l}\r\n"))
        .collect::<String>()
        + "Connection: close\r\n\r\n";
    match fault {
        Fault::Truncate => body.truncate(body.len() / 2),
        Fault::Corrupt => body.iter_mut().for_each(|b| *b ^= 0x5a),
        _ => {}
    }
    let _ = conn.write_all(head.as_bytes());
    let _ = conn.write_all(&body);
    let _ = conn.flush();
}

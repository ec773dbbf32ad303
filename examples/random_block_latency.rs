//! Latency of decoding single random blocks through the reader library (no
//! FUSE, no cache): the floor under a random 4 KiB read of the mount.
//! `random_block_latency FILE [N]` prints p50 and p99 in milliseconds.

use std::time::Instant;

use blosc2fs::format::Region;
use blosc2fs::read::read_uncached;
use blosc2fs::source::open_array;

fn main() {
    blosc2fs::mount::alloc::tune_allocator();
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: random_block_latency FILE [N]");
        std::process::exit(2);
    };
    let n: usize = args.next().and_then(|v| v.parse().ok()).unwrap_or(400);
    let array = open_array(std::path::Path::new(&path)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let len = array.data_len();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut times = Vec::with_capacity(n);
    let mut buf = vec![0u8; 4096];
    for _ in 0..n {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let offset = (state % (len / 4096).max(1)) * 4096;
        let start = Instant::now();
        if let Err(e) = read_uncached(
            &array,
            Region::Data,
            offset,
            &mut buf[..4096.min(len as usize)],
        ) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        times.push(start.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    println!(
        "p50 {:.3} ms, p99 {:.3} ms over {n} reads",
        times[n / 2],
        times[n * 99 / 100]
    );
}

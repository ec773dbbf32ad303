//! Single-thread decode throughput of the reader library: decodes every
//! chunk of each file given, `--repeats` times, and prints one JSON line per
//! file with the best GB/s. Driven by scripts/bench/bench_decode.py, which times
//! C-Blosc2 (python-blosc2, nthreads=1) on the same files in the same run.

use std::path::PathBuf;
use std::time::Instant;

use blosc2fs::source::open_array;

fn main() {
    blosc2fs::mount::alloc::tune_allocator();
    let mut repeats = 3usize;
    let mut files: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--repeats" {
            repeats = args.next().and_then(|v| v.parse().ok()).unwrap_or(3);
        } else {
            files.push(PathBuf::from(arg));
        }
    }
    for file in files {
        let array = match open_array(&file) {
            Ok(a) => a,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        let mut best = f64::INFINITY;
        let mut total = 0u64;
        for _ in 0..repeats {
            let start = Instant::now();
            total = 0;
            for c in 0..array.nchunks() {
                match array.decode_chunk(c) {
                    Ok(bytes) => total += bytes.len() as u64,
                    Err(e) => {
                        eprintln!("{}: chunk {c}: {e}", file.display());
                        std::process::exit(1);
                    }
                }
            }
            best = best.min(start.elapsed().as_secs_f64());
        }
        println!(
            "{{\"file\": {:?}, \"bytes\": {total}, \"seconds\": {best:.6}, \"gbps\": {:.3}}}",
            file.display().to_string(),
            total as f64 / best / 1e9
        );
    }
}

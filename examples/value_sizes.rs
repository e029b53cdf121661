//! Prints the stored size of two typical values at the old compression level (zlib 1), the
//! new default (zlib 6) and zstd (3, and 19), and the CPU time to compress and inflate the
//! bulk benchmark's 30,800-byte value at each: docs/value-format.md has the figures.
//! `cargo run --release --example value_sizes`
use mcpool::Codec;

fn main() {
    // A 99 KB JSON document: records with ids, names, e-mails, tags and numbers.
    let mut json = String::from("[");
    let mut i = 0u64;
    while json.len() < 99 * 1024 {
        let x = i.wrapping_mul(2654435761) % 100_000;
        json.push_str(&format!(
            "{{\"id\":{i},\"name\":\"user{x}\",\"email\":\"user{x}@example.com\",\"active\":{},\
             \"score\":{}.{},\"tags\":[\"t{}\",\"t{}\"],\"created\":\"2024-{:02}-{:02}T12:{:02}:00Z\"}},",
            i % 3 == 0,
            x % 1000,
            x % 97,
            x % 13,
            x % 29,
            1 + x % 12,
            1 + x % 28,
            x % 60
        ));
        i += 1;
    }
    json.pop();
    json.push(']');
    let repetitive = "the quick brown fox jumps over the lazy dog. ".repeat(100 * 1024 / 45);
    println!(
        "| value | original | zlib 1 (old) | zlib 6 (new default) | gzip 6 | zstd 3 | zstd 19 |"
    );
    println!("|---|---|---|---|---|---|---|");
    for (name, v) in [
        ("99 KB JSON document", json.as_bytes()),
        ("100 KB repetitive string", repetitive.as_bytes()),
    ] {
        let size = |c: Codec, l: i32| c.compress(v, l).unwrap().len();
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} |",
            v.len(),
            size(Codec::Zlib, 1),
            size(Codec::Zlib, 6),
            size(Codec::Gzip, 6),
            size(Codec::Zstd, 3),
            size(Codec::Zstd, 19)
        );
    }

    // The bulk scenario's value (bench `value_bytes(30_800)`): CPU per value, one thread.
    let bulk: Vec<u8> = (0..30_800usize)
        .map(|i| b'a' + ((i * 7 + i / 13) % 26) as u8)
        .collect();
    println!();
    println!("| bulk value (30,800 bytes) | stored | compress µs | inflate µs |");
    println!("|---|---|---|---|");
    for (name, codec, level) in [
        ("zlib 1 (old)", Codec::Zlib, 1),
        ("zlib 6 (new default)", Codec::Zlib, 6),
        ("zstd 3", Codec::Zstd, 3),
    ] {
        let packed = codec.compress(&bulk, level).unwrap();
        let n = 2000u32;
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(codec.compress(std::hint::black_box(&bulk), level).unwrap());
        }
        let c_us = t.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        let t = std::time::Instant::now();
        for _ in 0..n {
            std::hint::black_box(
                mcpool::value::inflate(std::hint::black_box(&packed), 1 << 20).unwrap(),
            );
        }
        let d_us = t.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        println!("| {name} | {} | {c_us:.1} | {d_us:.1} |", packed.len());
    }
}

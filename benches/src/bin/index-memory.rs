//! Prints the device index's memory per device for the benchmark fleets, after
//! `Cluster::shrink_to_fit` (the fleets are bulk-loaded):
//! `cargo run -p gangpack-benches --release --bin index-memory`.

use gangpack_benches::fleet;

#[allow(clippy::cast_precision_loss)] // a report
fn main() {
    println!("| devices | structural bytes | per device | attribute index bytes | per device |");
    println!("|---:|---:|---:|---:|---:|");
    for n in [1_000, 10_000, 100_000] {
        let mut c = fleet(n);
        c.shrink_to_fit();
        let m = c.index_memory();
        println!(
            "| {} | {} | {:.1} | {} | {:.1} |",
            m.devices,
            m.structural_bytes,
            m.structural_bytes_per_device(),
            m.attribute_bytes,
            m.attribute_bytes as f64 / m.devices as f64
        );
    }
}

//! Rebuilds the crate when a file of the web console changes: `include_dir!` embeds them, and on
//! stable Rust it cannot tell Cargo which files it read.

fn main() {
    println!("cargo:rerun-if-changed=console");
}

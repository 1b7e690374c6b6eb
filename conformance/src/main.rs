//! The conformance gate. Not built yet: see README.md ("Status").

fn main() {
    eprintln!("conformance: the differential gate against git is not implemented yet (issue 5)");
    std::process::exit(2);
}

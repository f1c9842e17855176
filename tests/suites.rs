//! Every integration suite in one test binary: one compile and one link of
//! the harness and the client instead of one per suite (a clean build spent
//! most of its time so). A suite is a file `tests/<name>.rs`, its tests named
//! `<name>::…`; `every_suite_file_is_compiled` fails on a file missing from
//! the list below.

#[macro_use]
mod harness;

macro_rules! suites {
    ($($suite:ident)*) => {
        $(mod $suite;)*
        /// The suites compiled into this binary.
        const SUITES: &[&str] = &[$(stringify!($suite)),*];
    };
}

suites! {
    article autocomplete cache events hardening idgen idpool latch lock missing_servers nearby operator pool queue rate
    replication rwlock settings upgrade uqueue waiting
}

#[test]
fn every_suite_file_is_compiled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("the tests folder")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let suite = name.strip_suffix(".rs")?;
            (suite != "suites").then(|| suite.to_owned())
        })
        .collect();
    files.sort();
    let mut listed = SUITES.to_vec();
    listed.sort_unstable();
    assert_eq!(
        listed, files,
        "tests/suites.rs's list against the files in tests/"
    );
}

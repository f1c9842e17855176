//! The calls each family keeps in `tests/samples/<family>.txt`, one a line:
//! - `words… => reply`: one valid call of a command and its exact reply on
//!   the setup's data (the attack suite makes one of every command);
//! - `setup words… => reply`: the data those calls expect;
//! - `events [words… ;]… words… => key event, …`: the keyspace events the
//!   last call fires on that data after the calls before it (`=> nothing`:
//!   none), which `tests/events.rs` checks against the module's spec.
//!
//! `#` starts a comment line. A new command brings its lines; the suites
//! that read them need no edit.

use std::path::Path;

/// One `events` line.
pub struct Events {
    /// The calls made first (their events are not counted).
    pub before: Vec<Vec<String>>,
    pub call: Vec<String>,
    /// `key event` as fired on the server that ran the call, in order.
    pub fired: Vec<String>,
}

pub struct Samples {
    pub setup: Vec<(Vec<String>, String)>,
    /// (command name in lower case, words, reply), in name order.
    pub calls: Vec<(String, Vec<String>, String)>,
    pub events: Vec<Events>,
}

fn words(text: &str) -> Vec<String> {
    text.split_whitespace().map(String::from).collect()
}

/// Every samples file, read in name order.
pub fn samples() -> Samples {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/samples")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .collect();
    files.sort();
    let mut samples = Samples {
        setup: Vec::new(),
        calls: Vec::new(),
        events: Vec::new(),
    };
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a samples file");
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (left, right) = line
                .split_once(" => ")
                .unwrap_or_else(|| panic!("{}: `words => reply`: {line}", file.display()));
            if let Some(calls) = left.strip_prefix("events ") {
                let mut calls: Vec<Vec<String>> = calls.split(" ; ").map(words).collect();
                let call = calls.pop().expect("a call");
                let fired = match right {
                    "nothing" => Vec::new(),
                    fired => fired.split(", ").map(String::from).collect(),
                };
                samples.events.push(Events {
                    before: calls,
                    call,
                    fired,
                });
            } else if let Some(setup) = left.strip_prefix("setup ") {
                samples.setup.push((words(setup), right.to_string()));
            } else {
                let words = words(left);
                samples
                    .calls
                    .push((words[0].to_lowercase(), words, right.to_string()));
            }
        }
    }
    samples.calls.sort_by(|a, b| a.0.cmp(&b.0));
    samples
}

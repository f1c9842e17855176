//! Keyspace events on real servers, against the module's spec (each
//! command's `events`, shown in `docs/src/replication.md`): each `events`
//! line of `tests/samples/` fires exactly the events it names on the
//! primary, and for every write command the events seen on the primary and
//! on a replica across its lines are exactly those the spec gives it.

use crate::harness;

use std::collections::{BTreeMap, BTreeSet};

use harness::samples::{samples, Samples};
use harness::{
    command_flags, keyspace_event, keyspace_listener, module_commands, ok, reply, Replicated,
};

/// The marker written after each call: its event ends the capture.
const END: &str = "events:end";

/// The events (`key event`) a server fires until the marker's, from a
/// connection subscribed before the call.
fn until_marker(pubsub: &mut redis::PubSub) -> Vec<String> {
    let mut fired = Vec::new();
    loop {
        let (key, event) = keyspace_event(pubsub);
        if key == END {
            return fired;
        }
        fired.push(format!("{key} {event}"));
    }
}

fn words(call: &[String]) -> Vec<&str> {
    call.iter().map(String::as_str).collect()
}

/// The samples' data on a fresh dataset, the calls before, then the call:
/// the events it fired on the primary and on the replica.
fn fire(
    pair: &Replicated,
    samples: &Samples,
    before: &[Vec<String>],
    call: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut con = pair.primary.con();
    ok(&mut con, &["FLUSHALL"]);
    for (setup, _) in &samples.setup {
        reply(&mut con, &words(setup)).unwrap_or_else(|e| panic!("setup {setup:?}: {e}"));
    }
    for earlier in before {
        reply(&mut con, &words(earlier)).unwrap_or_else(|e| panic!("{earlier:?}: {e}"));
    }
    // The replica has applied all that before it is listened to.
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(10_000)
        .query(&mut con)
        .unwrap();
    assert_eq!(acked, 1);
    let (mut on_primary, mut on_replica) = (pair.primary.con(), pair.replica.con());
    let (mut primary, mut replica) = (
        keyspace_listener(&mut on_primary),
        keyspace_listener(&mut on_replica),
    );
    let answer = reply(&mut con, &words(call));
    assert!(answer.is_ok(), "{call:?}: {answer:?}");
    ok(&mut con, &["SET", END, "1"]);
    (until_marker(&mut primary), until_marker(&mut replica))
}

/// Each write's events as the module's spec gives them (`events`: the
/// names, lower case in backticks, of what it fires on the primary and on a
/// replica), by command.
fn table() -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let names = |cell: &str| -> BTreeSet<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .filter(|word| word.chars().all(|c| c.is_ascii_lowercase() || c == '.'))
            .map(String::from)
            .collect()
    };
    let mut rows = BTreeMap::new();
    let families = harness::spec()["families"].as_array().expect("families");
    for command in families.iter().flat_map(|family| family["commands"].as_array().expect("commands")) {
        let events = &command["events"];
        if events.is_null() {
            continue;
        }
        let name = command["name"].as_str().expect("a name").to_lowercase();
        let fires = events["fires"].as_str().expect("fires");
        let replica = events["replica"].as_str().expect("replica");
        rows.insert(name, (names(fires), names(replica)));
    }
    rows
}

/// The event name of a `key event` entry.
fn event(fired: &str) -> String {
    fired.rsplit(' ').next().unwrap_or_default().to_string()
}

server_tests! {
    fn each_write_fires_the_events_of_the_table(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        for server in [&pair.primary, &pair.replica] {
            ok(&mut server.con(), &["CONFIG", "SET", "notify-keyspace-events", "KEA"]);
        }
        let samples = samples();
        let mut seen: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
        let mut wrong = Vec::new();
        for line in &samples.events {
            let (primary, replica) = fire(&pair, &samples, &line.before, &line.call);
            if primary != line.fired {
                wrong.push(format!("{}: fires {primary:?}, its line says {:?}", line.call.join(" "), line.fired));
            }
            let entry = seen.entry(line.call[0].to_lowercase()).or_default();
            entry.0.extend(primary.iter().map(|f| event(f)));
            entry.1.extend(replica.iter().map(|f| event(f)));
        }
        let documented = table();
        let writes: Vec<String> = module_commands(&mut con)
            .into_iter()
            .filter(|c| !c.ends_with(".apply") && !command_flags(&mut con, c).iter().any(|f| f == "readonly"))
            .collect();
        for command in &writes {
            let Some((fired, replayed)) = seen.get(command) else {
                wrong.push(format!("{command}: no `events` line in tests/samples"));
                continue;
            };
            let Some((primary, replica)) = documented.get(command) else {
                wrong.push(format!(
                    "{command}: no events in the module's spec (it fires {fired:?}, a replica {replayed:?})"
                ));
                continue;
            };
            if fired != primary {
                wrong.push(format!("{command}: fires {fired:?}, the spec says {primary:?}"));
            }
            if replayed != replica {
                wrong.push(format!("{command}: a replica fires {replayed:?}, the spec says {replica:?}"));
            }
        }
        for command in documented.keys().filter(|c| !writes.contains(c)) {
            wrong.push(format!("{command}: events in the spec, not a write command of the module"));
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}

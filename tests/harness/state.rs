//! Whole-dataset snapshots and the round trips through a replica, an AOF and `DUMP`/`RESTORE`.

use super::*;

/// A key's serialized value (`DUMP`) and absolute expiry (`PEXPIRETIME`).
pub type Snapshot = (Option<Vec<u8>>, i64);

/// The serialized value and absolute expiry of a key: two keys with equal
/// snapshots hold the same thing.
pub fn snapshot(con: &mut Connection, key: &str) -> Snapshot {
    let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(key).query(con).expect("DUMP");
    let expiry: i64 = redis::cmd("PEXPIRETIME")
        .arg(key)
        .query(con)
        .expect("PEXPIRETIME");
    (dump, expiry)
}

/// Everything a server holds, as far as a comparison needs: each key's
/// snapshot and the digest of the whole dataset.
pub fn state<K: AsRef<str>>(con: &mut Connection, keys: &[K]) -> (Vec<Snapshot>, String) {
    let snapshots = keys.iter().map(|key| snapshot(con, key.as_ref())).collect();
    (snapshots, digest(con))
}

/// Every key (any bytes) with its serialized value and absolute expiry, and
/// the dataset's digest: unlike the digest alone, it sees when a key
/// expires, not only that it does.
pub type Dataset = (Vec<(Vec<u8>, Snapshot)>, String);

/// The whole [`Dataset`].
pub fn dataset(con: &mut Connection) -> Dataset {
    let mut keys: Vec<Vec<u8>> = query(con, &["KEYS", "*"]);
    keys.sort();
    let entries = keys
        .into_iter()
        .map(|key| {
            let dump: Option<Vec<u8>> = redis::cmd("DUMP").arg(&key[..]).query(con).expect("DUMP");
            let expiry: i64 = redis::cmd("PEXPIRETIME")
                .arg(&key[..])
                .query(con)
                .expect("PEXPIRETIME");
            (key, (dump, expiry))
        })
        .collect();
    (entries, digest(con))
}

/// Each key's value digest (`DEBUG DIGEST-VALUE`, blind to the order of a
/// hash's fields) and absolute expiry.
pub fn values<K: AsRef<str>>(con: &mut Connection, keys: &[K]) -> Vec<(String, i64)> {
    keys.iter()
        .map(|key| {
            let digest: Vec<String> = redis::cmd("DEBUG")
                .arg("DIGEST-VALUE")
                .arg(key.as_ref())
                .query(con)
                .expect("DEBUG DIGEST-VALUE");
            let expiry: i64 = redis::cmd("PEXPIRETIME")
                .arg(key.as_ref())
                .query(con)
                .expect("PEXPIRETIME");
            (digest.concat(), expiry)
        })
        .collect()
}

/// Starts an AOF server (fsync always), runs `workload` (which returns the keys
/// it wrote), restarts the server from its AOF and checks it holds exactly the
/// same state. Returns the restarted server for further checks.
pub fn aof_round_trip<K: AsRef<str>>(
    flavor: Flavor,
    workload: impl FnOnce(&Server, &mut Connection) -> Vec<K>,
) -> Server {
    aof_round_trip_with(flavor, &[], workload)
}

/// [`aof_round_trip`] with extra configuration (e.g. an AOF rewritten as
/// commands: `--aof-use-rdb-preamble no`).
pub fn aof_round_trip_with<K: AsRef<str>>(
    flavor: Flavor,
    extra: &[&str],
    workload: impl FnOnce(&Server, &mut Connection) -> Vec<K>,
) -> Server {
    let mut config = vec!["--appendonly", "yes", "--appendfsync", "always"];
    config.extend_from_slice(extra);
    let mut server = Server::start_with(flavor, &config);
    let mut con = server.con();
    let keys = workload(&server, &mut con);
    let before = state(&mut con, &keys);
    drop(con);
    server.restart();
    assert_eq!(
        before,
        state(&mut server.con(), &keys),
        "the AOF restored another state"
    );
    server
}

/// The digest of the whole dataset (values and expiry times).
pub fn digest(con: &mut Connection) -> String {
    redis::cmd("DEBUG")
        .arg("DIGEST")
        .query(con)
        .expect("DEBUG DIGEST")
}

/// Runs `workload` on a primary with a replica, and checks that the replica
/// holds exactly the primary's data for the keys it returns (and the whole
/// dataset's digest). Which commands the replica received is
/// `tests/replication.rs`'s concern.
pub fn replica_converges<K: AsRef<str>>(
    flavor: Flavor,
    workload: impl FnOnce(&Server, &mut Connection) -> Vec<K>,
) {
    let pair = Replicated::start(flavor);
    let mut con = pair.primary.con();
    let keys = workload(&pair.primary, &mut con);
    pair.sync();
    let mut replica = pair.replica.con();
    assert_eq!(state(&mut con, &keys), state(&mut replica, &keys));
}

/// `RESTORE key 0 payload` refused with `expected`, leaving no key.
pub fn refused_restore(con: &mut Connection, payload: &[u8], expected: &str) {
    let got = error(
        con,
        redis::cmd("RESTORE").arg("refused").arg(0).arg(payload),
    );
    assert_eq!(got, expected);
    assert_eq!(int(con, &["EXISTS", "refused"]), 0);
}

/// `BGREWRITEAOF`, waiting until the new base is in place.
pub fn rewrite_aof(con: &mut Connection) {
    let idle = |con: &mut Connection| {
        info_field(con, "persistence", "aof_rewrite_in_progress").as_deref() == Some("0")
            && info_field(con, "persistence", "aof_rewrite_scheduled").as_deref() == Some("0")
    };
    wait_until("no AOF rewrite runs", || idle(con));
    let _: Value = query(con, &["BGREWRITEAOF"]);
    wait_until("the AOF rewrite is done", || idle(con));
}

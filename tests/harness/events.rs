//! Keyspace events and client-tracking invalidations.

use super::*;

/// The keyspace events (`key event`, db 0) that `act` causes, the first
/// `count` of them, with `notify-keyspace-events KEA`.
pub fn keyspace_events(
    server: &Server,
    count: usize,
    act: impl FnOnce(&mut Connection),
) -> Vec<String> {
    let mut con = server.con();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg("KEA")
        .query(&mut con)
        .unwrap();
    let mut listener = server.con();
    let mut pubsub = keyspace_listener(&mut listener);
    act(&mut con);
    (0..count)
        .map(|_| {
            let (key, event) = keyspace_event(&mut pubsub);
            format!("{key} {event}")
        })
        .collect()
}

/// `con` subscribed to every keyspace event of db 0 (10 s read time-out).
pub fn keyspace_listener(con: &mut Connection) -> redis::PubSub<'_> {
    let mut pubsub = con.as_pubsub();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    pubsub.psubscribe("__keyspace@0__:*").unwrap();
    pubsub
}

/// The next keyspace event a listener gets: its key and event.
pub fn keyspace_event(pubsub: &mut redis::PubSub) -> (String, String) {
    let message = pubsub.get_message().expect("a keyspace event");
    let event: String = message.get_payload().unwrap();
    let key = message
        .get_channel_name()
        .trim_start_matches("__keyspace@0__:")
        .to_string();
    (key, event)
}

/// The keys of the first client-tracking invalidation after a tracking
/// client runs `read` and another client runs `write`.
pub fn invalidated_keys(
    server: &Server,
    read: impl FnOnce(&mut Connection),
    write: impl FnOnce(&mut Connection),
) -> Vec<String> {
    let mut listener = server.con();
    let listener_id: i64 = redis::cmd("CLIENT").arg("ID").query(&mut listener).unwrap();
    let mut pubsub = listener.as_pubsub();
    pubsub
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    pubsub.subscribe("__redis__:invalidate").unwrap();
    let mut reader = server.con();
    let _: () = redis::cmd("CLIENT")
        .arg("TRACKING")
        .arg("on")
        .arg("REDIRECT")
        .arg(listener_id)
        .query(&mut reader)
        .unwrap();
    read(&mut reader);
    write(&mut server.con());
    let message = pubsub.get_message().expect("an invalidation");
    message.get_payload().unwrap()
}

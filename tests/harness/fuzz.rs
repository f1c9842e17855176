//! Random commands for the family suites' own fuzz tests.

use super::*;

/// Runs `rounds` random commands from `generate` (argv words, command name
/// first) after `setup`, and checks after each that the server still answers
/// and that a command that failed changed nothing ([`dataset`]: no value, no
/// expiry). Then checks that nothing panicked. The seed is printed on failure.
pub fn fuzz(
    server: &Server,
    seed: u64,
    rounds: usize,
    mut setup: impl FnMut(&mut Connection),
    mut generate: impl FnMut(&mut rand::rngs::StdRng) -> Vec<Vec<u8>>,
) {
    use rand::{Rng, SeedableRng};
    let mut con = server.con();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for _ in 0..rounds {
        // A fresh mix of key types, reset now and then.
        if rng.random_ratio(1, 50) {
            let _: () = redis::cmd("FLUSHALL").query(&mut con).unwrap();
        }
        setup(&mut con);
        let words = generate(&mut rng);
        let shown: Vec<String> = words
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect();
        let mut command = redis::cmd(&shown[0]);
        for word in &words[1..] {
            command.arg(&word[..]);
        }
        let before = dataset(&mut con);
        let answer = command.query::<Value>(&mut con);
        let pong: String = redis::cmd("PING")
            .query(&mut con)
            .unwrap_or_else(|e| panic!("seed {seed}: server gone after {shown:?}: {e}"));
        assert_eq!(pong, "PONG");
        if matches!(answer, Err(_) | Ok(Value::ServerError(_))) {
            assert_eq!(
                before,
                dataset(&mut con),
                "seed {seed}: {shown:?} failed but changed data"
            );
        }
    }
    assert!(
        !server.log().contains("panic"),
        "a command panicked:\n{}",
        server.log()
    );
}

/// One of `choices`, as argv bytes.
pub fn pick(rng: &mut rand::rngs::StdRng, choices: &[&[u8]]) -> Vec<u8> {
    use rand::Rng;
    choices[rng.random_range(0..choices.len())].to_vec()
}

/// A random command for [`fuzz`]: one of `commands`, then up to `most` words.
pub fn random_command(
    rng: &mut rand::rngs::StdRng,
    commands: &[&[u8]],
    words: &[&[u8]],
    most: usize,
) -> Vec<Vec<u8>> {
    use rand::Rng;
    let mut argv = vec![pick(rng, commands)];
    for _ in 0..rng.random_range(0..=most) {
        argv.push(pick(rng, words));
    }
    argv
}

//! What a missing server does to the suites: a developer's plain `cargo
//! test` skips that server's tests, saying so; under `make test` and `make
//! stress` (`RECIPES_REQUIRE_SERVERS=1`) or `CI=true` they fail, so that such
//! a run never passes by testing nothing. Each case runs this test binary
//! again with redis-server missing.

use crate::harness;

use std::process::{Command, Output};

use harness::{value, Server, Value};

server_tests! {
    /// A test that needs nothing but its server: the one the runs below make.
    fn a_server_answers(flavor) {
        let server = Server::start(flavor);
        assert_eq!(value(&mut server.con(), &["PING"]), Value::SimpleString("PONG".into()));
    }
}

/// Runs `a_server_answers::redis` in a new process of this test binary with
/// redis-server missing, and `env` as the only one of the rule's variables.
fn without_redis(env: &[(&str, &str)]) -> (Output, String) {
    let mut command = Command::new(std::env::current_exe().expect("the test binary"));
    command
        .args(["missing_servers::a_server_answers::redis", "--exact", "--nocapture"])
        .env("REDIS_SERVER", "/nonexistent/redis-server")
        .env_remove("RECIPES_REQUIRE_SERVERS")
        .env_remove("CI")
        .envs(env.iter().copied());
    let output = command.output().expect("run the test binary");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output, text)
}

#[test]
fn a_plain_run_skips_a_missing_server() {
    let (output, text) = without_redis(&[]);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains("skipped: redis-server not found (run `make test` to install it)"),
        "{text}"
    );
    assert!(text.contains("test result: ok. 1 passed"), "{text}");
}

#[test]
fn make_test_and_ci_fail_on_a_missing_server() {
    for env in [("RECIPES_REQUIRE_SERVERS", "1"), ("CI", "true")] {
        let (output, text) = without_redis(&[env]);
        assert!(!output.status.success(), "{env:?}: {text}");
        assert!(
            text.contains(
                "redis-server not found, and RECIPES_REQUIRE_SERVERS=1 or CI=true requires every \
                 server (run `make test`, which installs them)"
            ),
            "{env:?}: {text}"
        );
        assert!(
            text.contains("test result: FAILED. 0 passed; 1 failed"),
            "{env:?}: {text}"
        );
    }
}

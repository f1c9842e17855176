//! The module's settings (`recipes.*`) on real servers: defaults, `CONFIG
//! SET` round trips, refused values, `redis.conf` and `MODULE LOADEX`, a
//! lowered cap against keys stored under a higher one, and replicas and AOF
//! replays that do what the primary accepted whatever their own settings.

use crate::harness;

use std::fs;

use harness::*;

/// Every `recipes.*` setting and its value, sorted by name.
fn settings(con: &mut Connection) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = cmd(&["CONFIG", "GET", "recipes.*"])
        .query::<std::collections::HashMap<String, String>>(con)
        .expect("CONFIG GET")
        .into_iter()
        .collect();
    pairs.sort();
    pairs
}

fn expect(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

const DEFAULTS: &[(&str, &str)] = &[
    ("recipes.article-slug-max-chars", "200"),
    ("recipes.autocomplete-hint-cache", "64"),
    ("recipes.autocomplete-max-chars", "256"),
    ("recipes.rate-max-limits", "16"),
    ("recipes.rate-sliding-max", "100000"),
];

/// `RATE.LIMIT key 5 3600000` with `n` limits (an hour: the key outlives
/// the test).
fn limits(key: &str, n: usize) -> Vec<String> {
    let mut words = vec![
        "RATE.LIMIT".to_string(),
        key.to_string(),
        "5".into(),
        "3600000".into(),
    ];
    for _ in 1..n {
        words.extend(["AND".to_string(), "5".into(), "3600000".into()]);
    }
    words
}

fn words(words: &[String]) -> Vec<&str> {
    words.iter().map(String::as_str).collect()
}

fn set(con: &mut Connection, name: &str, value: &str) {
    let reply: Value = cmd(&["CONFIG", "SET", name, value]).query(con).unwrap();
    assert_eq!(reply, Value::Okay, "CONFIG SET {name} {value}");
}

/// What `MODULE LOAD`/`LOADEX` answers when the load fails.
const LOAD_FAILED: &str = "ERR Error loading the extension. Please check the server logs.";

/// What the server logs for each data type the module creates.
const CREATED_TYPE: &str = "<recipes> Created new data type";

/// Whether `MODULE LIST` shows the module.
fn loaded(con: &mut Connection) -> bool {
    let modules: Vec<std::collections::HashMap<String, Value>> =
        cmd(&["MODULE", "LIST"]).query(con).expect("MODULE LIST");
    modules
        .iter()
        .any(|module| module.get("name") == Some(&Value::BulkString(b"recipes".to_vec())))
}

/// Stores, reads and deletes a value of a module data type (an ID pool).
fn uses_a_data_type(con: &mut Connection) {
    ok(con, &["IDPOOL.CREATE", "typed", "3"]);
    assert_eq!(text(&value(con, &["TYPE", "typed"])), "rr-idpool");
    assert_eq!(int(con, &["DEL", "typed"]), 1);
}

/// What a server does with a module that has data types when `MODULE
/// LOADEX … CONFIG` names a setting the module lacks.
enum Outcome {
    /// Redis 8: it unloads the module anyway.
    Unloaded,
    /// Redis 7.0: it answers an error, and the module stays loaded.
    KeptLoaded,
    /// Valkey (9.1.2), and by their source Redis 7.2 and 7.4: a null
    /// pointer write in `moduleUnload`.
    Crashes,
}

fn unknown_setting_outcome(flavor: Flavor, con: &mut Connection) -> Outcome {
    match (flavor, server_version(con)) {
        (Flavor::Valkey, _) => Outcome::Crashes,
        (_, version) if version < (7, 2) => Outcome::KeptLoaded,
        (_, version) if version < (8, 0) => Outcome::Crashes,
        _ => Outcome::Unloaded,
    }
}

server_tests! {
    fn defaults_are_documented_values(flavor) {
        let server = Server::start(flavor);
        assert_eq!(settings(&mut server.con()), expect(DEFAULTS));
    }

    /// `CONFIG SET` changes what the next command may do, and `CONFIG GET`
    /// reads it back.
    fn config_set_round_trip(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        set(&mut con, "recipes.rate-max-limits", "2");
        set(&mut con, "recipes.rate-sliding-max", "1000");
        set(&mut con, "recipes.article-slug-max-chars", "5");
        set(&mut con, "recipes.autocomplete-max-chars", "3");
        assert_eq!(
            settings(&mut con),
            expect(&[
                ("recipes.article-slug-max-chars", "5"),
                ("recipes.autocomplete-hint-cache", "64"),
                ("recipes.autocomplete-max-chars", "3"),
                ("recipes.rate-max-limits", "2"),
                ("recipes.rate-sliding-max", "1000"),
            ])
        );
        assert_eq!(
            error(&mut con, &cmd(&words(&limits("g3", 3)))),
            "ERR too many limits in one call (at most 2)"
        );
        assert_eq!(decide(&mut con, &words(&limits("g2", 2))), [0, 5, 4, -1, 720_000]);
        assert_eq!(
            error(&mut con, &cmd(&["RATE.LIMIT", "w", "1001", "1001", "SLIDING"])),
            "ERR a SLIDING window's max must be at most 1000 when its period is over 1000 ms"
        );
        assert_eq!(decide(&mut con, &["RATE.LIMIT", "w", "1001", "1000", "SLIDING"]), [0, 1001, 1000, -1, 1000]);
        assert_eq!(
            error(&mut con, &cmd(&["ARTICLE.CREATE", "{a}:1", "t", "c", "a", "SLUG", "{a}:s", "sixsix"])),
            "BADSLUG invalid slug: use 1 to 5 Unicode letters, digits, '-' or '_'"
        );
        assert_eq!(int(&mut con, &["ARTICLE.CREATE", "{a}:1", "t", "c", "a", "SLUG", "{a}:s", "fiver"]), 1);
        assert_eq!(
            error(&mut con, &cmd(&["AUTOCOMPLETE.FEED", "ac", "中文字幕"])),
            "ERR content must be at most 3 characters"
        );
        assert_eq!(text(&value(&mut con, &["AUTOCOMPLETE.FEED", "ac", "中文字"])), "1");
        // Back to the defaults.
        for (name, value) in DEFAULTS {
            set(&mut con, name, value);
        }
        assert_eq!(settings(&mut con), expect(DEFAULTS));
        assert_eq!(decide(&mut con, &words(&limits("g16", 16))), [0, 5, 4, -1, 720_000]);
    }

    /// A value out of range, or not a number, is refused with the server's
    /// error and changes nothing.
    fn a_bad_value_is_refused(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        set(&mut con, "recipes.rate-max-limits", "8");
        for (name, value, why) in [
            ("recipes.rate-max-limits", "17", "argument must be between 1 and 16 inclusive"),
            ("recipes.rate-max-limits", "0", "argument must be between 1 and 16 inclusive"),
            ("recipes.rate-max-limits", "-1", "argument must be between 1 and 16 inclusive"),
            ("recipes.rate-max-limits", "many", "argument couldn't be parsed into an integer"),
            ("recipes.rate-sliding-max", "10000001", "argument must be between 1 and 10000000 inclusive"),
            ("recipes.article-slug-max-chars", "4097", "argument must be between 1 and 4096 inclusive"),
            ("recipes.autocomplete-max-chars", "0", "argument must be between 1 and 65536 inclusive"),
            ("recipes.autocomplete-max-chars", "65537", "argument must be between 1 and 65536 inclusive"),
            ("recipes.autocomplete-hint-cache", "-1", "argument must be between 0 and 4096 inclusive"),
            ("recipes.autocomplete-hint-cache", "4097", "argument must be between 0 and 4096 inclusive"),
        ] {
            assert_eq!(
                error(&mut con, &cmd(&["CONFIG", "SET", name, value])),
                format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"),
                "{name} {value}"
            );
        }
        assert_eq!(
            error(&mut con, &cmd(&["CONFIG", "SET", "recipes.no-such-setting", "1"])),
            "ERR Unknown option or number of arguments for CONFIG SET - 'recipes.no-such-setting'"
        );
        assert_eq!(
            settings(&mut con),
            expect(&[
                ("recipes.article-slug-max-chars", "200"),
                ("recipes.autocomplete-hint-cache", "64"),
                ("recipes.autocomplete-max-chars", "256"),
                ("recipes.rate-max-limits", "8"),
                ("recipes.rate-sliding-max", "100000"),
            ])
        );
    }

    /// Settings given in the configuration file (`include`d here) and on the
    /// command line apply from the start; a bad one, or a misspelt name,
    /// stops the server.
    fn configuration_file_and_command_line(flavor) {
        let server = Server::start_prepared(
            flavor,
            &["--include", "recipes.conf", "--recipes.rate-sliding-max", "500"],
            |dir| {
                fs::write(
                    dir.join("recipes.conf"),
                    "recipes.rate-max-limits 3\nrecipes.article-slug-max-chars 64\n\
                     recipes.autocomplete-max-chars 16\n",
                )
                .unwrap();
            },
        );
        assert_eq!(
            settings(&mut server.con()),
            expect(&[
                ("recipes.article-slug-max-chars", "64"),
                ("recipes.autocomplete-hint-cache", "64"),
                ("recipes.autocomplete-max-chars", "16"),
                ("recipes.rate-max-limits", "3"),
                ("recipes.rate-sliding-max", "500"),
            ])
        );
        let log = refused_start(flavor, &[], &["--recipes.rate-max-limits", "99"], |_| {});
        assert!(log.contains("<recipes> refusing to load: a recipes.* value"), "{log}");
        // A name the module lacks stops the server too, by the server's check.
        let log = refused_start(flavor, &[], &["--recipes.rate-max-limit", "3"], |_| {});
        assert!(
            log.contains(
                "Module Configuration detected without loadmodule directive or no ApplyConfig \
                 call: aborting"
            ),
            "{log}"
        );
    }

    /// `MODULE LOADEX … CONFIG` sets values at load; a bad value or a stray
    /// argument refuses the load before the module creates its data types
    /// (which no server removes again), so a later load starts afresh.
    fn module_loadex(flavor) {
        let server = Server::start_without_module(flavor);
        let mut con = server.con();
        let module = module_path();
        let module = module.to_str().unwrap();
        let refused = error(
            &mut con,
            &cmd(&["MODULE", "LOADEX", module, "CONFIG", "recipes.rate-max-limits", "99"]),
        );
        assert_eq!(refused, LOAD_FAILED);
        let refused = error(&mut con, &cmd(&["MODULE", "LOADEX", module, "ARGS", "maxwaiters", "10"]));
        assert_eq!(refused, LOAD_FAILED);
        let log = server.log();
        assert!(log.contains(
            "<recipes> refusing to load: unknown module argument 'maxwaiters' (the module takes none)"
        ));
        assert!(!log.contains(CREATED_TYPE), "a refused load created a data type:\n{log}");
        assert!(!loaded(&mut con));
        let answer: Value = cmd(&[
            "MODULE", "LOADEX", module, "CONFIG", "recipes.rate-max-limits", "4",
            "CONFIG", "recipes.article-slug-max-chars", "10",
        ])
        .query(&mut con)
        .unwrap();
        assert_eq!(answer, Value::Okay);
        assert!(server.log().contains(CREATED_TYPE));
        assert_eq!(
            settings(&mut con),
            expect(&[
                ("recipes.article-slug-max-chars", "10"),
                ("recipes.autocomplete-hint-cache", "64"),
                ("recipes.autocomplete-max-chars", "256"),
                ("recipes.rate-max-limits", "4"),
                ("recipes.rate-sliding-max", "100000"),
            ])
        );
        assert_eq!(
            error(&mut con, &cmd(&words(&limits("g", 5)))),
            "ERR too many limits in one call (at most 4)"
        );
        uses_a_data_type(&mut con);
    }

    /// `MODULE LOADEX … CONFIG` naming a setting the module lacks
    /// (`recipes.rate-max-limit`, a letter short). The server finds the
    /// name unused only after the module has loaded, data types included,
    /// and what it does then is its own (docs/src/settings.md): Redis 8.6
    /// unloads the module; Redis 7.0 answers an error but cannot unload a
    /// module with data types, which stays loaded with the values given;
    /// Valkey 9.1 crashes trying (valkey-io/valkey#4630).
    fn module_loadex_naming_an_unknown_setting(flavor) {
        let mut server = Server::start_without_module(flavor);
        let mut con = server.con();
        let module = module_path();
        let module = module.to_str().unwrap();
        let misspelt = cmd(&[
            "MODULE", "LOADEX", module, "CONFIG", "recipes.rate-max-limits", "4",
            "CONFIG", "recipes.rate-max-limit", "4",
        ]);
        let unused = "Loadex configurations were not applied, likely due to invalid arguments. \
                      Unloading the module.";
        match unknown_setting_outcome(flavor, &mut con) {
            Outcome::Unloaded => {
                assert_eq!(error(&mut con, &misspelt), LOAD_FAILED);
                assert!(server.log().contains(unused));
                assert!(server.log().contains("Module recipes unloaded"));
                assert!(!loaded(&mut con));
                assert_eq!(settings(&mut con), []);
                assert!(!harness::has_command(&mut con, "idgen.next"));
                // A later load starts afresh, with the defaults.
                ok(&mut con, &["MODULE", "LOAD", module]);
                assert!(loaded(&mut con));
                assert_eq!(settings(&mut con), expect(DEFAULTS));
                assert_eq!(decide(&mut con, &words(&limits("g16", 16))), [0, 5, 4, -1, 720_000]);
                uses_a_data_type(&mut con);
            }
            Outcome::KeptLoaded => {
                assert_eq!(error(&mut con, &misspelt), LOAD_FAILED);
                assert!(server.log().contains(unused));
                // Loaded all the same, with the values it was given, and
                // working; it cannot be loaded again nor unloaded.
                assert!(loaded(&mut con));
                assert_eq!(
                    settings(&mut con),
                    expect(&[
                        ("recipes.article-slug-max-chars", "200"),
                        ("recipes.autocomplete-hint-cache", "64"),
                        ("recipes.autocomplete-max-chars", "256"),
                        ("recipes.rate-max-limits", "4"),
                        ("recipes.rate-sliding-max", "100000"),
                    ])
                );
                assert_eq!(
                    error(&mut con, &cmd(&words(&limits("g", 5)))),
                    "ERR too many limits in one call (at most 4)"
                );
                uses_a_data_type(&mut con);
                assert_eq!(error(&mut con, &cmd(&["MODULE", "LOAD", module])), LOAD_FAILED);
                assert_eq!(
                    error(&mut con, &cmd(&["MODULE", "UNLOAD", "recipes"])),
                    "ERR Error unloading module: the module exports one or more module-side data \
                     types, can't unload"
                );
                assert!(loaded(&mut con));
                assert_eq!(text(&value(&mut con, &["PING"])), "PONG");
            }
            Outcome::Crashes => {
                let answer = misspelt.query::<Value>(&mut con);
                assert!(
                    matches!(&answer, Err(error) if error.is_io_error() || error.is_connection_dropped()),
                    "{answer:?}"
                );
                wait_until("the server exits", || !server.alive());
                let log = server.log();
                assert!(log.contains(unused), "{log}");
                assert!(log.contains("crashed by signal: 11"), "{log}");
            }
        }
    }
    /// A lower cap applies to new writes: what was stored under a higher one
    /// stays, reads of it are served, and so are calls that add nothing the
    /// cap bounds.
    fn a_lowered_cap_keeps_stored_keys(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        set(&mut con, "recipes.rate-sliding-max", "300000");
        let long_slug = "s".repeat(150);
        assert_eq!(
            int(&mut con, &["ARTICLE.CREATE", "{a}:1", "t", "c", "a", "SLUG", "{a}:s", &long_slug]),
            1
        );
        assert_eq!(decide(&mut con, &words(&limits("g8", 8))), [0, 5, 4, -1, 720_000]);
        assert_eq!(
            decide(&mut con, &["RATE.LIMIT", "w", "200000", "200000", "SLIDING"]),
            [0, 200_000, 199_999, -1, 200_000]
        );
        let long_entry = "长".repeat(200);
        assert_eq!(text(&value(&mut con, &["AUTOCOMPLETE.FEED", "ac", &long_entry, "2"])), "2");
        let stored = digest(&mut con);

        set(&mut con, "recipes.article-slug-max-chars", "100");
        set(&mut con, "recipes.rate-max-limits", "4");
        set(&mut con, "recipes.rate-sliding-max", "1000");
        set(&mut con, "recipes.autocomplete-max-chars", "100");
        assert_eq!(digest(&mut con), stored, "a setting changed stored data");

        // The long entry is hinted and weighed; feeding it is refused (its
        // content is over the cap), removing it is not.
        let hints: Vec<String> = cmd(&["AUTOCOMPLETE.HINT", "ac", "长"]).query(&mut con).unwrap();
        assert_eq!(hints, [long_entry.as_str()]);
        assert_eq!(text(&value(&mut con, &["AUTOCOMPLETE.WEIGHT", "ac", &long_entry])), "2");
        assert_eq!(
            error(&mut con, &cmd(&["AUTOCOMPLETE.FEED", "ac", &long_entry])),
            "ERR content must be at most 100 characters"
        );
        assert_eq!(digest(&mut con), stored);

        // The article keeps its slug and is found by it; a new long slug is
        // refused.
        let by_slug: String = cmd(&["ARTICLE.BYSLUG", "{a}:s", &long_slug]).query(&mut con).unwrap();
        assert_eq!(by_slug, "{a}:1");
        assert_eq!(
            error(&mut con, &cmd(&["ARTICLE.SETSLUG", "{a}:1", "{a}:s", &"t".repeat(150)])),
            "BADSLUG invalid slug: use 1 to 100 Unicode letters, digits, '-' or '_'"
        );
        // The 8-limit limiter is still served with its 8 limits; a new one is
        // refused.
        assert_eq!(decide(&mut con, &words(&limits("g8", 8)))[..4], [0, 5, 3, -1]);
        assert_eq!(
            error(&mut con, &cmd(&words(&limits("new", 8)))),
            "ERR too many limits in one call (at most 4)"
        );
        assert_eq!(int(&mut con, &["EXISTS", "new"]), 0);
        // The large window can be read, not grown past the new cap.
        let peek = reply(&mut con, &["RATE.PEEK", "w", "200000", "200000", "SLIDING"]).unwrap();
        let Value::Array(fields) = peek else { panic!("{peek:?}") };
        assert_eq!(fields[..3], [Value::Int(0), Value::Int(200_000), Value::Int(199_999)]);
        let window: Vec<u8> = cmd(&["GET", "w"]).query(&mut con).unwrap();
        assert_eq!(
            error(&mut con, &cmd(&["RATE.LIMIT", "w", "200000", "200000", "SLIDING"])),
            "ERR a SLIDING window's max must be at most 1000 when its period is over 1000 ms"
        );
        assert_eq!(cmd(&["GET", "w"]).query::<Vec<u8>>(&mut con).unwrap(), window);
    }

    /// A replica whose settings are lower than its primary's applies every
    /// write the primary accepted, and so does an AOF replayed under lower
    /// settings.
    fn replicas_and_aof_replay_follow_the_primary(flavor) {
        let pair = Replicated::start_with(flavor, &["--appendonly", "yes", "--appendfsync", "always"]);
        let mut replica = pair.replica.con();
        set(&mut replica, "recipes.article-slug-max-chars", "5");
        set(&mut replica, "recipes.rate-max-limits", "1");
        set(&mut replica, "recipes.rate-sliding-max", "10");
        set(&mut replica, "recipes.autocomplete-max-chars", "1");
        let mut con = pair.primary.con();
        set(&mut con, "recipes.rate-sliding-max", "300000");
        let long_slug = "l".repeat(150);
        let article = ["ARTICLE.CREATE", "{a}:1", "t", "c", "a", "SLUG", "{a}:s", "a-longer-slug"];
        assert_eq!(int(&mut con, &article), 1);
        assert_eq!(int(&mut con, &["ARTICLE.SETSLUG", "{a}:1", "{a}:s", &long_slug]), 1);
        assert_eq!(decide(&mut con, &words(&limits("g8", 8))), [0, 5, 4, -1, 720_000]);
        let window = ["RATE.LIMIT", "w", "200000", "200000", "SLIDING"];
        assert_eq!(
            decide(&mut con, &[&window[..], &["COST", "3"]].concat()),
            [0, 200_000, 199_997, -1, 200_000]
        );
        assert_eq!(decide(&mut con, &window)[..4], [0, 200_000, 199_996, -1]);
        let entry = "suggestion".repeat(25);
        assert_eq!(text(&value(&mut con, &["AUTOCOMPLETE.FEED", "ac", &entry, "PX", "600000"])), "1");
        assert_eq!(int(&mut con, &["AUTOCOMPLETE.SET", "ac", "两个字", "3"]), 1);
        let keys = ["{a}:1", "{a}:s", "g8", "w", "ac"];
        pair.sync();
        assert_eq!(values(&mut con, &keys), values(&mut replica, &keys));
        assert_eq!(
            cmd(&["ARTICLE.BYSLUG", "{a}:s", &long_slug]).query::<String>(&mut replica).unwrap(),
            "{a}:1"
        );

        // The primary's AOF, replayed by a server with the lowest settings.
        let before = values(&mut con, &keys);
        let aof = pair.primary.dir().join("appendonlydir");
        let replay = Server::start_prepared(
            flavor,
            &[
                "--appendonly", "yes",
                "--recipes.article-slug-max-chars", "1",
                "--recipes.rate-max-limits", "1",
                "--recipes.rate-sliding-max", "1",
                "--recipes.autocomplete-max-chars", "1",
            ],
            |dir| copy_tree(&aof, &dir.join("appendonlydir")),
        );
        assert_eq!(values(&mut replay.con(), &keys), before);
    }
}

//! NEARBY on real servers: NEARBY.RANDOM against GEOSEARCH on the same key,
//! uniform draws (chi-square), errors, replicas and cluster.

use crate::harness;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use harness::{cmd, error, int, text, value, Cluster, Replicated, Server, Value, WRONGTYPE};
use rand::{Rng, SeedableRng};

/// `count` random places within about `spread` degrees of (lon, lat), as
/// GEOADD arguments.
fn places(rng: &mut rand::rngs::StdRng, count: usize, lon: f64, lat: f64, spread: f64) -> Vec<String> {
    let mut words = Vec::new();
    for i in 0..count {
        let x = (lon + rng.random_range(-spread..spread)).clamp(-180.0, 180.0);
        let y = (lat + rng.random_range(-spread..spread)).clamp(-85.05, 85.05);
        words.extend([format!("{x:.6}"), format!("{y:.6}"), format!("p{i}")]);
    }
    words
}

fn geoadd(con: &mut redis::Connection, key: &str, words: &[String]) {
    for chunk in words.chunks(3 * 500) {
        let mut call = cmd(&["GEOADD", key]);
        for word in chunk {
            call.arg(word);
        }
        let _: i64 = call.query(con).unwrap();
    }
}

/// Member → distance text of a `… WITHDIST` array reply.
fn with_dist(reply: &Value) -> BTreeMap<String, String> {
    let Value::Array(items) = reply else {
        panic!("{reply:?}")
    };
    items
        .iter()
        .map(|item| match item {
            Value::Array(pair) if pair.len() == 2 => (text(&pair[0]), text(&pair[1])),
            other => panic!("{other:?}"),
        })
        .collect()
}

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

server_tests! {
    fn every_member_within_the_radius_is_drawn_as_geosearch_lists_it(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        // Around Paris, near the antimeridian, near the top of the map.
        for (key, lon, lat) in [("paris", 2.35, 48.85), ("dateline", 179.9, -10.0), ("north", 30.0, 84.9)] {
            geoadd(&mut con, key, &places(&mut rng, 3000, lon, lat, 0.5));
            for radius in ["0", "150 m", "2 km", "9 km", "30 km", "80 km", "3000 km", "25000 km"] {
                let (radius, unit) = match radius.split_once(' ') {
                    Some((r, u)) => (r, u),
                    None => (radius, "m"),
                };
                let from_lonlat = [format!("{lon}"), format!("{lat}")];
                for centre in [vec!["FROMMEMBER", "p17"], vec!["FROMLONLAT", &from_lonlat[0], &from_lonlat[1]]] {
                    let mut search = vec!["GEOSEARCH", key];
                    search.extend(&centre);
                    search.extend(["BYRADIUS", radius, unit, "WITHDIST"]);
                    let mut expected = with_dist(&value(&mut con, &search));
                    if centre[0] == "FROMMEMBER" {
                        expected.remove("p17");
                    }
                    let mut draw = vec!["NEARBY.RANDOM", key];
                    draw.extend(&centre);
                    draw.extend(["BYRADIUS", radius, unit, "COUNT", "100000", "WITHDIST"]);
                    let all = with_dist(&value(&mut con, &draw));
                    let mut drawn = all.clone();
                    // GEOSEARCH from near the antimeridian misses the members
                    // at longitude 180 exactly (stored past the last cell,
                    // scores of 2^52 and more); every other is the same.
                    drawn.retain(|member, _| {
                        let score: f64 = cmd(&["ZSCORE", key, member]).query(&mut con).unwrap();
                        expected.contains_key(member) || score < (1u64 << 52) as f64
                    });
                    assert_eq!(drawn, expected, "{key} {centre:?} {radius} {unit}");
                    // Without COUNT: one of them, or nil.
                    draw.truncate(draw.len() - 3);
                    match value(&mut con, &draw) {
                        Value::Nil => assert!(all.is_empty(), "{key} {radius}"),
                        one => assert!(all.contains_key(&text(&one)), "{one:?}"),
                    }
                }
            }
        }
    }

    fn draws_are_uniform_over_every_member_within_the_radius(flavor) {
        // 30 members within 1 km, the nearest of them at a few metres: the
        // recipe it replaces (GEOSEARCH … COUNT 10, pick one) never draws the
        // 20 farthest. 30,000 draws: each member expected 1,000 times.
        let server = Server::start(flavor);
        let mut con = server.con();
        let mut args = vec!["GEOADD".to_string(), "near".to_string(), "13.4".to_string(), "52.5".to_string(), "me".to_string()];
        for i in 0..30 {
            let lon = 13.4 + 0.0002 * (i as f64 + 1.0);
            args.extend([format!("{lon:.6}"), "52.5".to_string(), format!("u{i}")]);
        }
        // And some beyond the radius, never to be drawn.
        for i in 0..20 {
            args.extend([format!("{:.6}", 13.5 + 0.001 * i as f64), "52.5".to_string(), format!("far{i}")]);
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(int(&mut con, &argv), 51);
        let draws = 30_000;
        let mut pipe = redis::pipe();
        for _ in 0..draws {
            pipe.add_command(cmd(&words("NEARBY.RANDOM near FROMMEMBER me BYRADIUS 1 km")));
        }
        let drawn: Vec<String> = pipe.query(&mut con).unwrap();
        let mut counts: HashMap<String, u32> = HashMap::new();
        for member in drawn {
            *counts.entry(member).or_insert(0) += 1;
        }
        let names: BTreeSet<&String> = counts.keys().collect();
        let expected: BTreeSet<String> = (0..30).map(|i| format!("u{i}")).collect();
        assert_eq!(names, expected.iter().collect());
        let mean = draws as f64 / 30.0;
        let chi2: f64 = counts.values().map(|&n| (n as f64 - mean).powi(2) / mean).sum();
        // 29 degrees of freedom: P(chi2 > 80) < 1e-6, so this fails on a
        // uniform draw about once in a million runs.
        assert!(chi2 < 80.0, "chi2 {chi2}: {counts:?}");
    }

    fn count_draws_distinct_members_every_subset_alike(flavor) {
        // 5 members within the radius, COUNT 2: 10 pairs, each 1/10 of the draws.
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: i64 = cmd(&words("GEOADD five 0.0001 0 a 0.0002 0 b 0.0003 0 c 0.0004 0 d 0.0005 0 e"))
            .query(&mut con)
            .unwrap();
        let draws = 20_000;
        let mut pipe = redis::pipe();
        for _ in 0..draws {
            pipe.add_command(cmd(&words("NEARBY.RANDOM five FROMLONLAT 0 0 BYRADIUS 1 km COUNT 2")));
        }
        let drawn: Vec<Vec<String>> = pipe.query(&mut con).unwrap();
        let mut pairs: HashMap<Vec<String>, u32> = HashMap::new();
        let mut first: HashMap<String, u32> = HashMap::new();
        for mut pair in drawn {
            assert_eq!(pair.len(), 2);
            assert_ne!(pair[0], pair[1]);
            *first.entry(pair[0].clone()).or_insert(0) += 1;
            pair.sort();
            *pairs.entry(pair).or_insert(0) += 1;
        }
        assert_eq!(pairs.len(), 10);
        let mean = draws as f64 / 10.0;
        let chi2: f64 = pairs.values().map(|&n| (n as f64 - mean).powi(2) / mean).sum();
        // 9 degrees of freedom: P(chi2 > 45) < 1e-6.
        assert!(chi2 < 45.0, "chi2 {chi2}: {pairs:?}");
        // The order is random too: each member comes first a fifth of the time.
        let mean = draws as f64 / 5.0;
        let chi2: f64 = first.values().map(|&n| (n as f64 - mean).powi(2) / mean).sum();
        // 4 degrees of freedom: P(chi2 > 33) < 1e-6.
        assert!(chi2 < 33.0, "chi2 {chi2}: {first:?}");
        // COUNT above the members within: all of them.
        let all: Vec<String> = cmd(&words("NEARBY.RANDOM five FROMLONLAT 0 0 BYRADIUS 1 km COUNT 50")).query(&mut con).unwrap();
        assert_eq!(all.iter().collect::<BTreeSet<_>>(), ["a", "b", "c", "d", "e"].iter().map(|s| s.to_string()).collect::<Vec<_>>().iter().collect());
    }

    fn nobody_near_missing_keys_and_errors(flavor) {
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: i64 = cmd(&words("GEOADD sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania")).query(&mut con).unwrap();
        let _: i64 = cmd(&words("ZADD sicily 1.5 fraction -7 negative 5629499534213120 past")).query(&mut con).unwrap();
        let at_palermo = "NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS";
        // Nobody near: nil, or an empty array with COUNT.
        assert_eq!(value(&mut con, &words(&format!("{at_palermo} 10 km"))), Value::Nil);
        assert_eq!(value(&mut con, &words(&format!("{at_palermo} 10 km WITHDIST"))), Value::Nil);
        assert_eq!(value(&mut con, &words(&format!("{at_palermo} 10 km COUNT 3"))), Value::Array(vec![]));
        // A missing key: the same (as GEOSEARCH answers an empty array).
        assert_eq!(value(&mut con, &words("NEARBY.RANDOM none FROMMEMBER x BYRADIUS 10 km")), Value::Nil);
        assert_eq!(value(&mut con, &words("NEARBY.RANDOM none FROMLONLAT 1 2 BYRADIUS 10 km COUNT 1")), Value::Array(vec![]));
        // One neighbour; members a plain ZADD scored outside the geohashes
        // are never drawn ("fraction" is at the map's south-west corner).
        let one = value(&mut con, &words(&format!("{at_palermo} 200 km COUNT 10 WITHDIST")));
        assert_eq!(with_dist(&one), BTreeMap::from([("Catania".to_string(), "166.2742".to_string())]));
        let one = value(&mut con, &words("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 104 mi WITHDIST"));
        assert_eq!(with_dist(&Value::Array(vec![one])), BTreeMap::from([("Catania".to_string(), "103.3182".to_string())]));
        let everything = value(&mut con, &words("NEARBY.RANDOM sicily FROMLONLAT 0 0 BYRADIUS 40000 km COUNT 10"));
        let Value::Array(everything) = everything else { panic!() };
        assert_eq!(everything.iter().map(text).collect::<BTreeSet<_>>(), ["Catania", "Palermo", "fraction"].map(String::from).into());
        let cases = [
            ("NEARBY.RANDOM sicily FROMMEMBER Rome BYRADIUS 1 km", "NOPOSITION member 'Rome' has no position in the geo key"),
            ("NEARBY.RANDOM sicily FROMMEMBER negative BYRADIUS 1 km", "NOPOSITION member 'negative' has no position in the geo key"),
            ("NEARBY.RANDOM sicily FROMMEMBER past BYRADIUS 1 km", "NOPOSITION member 'past' has no position in the geo key"),
            ("NEARBY.RANDOM sicily BYRADIUS 1 km", "ERR exactly one of FROMMEMBER or FROMLONLAT is needed"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo FROMLONLAT 1 2 BYRADIUS 1 km", "ERR exactly one of FROMMEMBER or FROMLONLAT is needed"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo COUNT 2", "ERR BYRADIUS radius M|KM|FT|MI is needed"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS -1 km", "ERR radius must be a non-negative number"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS nan km", "ERR radius must be a non-negative number"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS inf km", "ERR radius must be a non-negative number"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 1 yd", "ERR unsupported unit provided. please use M, KM, FT, MI"),
            ("NEARBY.RANDOM sicily FROMLONLAT 181 0 BYRADIUS 1 km", "ERR invalid longitude,latitude pair 181,0"),
            ("NEARBY.RANDOM sicily FROMLONLAT 0 85.06 BYRADIUS 1 km", "ERR invalid longitude,latitude pair 0,85.06"),
            ("NEARBY.RANDOM sicily FROMLONLAT east 0 BYRADIUS 1 km", "ERR invalid longitude,latitude pair east,0"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 1 km COUNT 0", "ERR COUNT must be between 1 and 2147483647"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 1 km COUNT -1", "ERR COUNT must be between 1 and 2147483647"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 1 km COUNT x", "ERR value is not an integer or out of range"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 1 km WITHDIST WITHDIST", "ERR syntax error"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 1", "ERR syntax error"),
            ("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 1 km BYBOX 1 1 km", "ERR syntax error"),
        ];
        for (call, expected) in cases {
            assert_eq!(error(&mut con, &cmd(&words(call))), expected, "{call}");
        }
        let _: () = cmd(&["SET", "text", "x"]).query(&mut con).unwrap();
        assert_eq!(error(&mut con, &cmd(&words("NEARBY.RANDOM text FROMLONLAT 0 0 BYRADIUS 1 km"))), WRONGTYPE);
        assert_eq!(error(&mut con, &cmd(&words("NEARBY.RANDOM text FROMMEMBER x BYRADIUS 1 km"))), WRONGTYPE);
        // The key is what GEOADD made: every geo command still reads it.
        assert_eq!(int(&mut con, &["ZCARD", "sicily"]), 5);
        let dist: String = cmd(&words("GEODIST sicily Palermo Catania km")).query(&mut con).unwrap();
        assert_eq!(dist, "166.2742");
    }

    fn members_at_the_maps_edges_and_fractional_scores_have_positions(flavor) {
        // GEOADD stores longitude 180 and latitude 85.05112878 one cell past
        // the last (scores of 2^52 and more), and a fractional score is a
        // position too (GEOPOS and GEOSEARCH drop the fraction).
        let server = Server::start(flavor);
        let mut con = server.con();
        let _: i64 = cmd(&words("GEOADD edges 180 10 east 179.9999 10 near -180 10 west 20 85.05112878 top 20.001 85.05 below 180 85.05112878 corner"))
            .query(&mut con)
            .unwrap();
        assert_eq!(int(&mut con, &words("GEOADD edges 13.361389 38.115556 palermo")), 1);
        let score: String = cmd(&words("ZSCORE edges palermo")).query(&mut con).unwrap();
        let fraction = format!("{}.5", score);
        let _: i64 = cmd(&["ZADD", "edges", &fraction, "fraction"]).query(&mut con).unwrap();
        let draw = |con: &mut redis::Connection, call: &str| {
            with_dist(&value(con, &words(&format!("NEARBY.RANDOM edges {call} COUNT 100 WITHDIST"))))
        };
        let names = |pairs: BTreeMap<String, String>| pairs.into_keys().collect::<Vec<_>>();
        assert_eq!(names(draw(&mut con, "FROMMEMBER east BYRADIUS 1 km")), ["near", "west"]);
        assert_eq!(names(draw(&mut con, "FROMMEMBER west BYRADIUS 1 km")), ["east", "near"]);
        assert_eq!(names(draw(&mut con, "FROMLONLAT 179.9999 10 BYRADIUS 1 km")), ["east", "near", "west"]);
        assert_eq!(names(draw(&mut con, "FROMLONLAT -180 10 BYRADIUS 1 km")), ["east", "near", "west"]);
        assert_eq!(names(draw(&mut con, "FROMMEMBER top BYRADIUS 1 km")), ["below"]);
        assert_eq!(names(draw(&mut con, "FROMLONLAT 20 85.05 BYRADIUS 1 km")), ["below", "top"]);
        assert_eq!(names(draw(&mut con, "FROMMEMBER corner BYRADIUS 10 m")), Vec::<String>::new());
        assert_eq!(names(draw(&mut con, "FROMLONLAT -180 85.05112878 BYRADIUS 10 m")), ["corner"]);
        assert_eq!(names(draw(&mut con, "FROMMEMBER palermo BYRADIUS 1 m")), ["fraction"]);
        assert_eq!(names(draw(&mut con, "FROMMEMBER fraction BYRADIUS 1 m")), ["palermo"]);
        // Near the lowest latitude, GEOSEARCH misses members within the
        // radius (an empty answer here); they are drawn.
        let _: i64 = cmd(&words("GEOADD south -1.5213891863822937 -84.743242537578 a -0.016648471355438232 -83.45351304367736 b"))
            .query(&mut con)
            .unwrap();
        let south = "FROMLONLAT 0.5805360436264231 -84.8246420304544 BYRADIUS 585287.5339493902 m COUNT 9 WITHDIST";
        let drawn = with_dist(&value(&mut con, &words(&format!("NEARBY.RANDOM south {south}"))));
        assert_eq!(drawn, BTreeMap::from([("a".to_string(), "23100.5055".to_string()), ("b".to_string(), "152654.3035".to_string())]));
        // Their distances are GEODIST's.
        let dist: String = cmd(&words("GEODIST edges east west m")).query(&mut con).unwrap();
        assert_eq!(with_dist(&value(&mut con, &words("NEARBY.RANDOM edges FROMMEMBER east BYRADIUS 1 km COUNT 9 WITHDIST")))["west"], format!("{:.4}", dist.parse::<f64>().unwrap() / 1000.0));
    }

    fn a_read_replicates_nothing_and_runs_on_a_replica(flavor) {
        let pair = Replicated::start(flavor);
        let mut con = pair.primary.con();
        let _: i64 = cmd(&words("GEOADD sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania")).query(&mut con).unwrap();
        pair.sync();
        let offset = |con: &mut redis::Connection| {
            let info: String = cmd(&["INFO", "replication"]).query(con).unwrap();
            info.lines().find_map(|line| line.strip_prefix("master_repl_offset:")).unwrap().trim().to_string()
        };
        let before = offset(&mut con);
        for _ in 0..50 {
            let member: String = cmd(&words("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 200 km")).query(&mut con).unwrap();
            assert_eq!(member, "Catania");
        }
        let script = "return redis.call('NEARBY.RANDOM', KEYS[1], 'FROMMEMBER', 'Catania', 'BYRADIUS', '200', 'km')";
        assert_eq!(text(&value(&mut con, &["EVAL", script, "1", "sicily"])), "Palermo");
        assert_eq!(offset(&mut con), before);
        let mut replica = pair.replica.con();
        let member: String = cmd(&words("NEARBY.RANDOM sicily FROMMEMBER Palermo BYRADIUS 200 km")).query(&mut replica).unwrap();
        assert_eq!(member, "Catania");
    }

    fn cluster_routes_the_key_to_its_slot_owner(flavor) {
        let cluster = Cluster::start(flavor);
        let mut con = cluster.client();
        let mut nodes: Vec<_> = cluster.nodes.iter().map(|node| node.con()).collect();
        for i in 0..12 {
            let key = format!("places:{i}");
            let _: i64 = redis::cmd("GEOADD").arg(&key).arg("13.361389").arg("38.115556").arg("Palermo")
                .arg("15.087269").arg("37.502669").arg("Catania").query(&mut con).unwrap();
            let member: String = redis::cmd("NEARBY.RANDOM").arg(&key).arg("FROMMEMBER").arg("Palermo")
                .arg("BYRADIUS").arg("200").arg("km").query(&mut con).unwrap();
            assert_eq!(member, "Catania");
            let slot = int(&mut nodes[0], &["CLUSTER", "KEYSLOT", &key]).to_string();
            let owner = (0..nodes.len())
                .find(|&n| int(&mut nodes[n], &["CLUSTER", "COUNTKEYSINSLOT", &slot]) > 0)
                .unwrap();
            let other = (owner + 1) % nodes.len();
            let moved = error(&mut nodes[other], &cmd(&["NEARBY.RANDOM", &key, "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"]));
            assert_eq!(moved, cluster.moved(&key));
        }
    }
}

//! NEARBY without the server: the positions a geo key's scores encode, the
//! distance between two of them, the score ranges that cover a circle, and a
//! uniform draw of distinct members from a stream of candidates.
//!
//! A geo key (what `GEOADD` writes) is a sorted set whose score is a 52-bit
//! geohash: the latitude's 26 bits in the even bits, the longitude's in the
//! odd ones, each the position's offset in its range (−85.05112878…85.05112878
//! and −180…180) scaled to 2^26. A member's position is the centre of its
//! cell, and distances are the haversine on a sphere of the server's radius,
//! as `GEOSEARCH` computes them, so a member is within a radius here exactly
//! when `GEOSEARCH … BYRADIUS` lists it.
//!
//! A position at longitude 180 or latitude 85.05112878 exactly has the
//! offset 2^26, one past the last cell: `GEOADD` stores it so, with bit 53
//! (longitude) or bit 52 (latitude) set, and the server decodes it back to
//! that edge. So scores up to 2^54 are positions, and an edge's cells are
//! one column (or row) past the last.
//!
//! Cover: cells of a coarser step (a prefix of the geohash) are contiguous
//! score ranges. [`cover`] picks the finest step whose cells are at least a
//! quarter of the circle's bounding box on each side, so at most 5 × 5 cells
//! cover the box (at most 6.25 box areas, 8 circle areas, are scanned), plus
//! the edge's column or row when the box reaches longitude 180 or the top
//! latitude: the cost of a call grows with the members near the circle, not
//! with the key.

#![forbid(unsafe_code)]

/// The sphere's radius, in metres, the server's geo commands use.
pub const EARTH_RADIUS_M: f64 = 6_372_797.560_856;
/// The latitudes a geohash spans (the Web Mercator limits).
pub const LAT_MIN: f64 = -85.051_128_78;
pub const LAT_MAX: f64 = 85.051_128_78;
pub const LON_MIN: f64 = -180.0;
pub const LON_MAX: f64 = 180.0;
/// Bits a coordinate has in a full geohash.
const STEP: u32 = 26;
/// Scores of positions are below this: a full geohash is below 2^52, and
/// one at the map's edge (longitude 180, latitude 85.05112878) has bit 52
/// or 53 set.
pub const SCORE_END: f64 = (1u64 << (2 * STEP + 2)) as f64;

/// A position: longitude and latitude in degrees.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub lon: f64,
    pub lat: f64,
}

/// The units a radius or a distance is given in, as the server's geo
/// commands name them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unit {
    M,
    Km,
    Ft,
    Mi,
}

impl Unit {
    /// The unit named `word` (any case), if it is one.
    pub fn parse(word: &[u8]) -> Option<Unit> {
        [
            (&b"m"[..], Unit::M),
            (b"km", Unit::Km),
            (b"ft", Unit::Ft),
            (b"mi", Unit::Mi),
        ]
        .into_iter()
        .find(|(name, _)| word.eq_ignore_ascii_case(name))
        .map(|(_, unit)| unit)
    }

    /// Metres in one of this unit (the server's factors).
    pub fn metres(self) -> f64 {
        match self {
            Unit::M => 1.0,
            Unit::Km => 1000.0,
            Unit::Ft => 0.3048,
            Unit::Mi => 1609.34,
        }
    }
}

impl Point {
    /// A position a client gave, if `GEOADD` would take it.
    pub fn checked(lon: f64, lat: f64) -> Option<Point> {
        let valid = (LON_MIN..=LON_MAX).contains(&lon) && (LAT_MIN..=LAT_MAX).contains(&lat);
        valid.then_some(Point { lon, lat })
    }

    /// The position a score encodes (its cell's centre, within the map), as
    /// the server decodes it: its integer part's bits, for a score in
    /// 0 ≤ score < 2^54 (a fraction is dropped, as the server's cast does).
    /// Another score (a plain `ZADD`'s: negative, larger, or with an offset
    /// past the edge cell, which no cover holds) has no position.
    pub fn from_score(score: f64) -> Option<Point> {
        if !(0.0..SCORE_END).contains(&score) {
            return None;
        }
        let hash = score as u64;
        let (lat, lon) = (squash(hash), squash(hash >> 1));
        if lat > 1 << STEP || lon > 1 << STEP {
            return None;
        }
        let lat = cell_centre(lat, LAT_MIN, LAT_MAX);
        let lon = cell_centre(lon, LON_MIN, LON_MAX);
        Some(Point {
            lon: lon.clamp(LON_MIN, LON_MAX),
            lat: lat.clamp(LAT_MIN, LAT_MAX),
        })
    }

    /// The full geohash of this position, as `GEOADD` stores it (the map's
    /// top and east edges one cell past the last).
    #[cfg(test)]
    pub fn score(self) -> f64 {
        let cells = (1u64 << STEP) as f64;
        let lat = ((self.lat - LAT_MIN) / (LAT_MAX - LAT_MIN) * cells) as u32;
        let lon = ((self.lon - LON_MIN) / (LON_MAX - LON_MIN) * cells) as u32;
        (spread(lat) | spread(lon) << 1) as f64
    }

    /// The distance to `other` in metres: the haversine, as the server's.
    pub fn distance(self, other: Point) -> f64 {
        let (lat1, lat2) = (self.lat.to_radians(), other.lat.to_radians());
        let v = ((other.lon.to_radians() - self.lon.to_radians()) / 2.0).sin();
        if v == 0.0 {
            // On one meridian: the arc between the latitudes.
            return EARTH_RADIUS_M * (lat2 - lat1).abs();
        }
        let u = ((lat2 - lat1) / 2.0).sin();
        let a = u * u + lat1.cos() * lat2.cos() * v * v;
        2.0 * EARTH_RADIUS_M * a.sqrt().asin()
    }
}

/// The centre of cell `index` of 2^26 in `min..max`.
fn cell_centre(index: u32, min: f64, max: f64) -> f64 {
    let cells = (1u64 << STEP) as f64;
    let low = min + (index as f64 / cells) * (max - min);
    let high = min + ((index as f64 + 1.0) / cells) * (max - min);
    (low + high) / 2.0
}

/// The cell of `value` among 2^bits cells of `min..max` (the last cell
/// includes `max`).
fn offset(value: f64, min: f64, max: f64, bits: u32) -> u32 {
    let cells = 1u64 << bits;
    let at = ((value - min) / (max - min) * cells as f64) as u64;
    at.min(cells - 1) as u32
}

/// The bits of `x` moved to the even bits of the result.
fn spread(x: u32) -> u64 {
    let mut x = x as u64;
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// The even bits of `x`, packed (the inverse of [`spread`]).
fn squash(x: u64) -> u32 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    ((x | (x >> 16)) & 0x0000_0000_FFFF_FFFF) as u32
}

/// The score ranges (`start..end`, start included) whose members include
/// every member within `radius` metres of `centre`: at most 36, sorted and
/// not overlapping.
pub fn cover(centre: Point, radius: f64) -> Vec<(f64, f64)> {
    let angle = radius / EARTH_RADIUS_M;
    let lat_low = (centre.lat - angle.to_degrees()).max(LAT_MIN);
    let lat_high = (centre.lat + angle.to_degrees()).min(LAT_MAX);
    // How far in longitude the circle reaches: all of it once it holds a pole.
    let reach = angle.sin() / centre.lat.to_radians().cos();
    let lon_span = if angle >= std::f64::consts::FRAC_PI_2 || !(0.0..1.0).contains(&reach) {
        None
    } else {
        // A hair wider than the circle, for the rounding of the trigonometry.
        Some(reach.asin().to_degrees() * (1.0 + 1e-9) + 1e-9)
    };
    let lat_margin = 1e-9;
    let (lat_low, lat_high) = (
        (lat_low - lat_margin).max(LAT_MIN),
        (lat_high + lat_margin).min(LAT_MAX),
    );
    let box_lat = lat_high - lat_low;
    let box_lon = lon_span.map_or(LON_MAX - LON_MIN, |span| 2.0 * span);
    // The finest step whose cells are at least a quarter of the box.
    let mut step = STEP;
    while step > 0 {
        let cells = (1u64 << step) as f64;
        let cell_lat = (LAT_MAX - LAT_MIN) / cells;
        let cell_lon = (LON_MAX - LON_MIN) / cells;
        if cell_lat * 4.0 >= box_lat && cell_lon * 4.0 >= box_lon {
            break;
        }
        step -= 1;
    }
    let cells = 1i64 << step;
    // The row past the last holds the positions at the top latitude.
    let lat_last = match lat_high >= LAT_MAX {
        true => cells as u32,
        false => offset(lat_high, LAT_MIN, LAT_MAX, step),
    };
    let lat_cells = offset(lat_low, LAT_MIN, LAT_MAX, step)..=lat_last;
    let lon_cells: Vec<u32> = match lon_span {
        Some(span) if 2.0 * span < LON_MAX - LON_MIN => {
            let at = |lon: f64| ((lon - LON_MIN) / (LON_MAX - LON_MIN) * cells as f64).floor() as i64;
            let (first, last) = (at(centre.lon - span), at(centre.lon + span));
            let mut lon_cells: Vec<u32> = (first..=last.min(first + cells - 1))
                .map(|cell| cell.rem_euclid(cells) as u32)
                .collect();
            // The column past the last holds the positions at longitude 180.
            if centre.lon + span >= LON_MAX || centre.lon - span <= LON_MIN {
                lon_cells.push(cells as u32);
            }
            lon_cells.sort_unstable();
            lon_cells.dedup();
            lon_cells
        }
        _ => (0..=cells as u32).collect(),
    };
    let shift = 2 * (STEP - step);
    let mut ranges: Vec<(f64, f64)> = Vec::with_capacity(lat_cells.clone().count() * lon_cells.len());
    for lat in lat_cells {
        for &lon in &lon_cells {
            let cell = spread(lat) | spread(lon) << 1;
            // From 2^53 a score is even: widen each end to one, so that a
            // score whose integer is in the cell is in the range.
            ranges.push((((cell << shift) & !1) as f64, ((((cell + 1) << shift) + 1) & !1) as f64));
        }
    }
    ranges.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    // Neighbouring cells that are adjacent (or, widened, overlap) in score
    // are one range: no member is scanned twice.
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(ranges.len());
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if last.1 >= start => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// A small, fast generator (xoshiro256**), seeded from the server's random
/// bytes: draws need to be uniform, not secret.
pub struct Rng([u64; 4]);

impl Rng {
    /// A generator from 32 seed bytes (not all zero: zero is made one).
    pub fn from_seed(seed: [u8; 32]) -> Rng {
        let mut state = [0u64; 4];
        for (word, bytes) in state.iter_mut().zip(seed.chunks_exact(8)) {
            let mut eight = [0u8; 8];
            eight.copy_from_slice(bytes);
            *word = u64::from_le_bytes(eight);
        }
        if state == [0; 4] {
            state[0] = 1;
        }
        Rng(state)
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (n ≥ 1), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }
}

/// A uniform draw of up to `wanted` distinct items from a stream of unknown
/// length (reservoir sampling): after `offer`ing every candidate, each
/// `wanted`-subset of them is equally likely, in a uniformly random order.
/// Memory: `wanted` items at most, whatever the stream's length.
pub struct Reservoir<T> {
    wanted: usize,
    seen: u64,
    kept: Vec<T>,
}

impl<T> Reservoir<T> {
    pub fn new(wanted: usize) -> Self {
        Reservoir {
            wanted,
            seen: 0,
            kept: Vec::new(),
        }
    }

    /// Offers one candidate; `make` builds the item only when it is kept.
    pub fn offer(&mut self, rng: &mut Rng, make: impl FnOnce() -> T) {
        self.seen += 1;
        if self.kept.len() < self.wanted {
            self.kept.push(make());
            return;
        }
        let at = rng.below(self.seen);
        if let Some(slot) = usize::try_from(at).ok().and_then(|at| self.kept.get_mut(at)) {
            *slot = make();
        }
    }

    /// The items kept, shuffled (Fisher–Yates): the order is uniform too.
    pub fn into_items(mut self, rng: &mut Rng) -> Vec<T> {
        for last in (1..self.kept.len()).rev() {
            let other = rng.below(last as u64 + 1) as usize;
            self.kept.swap(last, other);
        }
        self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: u8) -> Rng {
        Rng::from_seed([seed; 32])
    }

    fn random_point(rng: &mut Rng) -> Point {
        let unit = |rng: &mut Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        Point {
            lon: LON_MIN + unit(rng) * (LON_MAX - LON_MIN),
            lat: LAT_MIN + unit(rng) * (LAT_MAX - LAT_MIN),
        }
    }

    #[test]
    fn a_score_decodes_to_within_a_cell_of_its_position() {
        let mut rng = rng(1);
        for _ in 0..10_000 {
            let point = random_point(&mut rng);
            let back = Point::from_score(point.score()).unwrap();
            assert!((back.lon - point.lon).abs() < 360.0 / (1u64 << 26) as f64);
            assert!((back.lat - point.lat).abs() < 171.0 / (1u64 << 26) as f64);
            assert_eq!(back.score(), point.score());
        }
    }

    #[test]
    fn scores_that_are_not_geohashes_have_no_position() {
        for score in [-1.0, -0.5, SCORE_END, 1e300, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(Point::from_score(score), None, "{score}");
        }
        assert!(Point::from_score(0.0).is_some());
        assert!(Point::from_score((3u64 << 52) as f64).is_some());
        // Past the edge cell (a plain ZADD's: offsets above 2^26, which the
        // cover's edge row and column do not hold): no position.
        assert_eq!(Point::from_score((1u64 << 52 | 1u64 << 50) as f64), None);
        assert_eq!(Point::from_score((1u64 << 53 | 1u64 << 51) as f64), None);
        assert!(Point::from_score((1u64 << 52 | 1u64 << 53) as f64).is_some());
        // A fraction is dropped, as the server's cast does (GEOPOS agrees).
        assert_eq!(Point::from_score(12345.75), Point::from_score(12345.0));
    }

    #[test]
    fn the_maps_edges_are_positions_past_the_last_cell() {
        // GEOADD's scores for longitude 180 and latitude 85.05112878 (the
        // server's ZSCORE), and the positions GEOPOS gives for them.
        let east = Point { lon: 180.0, lat: 10.0 };
        assert_eq!(east.score(), 10138940401276180.0);
        let top = Point { lon: 20.0, lat: LAT_MAX };
        assert_eq!(top.score(), 6766947132407976.0);
        let corner = Point { lon: LON_MAX, lat: LAT_MAX };
        for point in [east, top, corner] {
            let back = Point::from_score(point.score()).unwrap();
            assert!((back.lon - point.lon).abs() < 1e-5 && (back.lat - point.lat).abs() < 1e-5, "{back:?}");
        }
        assert_eq!(Point::from_score(corner.score()), Some(corner));
        // Each is in the cover of a circle around a point near it, from
        // either side of the antimeridian, whatever the radius.
        for (point, near) in [
            (east, Point { lon: 179.9999, lat: 10.0 }),
            (east, Point { lon: -179.9999, lat: 10.0 }),
            (east, Point { lon: 180.0, lat: 10.0 }),
            (top, Point { lon: 20.0, lat: 85.05 }),
            (corner, Point { lon: -179.9999, lat: 85.0511 }),
        ] {
            for radius in [50.0, 1_000.0, 100_000.0, 3_000_000.0, 30_000_000.0] {
                let decoded = Point::from_score(point.score()).unwrap();
                if near.distance(decoded) > radius {
                    continue;
                }
                let score = point.score();
                let ranges = cover(near, radius);
                assert!(ranges.iter().any(|&(s, e)| s <= score && score < e), "{point:?} {near:?} {radius}");
            }
        }
    }

    #[test]
    fn the_distance_is_the_servers_haversine() {
        // GEODIST of Palermo and Catania (the server's documentation): 166274.1516 m.
        let palermo = Point::from_score(Point { lon: 13.361389, lat: 38.115556 }.score()).unwrap();
        let catania = Point::from_score(Point { lon: 15.087269, lat: 37.502669 }.score()).unwrap();
        assert_eq!(format!("{:.4}", palermo.distance(catania)), "166274.1516");
        assert_eq!(palermo.distance(palermo), 0.0);
    }

    #[test]
    fn the_cover_holds_every_point_within_the_radius() {
        let mut rng = rng(2);
        for round in 0..400 {
            let centre = random_point(&mut rng);
            let radius = [1.0, 150.0, 5_000.0, 300_000.0, 3_000_000.0, 30_000_000.0][round % 6];
            let ranges = cover(centre, radius);
            assert!(!ranges.is_empty() && ranges.len() <= 36, "{}", ranges.len());
            assert!(ranges.windows(2).all(|w| w[0].1 < w[1].0));
            // Points near the circle's edge and inside it: each in a range.
            for _ in 0..200 {
                let bearing = (rng.next_u64() % 3600) as f64 / 10.0;
                let fraction = 0.5 + (rng.next_u64() % 1000) as f64 / 2000.0;
                let point = destination(centre, bearing, radius * fraction);
                let Some(point) = Point::checked(point.lon, point.lat) else {
                    continue;
                };
                let decoded = Point::from_score(point.score()).unwrap();
                if centre.distance(decoded) > radius {
                    continue;
                }
                let score = point.score();
                assert!(
                    ranges.iter().any(|&(start, end)| start <= score && score < end),
                    "{centre:?} r={radius} misses {point:?}"
                );
            }
        }
    }

    #[test]
    fn a_small_radius_scans_a_small_area() {
        let centre = Point { lon: 2.35, lat: 48.85 };
        let ranges = cover(centre, 1000.0);
        let scanned: f64 = ranges.iter().map(|(start, end)| end - start).sum();
        // A step-26 cell is about 0.6 m × 0.3 m: scores per square metre ≈ 5.
        // The box is 2 km × 2 km; at most 6.25 boxes are scanned.
        assert!(scanned < 6.25 * 4.0e6 * 6.0, "{scanned}");
    }

    #[test]
    fn the_cover_wraps_around_the_antimeridian_and_holds_the_poles() {
        let east = Point { lon: 179.9999, lat: 0.0 };
        let west = Point::from_score(Point { lon: -179.9999, lat: 0.0 }.score()).unwrap();
        assert!(east.distance(west) < 50.0);
        let ranges = cover(east, 50.0);
        let score = Point { lon: -179.9999, lat: 0.0 }.score();
        assert!(ranges.iter().any(|&(s, e)| s <= score && score < e));
        // Across the pole: 10 degrees of latitude apart, about 1,112 km.
        let north = Point { lon: 10.0, lat: 85.0 };
        let other = Point::from_score(Point { lon: -170.0, lat: 85.0 }.score()).unwrap();
        assert!(north.distance(other) < 1_200_000.0);
        let ranges = cover(north, 1_200_000.0);
        let score = other.score();
        assert!(ranges.iter().any(|&(s, e)| s <= score && score < e));
    }

    /// Where a great-circle path of `metres` from `from` at `bearing`
    /// degrees ends.
    fn destination(from: Point, bearing: f64, metres: f64) -> Point {
        let (lat1, lon1) = (from.lat.to_radians(), from.lon.to_radians());
        let (d, b) = (metres / EARTH_RADIUS_M, bearing.to_radians());
        let lat2 = (lat1.sin() * d.cos() + lat1.cos() * d.sin() * b.cos()).asin();
        let lon2 = lon1 + (b.sin() * d.sin() * lat1.cos()).atan2(d.cos() - lat1.sin() * lat2.sin());
        let lon = (lon2.to_degrees() + 540.0).rem_euclid(360.0) - 180.0;
        Point { lon, lat: lat2.to_degrees() }
    }

    #[test]
    fn units_are_the_servers() {
        assert_eq!(Unit::parse(b"KM"), Some(Unit::Km));
        assert_eq!(Unit::parse(b"mi"), Some(Unit::Mi));
        assert_eq!(Unit::parse(b"Ft").map(Unit::metres), Some(0.3048));
        assert_eq!(Unit::parse(b"yd"), None);
        assert_eq!(Unit::parse(b""), None);
    }

    #[test]
    fn the_reservoir_draws_every_subset_alike() {
        // 5 candidates, 2 drawn: 10 subsets, each 1/10 of 100,000 draws.
        let mut rng = rng(3);
        let mut counts = std::collections::HashMap::new();
        let draws = 100_000;
        for _ in 0..draws {
            let mut reservoir = Reservoir::new(2);
            for item in 0..5u8 {
                reservoir.offer(&mut rng, || item);
            }
            let mut items = reservoir.into_items(&mut rng);
            items.sort_unstable();
            *counts.entry(items).or_insert(0u32) += 1;
        }
        assert_eq!(counts.len(), 10);
        let expected = draws as f64 / 10.0;
        let chi2: f64 = counts
            .values()
            .map(|&n| (n as f64 - expected).powi(2) / expected)
            .sum();
        // 9 degrees of freedom: P(chi2 > 33.7) < 1e-4; the seed is fixed.
        assert!(chi2 < 33.7, "{chi2}");
    }

    #[test]
    fn the_reservoir_keeps_at_most_what_is_wanted_and_everything_below() {
        let mut rng = rng(4);
        let mut reservoir = Reservoir::new(3);
        for item in 0..2 {
            reservoir.offer(&mut rng, || item);
        }
        let mut items = reservoir.into_items(&mut rng);
        items.sort_unstable();
        assert_eq!(items, vec![0, 1]);
        let mut reservoir = Reservoir::new(3);
        let mut made = 0;
        for item in 0..1000 {
            reservoir.offer(&mut rng, || {
                made += 1;
                item
            });
        }
        assert_eq!(reservoir.into_items(&mut rng).len(), 3);
        // Expected 3 + 3·(H(1000) − H(3)) ≈ 18 items made, not 1000.
        assert!(made < 60, "{made}");
    }

    #[test]
    fn below_is_uniform_and_in_range() {
        let mut rng = rng(5);
        let mut counts = [0u32; 3];
        for _ in 0..30_000 {
            counts[rng.below(3) as usize] += 1;
        }
        assert!(counts.iter().all(|&n| (9_500..10_500).contains(&n)), "{counts:?}");
        assert_eq!(rng.below(1), 0);
    }
}

//! What the server's allocator hands out, for the `MEMORY USAGE` of the
//! module's data types.
#![forbid(unsafe_code)]

/// The bytes the server's allocator hands out for a request of `size`
/// bytes (none for none): jemalloc's size classes, as Redis and Valkey are
/// built by default: 8, 16, then steps of 16 up to 128, then four classes
/// between each power of two and the next (160, 192, 224, 256, 320, …).
/// A server built on glibc malloc instead gives at least 24 bytes, then
/// the request plus 8 rounded to 16, less 8.
pub fn block(size: usize) -> usize {
    match size {
        0 => 0,
        1..=8 => 8,
        9..=128 => size.next_multiple_of(16),
        _ => {
            // Classes between 2^k and 2^(k+1) are 2^(k-2) apart.
            let log2 = (size - 1).ilog2();
            size.next_multiple_of(1 << (log2 - 2))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_rounded_to_the_allocators_size_classes() {
        for (size, class) in [
            (0, 0),
            (1, 8),
            (8, 8),
            (9, 16),
            (17, 32),
            (33, 48),
            (100, 112),
            (128, 128),
            (129, 160),
            (256, 256),
            (257, 320),
            (280, 320),
            (456, 512),
            (552, 640),
            (1025, 1280),
            (4097, 5120),
        ] {
            assert_eq!(block(size), class, "{size}");
        }
    }
}

//! Forged `DUMP` payloads of the module's data types (what a hostile `RESTORE` sends).

/// One field of a forged module value: what `RedisModule_SaveUnsigned` or
/// `RedisModule_SaveStringBuffer` wrote.
pub enum Field<'a> {
    Num(u64),
    Bytes(&'a [u8]),
}

/// A `DUMP` payload of the module type `template` (a real `DUMP` of it) holds,
/// with `fields` as its stored form under encoding version `encver`, and a
/// valid checksum: what a hostile `RESTORE` sends.
pub fn forge(template: &[u8], fields: &[Field], encver: u64) -> Vec<u8> {
    // Type byte, then the 64-bit module ID (0x81 + 8 bytes, big-endian)
    // whose low 10 bits are the encoding version.
    let mut out = template[..2].to_vec();
    let id = u64::from_be_bytes(template[2..10].try_into().unwrap());
    out.extend_from_slice(&((id & !1023) | encver).to_be_bytes());
    for field in fields {
        match field {
            Field::Num(value) => {
                out.push(2); // an unsigned integer
                out.push(0x81); // a 64-bit length encoding
                out.extend_from_slice(&value.to_be_bytes());
            }
            Field::Bytes(bytes) => {
                out.push(5); // a string
                out.push(0x80); // a 32-bit length encoding
                out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
                out.extend_from_slice(bytes);
            }
        }
    }
    out.push(0); // end of the module value
    out.extend_from_slice(&template[template.len() - 10..template.len() - 8]);
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// CRC-64/Jones, as Redis checksums `DUMP` payloads (check value:
/// `crc64(b"123456789") == 0xe9c6_d914_c4b8_d9ca`, tested in
/// `tests/idpool.rs`).
pub fn crc64(bytes: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut crc = 0u64;
    for &byte in bytes {
        crc ^= u64::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

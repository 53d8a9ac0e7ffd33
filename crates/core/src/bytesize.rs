//! Byte counts as people write them: `64MiB`, `20MB`, `1.5KiB`, `900`;
//! other counts with thousands separators (`1,234,567`).

use std::str::FromStr;

/// A byte count written with a unit (`32MiB`), or `0`; where a count must
/// be positive, the setting that takes it says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl FromStr for Bytes {
    type Err = String;
    fn from_str(s: &str) -> Result<Bytes, String> {
        if s.trim() == "0" {
            return Ok(Bytes(0));
        }
        parse_bytes(s).map(Bytes)
    }
}

/// `n` with thousands separators: `1,234,567`.
pub fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Parse a byte count with an optional unit (case-insensitive, fractions allowed:
/// `1.5MiB`).
pub(crate) fn parse_bytes(s: &str) -> Result<u64, String> {
    parse_bytes_or(s, "64MiB or 20MB")
}

/// `parse_bytes`, naming `examples` of what is expected when `s` is not
/// a number (a setting that also takes words names them).
pub fn parse_bytes_or(s: &str, examples: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("invalid size '{s}' (expected e.g. {examples})"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "k" => 1_000,
        "mb" | "m" => 1_000_000,
        "gb" | "g" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => {
            return Err(format!(
                "invalid size unit in '{s}' (B, KB, MB, GB, KiB, MiB, GiB)"
            ));
        }
    };
    let bytes = value * mult as f64;
    if !(1.0..=1e15).contains(&bytes) {
        return Err(format!("size '{s}' out of range"));
    }
    Ok(bytes.round() as u64)
}

/// The shortest exact spelling of a byte count: `64MiB`, `20MB`, `1234B`.
pub fn format_bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 6] = [
        (1 << 30, "GiB"),
        (1_000_000_000, "GB"),
        (1 << 20, "MiB"),
        (1_000_000, "MB"),
        (1 << 10, "KiB"),
        (1_000, "KB"),
    ];
    for (m, u) in UNITS {
        if n >= m && n.is_multiple_of(m) {
            return format!("{}{u}", n / m);
        }
    }
    format!("{n}B")
}

/// A byte count for reading, to three digits: `50.4KiB`, `512MiB`, `900B`.
pub fn approx_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n}B");
    }
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 999.5 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    match v {
        v if v < 9.995 => format!("{v:.2}{}", UNITS[unit]),
        v if v < 99.95 => format!("{v:.1}{}", UNITS[unit]),
        v => format!("{v:.0}{}", UNITS[unit]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print_exactly() {
        let b = |s: &str| parse_bytes(s).unwrap();
        assert_eq!(b("64MiB"), 64 << 20);
        assert_eq!(b("20MB"), 20_000_000);
        assert_eq!(b("512kib"), 512 << 10);
        assert_eq!(b("1.5KiB"), 1536);
        assert_eq!(b(" 900 "), 900);
        for bad in ["12 parsecs", "", "0", "MiB", "1e3", "2000000GB"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
        for n in [64u64 << 20, 20_000_000, 1536, 900, 3 << 30, 1] {
            assert_eq!(b(&format_bytes(n)), n);
        }
        assert_eq!(format_bytes(64 << 20), "64MiB");
        assert_eq!(format_bytes(20_000_000), "20MB");
        assert_eq!(format_bytes(1234), "1234B");
        assert_eq!("1MiB".parse::<Bytes>(), Ok(Bytes(1 << 20)));
        // Nothing at all is a count, but not a size (table sizes use parse_bytes).
        assert_eq!(" 0 ".parse::<Bytes>(), Ok(Bytes(0)));
        assert!("0MiB".parse::<Bytes>().is_err());
        let a: Vec<String> = [900, 51_659, 1 << 20, 512 << 20, 1_000_000_000, 5 << 40]
            .map(approx_bytes)
            .to_vec();
        assert_eq!(
            a,
            ["900B", "50.4KiB", "1.00MiB", "512MiB", "954MiB", "5.00TiB"]
        );
    }
}

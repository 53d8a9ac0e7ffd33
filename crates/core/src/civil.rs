//! Civil (calendar) dates of times, in UTC: how answers show when a file
//! changed or a commit was written, with no time-zone data to ship.

/// `YYYY-MM-DD HH:MM` (UTC) of a time in nanoseconds since the epoch.
pub fn date_time(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let (days, s) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Days to a civil date (Hinnant's algorithm), in the proleptic
    // Gregorian calendar.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}",
        s / 3600,
        s / 60 % 60
    )
}

/// `YYYY-MM-DD` (UTC) of a time in seconds since the epoch.
pub fn date(secs: i64) -> String {
    let mut d = date_time(secs.saturating_mul(1_000_000_000));
    d.truncate(10);
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_time_is_the_utc_civil_date() {
        assert_eq!(date_time(0), "1970-01-01 00:00");
        assert_eq!(date_time(951_782_400_000_000_000), "2000-02-29 00:00");
        assert_eq!(date_time(1_795_690_435_665_717_649), "2026-11-26 10:53");
        assert_eq!(date_time(-60_000_000_000), "1969-12-31 23:59");
    }

    #[test]
    fn date_is_the_day_of_date_time() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(1_577_836_800), "2020-01-01");
        assert_eq!(date(-1), "1969-12-31");
    }
}

//! The table's state as bytes (the snapshot's payload): what a re-open needs
//! to continue exactly where the last run stopped. Only what the table holds
//! is written: a bucket's entries are its first `fill` slots (a full bucket's
//! all), so the bytes follow the entries held, not the table's capacity, but
//! for a fill count a bucket.

use std::io::{self, Read, Write};

use super::*;

/// The table's state as bytes, for the index's snapshot file (which adds its
/// own header and checksum). Little-endian: the counters; then the random
/// state, the bucket count, the shift (u64; the live buckets follow from
/// the two) and every live bucket's fill word as in memory; then, of the
/// occupied slots in bucket order, the fingerprints' low parts, their high
/// halves, the rest of their records, their scores and, while the table
/// grows, their whole-table buckets (u32), an array each.
impl Table {
    /// Write the whole state: counters, then the bucket arrays (or the map).
    pub fn write_state(&self, w: &mut impl Write) -> io::Result<()> {
        self.write_counters(w)?;
        match &self.store {
            Store::Bucketed(b) => write_buckets(w, b),
            Store::Unbounded(map) => {
                w.write_all(&(map.len() as u64).to_le_bytes())?;
                let mut entries: Vec<(&u64, &Hit)> = map.iter().collect();
                entries.sort_unstable_by_key(|e| *e.0);
                for (k, h) in entries {
                    w.write_all(&k.to_le_bytes())?;
                    w.write_all(&h.origin.to_le_bytes())?;
                    w.write_all(&[h.offset, h.prev, h.next])?;
                }
                Ok(())
            }
        }
    }

    fn write_counters(&self, w: &mut impl Write) -> io::Result<()> {
        let c = self.counters;
        for v in [c.lookups, c.hits, c.inserts, c.evictions, c.occupied] {
            w.write_all(&v.to_le_bytes())?;
        }
        Ok(())
    }

    fn read_counters(&mut self, r: &mut impl Read) -> io::Result<()> {
        self.counters = Counters::read(r)?;
        Ok(())
    }

    /// What changed since the state was last written, read or
    /// [`Table::clear_changes`]: the counters, the random state, the shift,
    /// then the changed buckets' numbers (u32), their fill words and their
    /// entries' arrays as [`Table::write_state`] lays them out. False
    /// (nothing written) for an unbounded table, which is only ever written
    /// whole, and for a table that grew since (its buckets are renumbered).
    pub fn write_changes(&self, w: &mut impl Write) -> io::Result<bool> {
        let Store::Bucketed(b) = &self.store else {
            return Ok(false);
        };
        if b.grew {
            return Ok(false);
        }
        self.write_counters(w)?;
        w.write_all(&b.rng.to_le_bytes())?;
        w.write_all(&u64::from(b.shift).to_le_bytes())?;
        let changed: Vec<u32> = b
            .changed
            .iter()
            .enumerate()
            .flat_map(|(i, &word)| {
                (0..64)
                    .filter(move |bit| word & (1 << bit) != 0)
                    .map(move |bit| (i * 64 + bit) as u32)
            })
            .collect();
        w.write_all(&(changed.len() as u64).to_le_bytes())?;
        write_le(w, &changed, |x| x.to_le_bytes())?;
        let fills: Vec<u16> = changed.iter().map(|&c| b.fill[c as usize]).collect();
        write_le(w, &fills, |x| x.to_le_bytes())?;
        let slots = changed.iter().flat_map(|&c| b.slots_of(c as usize));
        write_entries(w, b, slots)?;
        Ok(true)
    }

    /// Forget which buckets changed (their state has been written).
    pub fn clear_changes(&mut self) {
        if let Store::Bucketed(b) = &mut self.store {
            b.changed.fill(0);
            b.grew = false;
        }
    }

    /// Apply [`Table::write_changes`]'s bytes to this table (the state they
    /// were written after). Fails (`InvalidData`) on bytes that do not fit.
    pub fn apply_changes(&mut self, r: &mut impl Read) -> io::Result<()> {
        let bad = |what: &str| {
            io::Error::new(io::ErrorKind::InvalidData, format!("table changes: {what}"))
        };
        // The state before held this many; the changed buckets' new fills
        // make what the new counters must say (no walk of every bucket).
        let mut occupied = self.counters.occupied;
        self.read_counters(r)?;
        let Store::Bucketed(b) = &mut self.store else {
            return Err(bad("of a bounded table"));
        };
        b.rng = read_u64(r)?;
        if read_u64(r)? != u64::from(b.shift) {
            return Err(bad("of a table grown otherwise"));
        }
        let n = usize::try_from(read_u64(r)?).map_err(|_| bad("bucket count"))?;
        if n > b.live {
            return Err(bad("more buckets than the table has"));
        }
        let mut changed = vec![0u32; n];
        read_le(r, &mut changed, u32::from_le_bytes)?;
        let mut fills = vec![0u16; n];
        read_le(r, &mut fills, u16::from_le_bytes)?;
        for (&c, &f) in changed.iter().zip(&fills) {
            if c as usize >= b.live || usize::from(f) >= b.fill_limit() {
                return Err(bad("bucket out of range"));
            }
            occupied -= b.len(c as usize) as u64;
            b.fill[c as usize] = f;
            occupied += b.len(c as usize) as u64;
        }
        let slots: Vec<usize> = changed
            .iter()
            .flat_map(|&c| b.slots_of(c as usize))
            .collect();
        read_entries(r, b, slots.into_iter())?;
        if occupied != self.counters.occupied {
            return Err(bad("occupancy differs from the counters"));
        }
        Ok(())
    }

    /// Rebuild a table of `params` from [`Table::write_state`]'s bytes. Fails
    /// (`InvalidData`) when the bytes do not fit these parameters.
    pub fn read_state(params: TableParams, r: &mut impl Read) -> io::Result<Table> {
        let mut t =
            Table::new(params).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        t.read_counters(r)?;
        let bad =
            |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("table state: {what}"));
        match &mut t.store {
            Store::Bucketed(b) => read_buckets(r, b, t.counters.occupied)?,
            Store::Unbounded(map) => {
                let n = read_u64(r)?;
                if n != t.counters.occupied {
                    return Err(bad("occupancy differs from the counters"));
                }
                map.reserve(n as usize);
                for _ in 0..n {
                    let k = read_u64(r)?;
                    let mut o = [0u8; 4];
                    r.read_exact(&mut o)?;
                    let mut rest = [0u8; 3];
                    r.read_exact(&mut rest)?;
                    map.insert(
                        k,
                        Hit {
                            origin: u32::from_le_bytes(o),
                            offset: rest[0],
                            prev: rest[1],
                            next: rest[2],
                        },
                    );
                }
            }
        }
        Ok(t)
    }
}

impl Counters {
    /// The counters [`Table::write_state`] and [`Table::write_changes`]
    /// begin with: a table's, read without the rest.
    pub fn read(r: &mut impl Read) -> io::Result<Counters> {
        let mut c = [0u64; 5];
        for v in &mut c {
            *v = read_u64(r)?;
        }
        Ok(Counters {
            lookups: c[0],
            hits: c[1],
            inserts: c[2],
            evictions: c[3],
            occupied: c[4],
        })
    }
}

/// A bucketed store's part of [`Table::write_state`] (after the counters):
/// shared with a shard's state (`Shard::write_state`).
pub(super) fn write_buckets(w: &mut impl Write, b: &Buckets) -> io::Result<()> {
    w.write_all(&b.rng.to_le_bytes())?;
    w.write_all(&(b.n_buckets as u64).to_le_bytes())?;
    w.write_all(&u64::from(b.shift).to_le_bytes())?;
    write_le(w, &b.fill[..b.live], |x| x.to_le_bytes())?;
    write_entries(w, b, b.occupied_slots())
}

/// [`write_buckets`]' bytes into `b`, fresh at its first shift, which must
/// hold `occupied` entries (the counters' word).
pub(super) fn read_buckets(r: &mut impl Read, b: &mut Buckets, occupied: u64) -> io::Result<()> {
    let bad =
        |what: &str| io::Error::new(io::ErrorKind::InvalidData, format!("table state: {what}"));
    b.rng = read_u64(r)?;
    if read_u64(r)? != b.n_buckets as u64 {
        return Err(bad("bucket count differs"));
    }
    // Any shift from the table's first one down: it only grows.
    let shift = read_u64(r)?;
    if shift > u64::from(b.shift) {
        return Err(bad("shift out of range"));
    }
    b.set_shift(shift as u32);
    read_le(r, &mut b.fill[..b.live], u16::from_le_bytes)?;
    if b.fill[..b.live]
        .iter()
        .any(|&f| usize::from(f) >= b.fill_limit())
    {
        return Err(bad("bucket state out of range"));
    }
    let held: u64 = (0..b.live).map(|i| b.len(i) as u64).sum();
    if held != occupied {
        return Err(bad("occupancy differs from the counters"));
    }
    let fill = std::mem::take(&mut b.fill);
    let slots = buckets::occupied(&fill[..b.live], b.per);
    let read = read_entries(r, b, slots);
    b.fill = fill;
    read
}

/// Entries a column is written or read by at a time: the arrays are as long
/// as the table is full, and no whole copy of one is made.
const CHUNK: usize = 4096;

/// The entries at `slots` as the format's arrays: the fingerprints' low
/// parts (which live in the records; the format keeps them an array of their
/// own), their high halves, the rest of their records, their scores, their
/// whole-table buckets.
fn write_entries(
    w: &mut impl Write,
    b: &Buckets,
    slots: impl Iterator<Item = usize> + Clone,
) -> io::Result<()> {
    let (lw, rw) = (b.lo_width, b.rec_width);
    let rec = |at: usize| &b.rec[at * rw..(at + 1) * rw];
    write_column(w, slots.clone(), lw, |at, out| {
        out.extend_from_slice(&rec(at)[..lw])
    })?;
    write_column(w, slots.clone(), 2, |at, out| {
        out.extend_from_slice(&b.hi[at].to_le_bytes())
    })?;
    write_column(w, slots.clone(), rw - lw, |at, out| {
        out.extend_from_slice(&rec(at)[lw..])
    })?;
    if !b.score.is_empty() {
        write_column(w, slots.clone(), 1, |at, out| out.push(b.score[at]))?;
    }
    if !b.home.is_empty() {
        write_column(w, slots, 4, |at, out| {
            out.extend_from_slice(&b.home[at].to_le_bytes())
        })?;
    }
    Ok(())
}

/// One array of `width` bytes an entry, `CHUNK` entries at a time.
fn write_column(
    w: &mut impl Write,
    slots: impl Iterator<Item = usize>,
    width: usize,
    mut put: impl FnMut(usize, &mut Vec<u8>),
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(CHUNK * width);
    for at in slots {
        put(at, &mut buf);
        if buf.len() >= CHUNK * width {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)
}

/// The inverse of [`write_entries`]: the entries into `slots`. Fails on a
/// whole-table bucket outside the live bucket of its slot.
fn read_entries(
    r: &mut impl Read,
    b: &mut Buckets,
    slots: impl Iterator<Item = usize> + Clone,
) -> io::Result<()> {
    let (lw, rw) = (b.lo_width, b.rec_width);
    read_column(r, slots.clone(), lw, |at, x| {
        b.rec[at * rw..at * rw + lw].copy_from_slice(x);
        Ok(())
    })?;
    read_column(r, slots.clone(), 2, |at, x| {
        b.hi[at] = u16::from_le_bytes([x[0], x[1]]);
        Ok(())
    })?;
    read_column(r, slots.clone(), rw - lw, |at, x| {
        b.rec[at * rw + lw..(at + 1) * rw].copy_from_slice(x);
        Ok(())
    })?;
    if !b.score.is_empty() {
        read_column(r, slots.clone(), 1, |at, x| {
            b.score[at] = x[0];
            Ok(())
        })?;
    }
    if !b.home.is_empty() {
        let (shift, per, n_buckets) = (b.shift, b.per, b.n_buckets);
        read_column(r, slots, 4, |at, x| {
            let h = u32::from_le_bytes([x[0], x[1], x[2], x[3]]);
            if h as usize >> shift != at / per || h as usize >= n_buckets {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "table state: an entry outside its bucket",
                ));
            }
            b.home[at] = h;
            Ok(())
        })?;
    }
    Ok(())
}

/// The inverse of [`write_column`].
fn read_column(
    r: &mut impl Read,
    mut slots: impl Iterator<Item = usize>,
    width: usize,
    mut take: impl FnMut(usize, &[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let mut buf = vec![0u8; CHUNK * width];
    let mut chunk = Vec::with_capacity(CHUNK);
    loop {
        chunk.clear();
        chunk.extend(slots.by_ref().take(CHUNK));
        if chunk.is_empty() {
            return Ok(());
        }
        let bytes = &mut buf[..chunk.len() * width];
        r.read_exact(bytes)?;
        for (&at, x) in chunk.iter().zip(bytes.chunks_exact(width)) {
            take(at, x)?;
        }
    }
}

fn write_le<T: Copy, const N: usize>(
    w: &mut impl Write,
    v: &[T],
    f: impl Fn(T) -> [u8; N],
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(v.len() * N);
    for &x in v {
        buf.extend_from_slice(&f(x));
    }
    w.write_all(&buf)
}

fn read_le<T, const N: usize>(
    r: &mut impl Read,
    v: &mut [T],
    f: impl Fn([u8; N]) -> T,
) -> io::Result<()> {
    let mut buf = vec![0u8; v.len() * N];
    r.read_exact(&mut buf)?;
    for (x, b) in v.iter_mut().zip(buf.chunks_exact(N)) {
        *x = f(b.try_into().expect("N bytes"));
    }
    Ok(())
}

fn read_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

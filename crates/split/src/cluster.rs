//! Many processes, on one machine or many: their connections, made before
//! timely takes them over, and what a lost process says.
//!
//! timely's own set-up retries forever and prints to standard output, where
//! process 0 writes its report, so lineage connects the processes itself:
//! process `i` listens on its own `host:port`, connects to every earlier
//! process and accepts every later one, each pair first trading a hello
//! (the format's name, the process's number, the number of processes, a
//! check every process must share: the settings and the list of files, and
//! which of the pair's two connections it opens, and, for a resumed run, the
//! epochs it holds checkpoints of: [`crate::resume`]), within a deadline.
//! The first connection goes to timely as it is; the second carries
//! heartbeats.
//!
//! timely sends nothing while its workers wait (a process reading a large
//! file, or process 0 writing to a slow reader), so silence on its
//! connection is no sign of a stopped process, and a read timeout there
//! would cut a long run. Instead a thread of each process writes a byte on
//! every heartbeat connection a few times within the progress timeout, and
//! a thread reads each one: a process that sends nothing for the whole
//! timeout (stopped with SIGSTOP, its machine or network gone) is lost, and
//! its timely connection is shut down, so that every thread waiting on it
//! wakes and the run ends with one line naming it.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Mutex, Once, PoisonError};
use std::time::{Duration, Instant};

use timely::communication::Hooks;
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};

use super::SplitError;
use crate::resume::{self, Held, Point};

/// The processes of a run, and this one's place among them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// Every process's `host:port`, process 0 first (timely's host file:
    /// one a line).
    pub hosts: Vec<String>,
    /// This process's number: its line in `hosts`.
    pub process: usize,
    /// What every process must agree on (a hash of the settings and of the
    /// files walked): a process that differs is refused at the start.
    pub check: u64,
    /// How long to wait for the other processes to come up.
    pub wait: Duration,
    /// How long another process may send no heartbeat before it is taken
    /// for lost (stopped, or its machine or network down).
    pub progress_timeout: Duration,
}

impl Cluster {
    /// The hosts of a host file's text: one `host:port` a line; blank lines
    /// and `#` comments are left out. A `host:port` named twice is refused:
    /// the second process could not listen there, and the first would wait
    /// for it.
    pub fn parse_hosts(text: &str) -> Result<Vec<String>, String> {
        // (line number, host:port)
        let lines: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .map(|(n, l)| (n + 1, l.split('#').next().unwrap_or("").trim()))
            .filter(|(_, l)| !l.is_empty())
            .collect();
        for (i, &(n, h)) in lines.iter().enumerate() {
            if h.rsplit_once(':')
                .is_none_or(|(host, port)| host.is_empty() || port.parse::<u16>().is_err())
            {
                return Err(format!("line {n} (process {i}), {h:?}: expected host:port"));
            }
            if let Some((j, &(m, _))) = (lines.iter().enumerate())
                .take(i)
                .find(|(_, (_, other))| other.eq_ignore_ascii_case(h))
            {
                return Err(format!(
                    "line {n} (process {i}), {h:?}: the same host:port as line {m} (process {j}); every process needs its own"
                ));
            }
        }
        if lines.is_empty() {
            return Err("no hosts (one host:port a line)".into());
        }
        Ok(lines.into_iter().map(|(_, h)| h.to_string()).collect())
    }
}

/// The first bytes of every hello: the format of the connection.
const MAGIC: &[u8; 16] = b"lineage-split/3\0";
/// The fixed part: the magic, then process, processes, check, channel and
/// the first word of the epochs held, which says how many words follow.
const HELLO: usize = 16 + 5 * 8;

/// Which of a pair's two connections a hello opens: timely's, then the
/// heartbeats'.
const DATA: u64 = 0;
const BEAT: u64 = 1;

/// How a process says who it is.
#[derive(Clone, PartialEq, Eq, Debug)]
struct Hello {
    process: u64,
    processes: u64,
    check: u64,
    channel: u64,
    /// The epochs it holds, as [`Held::words`] writes them.
    held: Vec<u64>,
}

impl Hello {
    fn bytes(&self) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        for w in [self.process, self.processes, self.check, self.channel] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        for w in &self.held {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b
    }

    fn read(s: &mut TcpStream) -> io::Result<Option<Hello>> {
        let mut b = [0u8; HELLO];
        s.read_exact(&mut b)?;
        if &b[..16] != MAGIC {
            return Ok(None);
        }
        let word = |b: &[u8], at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(w)
        };
        let first = word(&b, 48);
        let Some(after) = Held::words_after(first) else {
            return Ok(None);
        };
        let mut rest = vec![0u8; 8 * after];
        s.read_exact(&mut rest)?;
        let mut held = vec![first];
        held.extend((0..after).map(|i| word(&rest, 8 * i)));
        Ok(Some(Hello {
            process: word(&b, 16),
            processes: word(&b, 24),
            check: word(&b, 32),
            channel: word(&b, 40),
            held,
        })
        .filter(|h| h.channel <= BEAT && Held::of_words(&h.held).is_some()))
    }
}

/// Why a cluster could not form.
fn refused(c: &Cluster, other: usize, why: impl std::fmt::Display) -> SplitError {
    SplitError::Connect(format!(
        "process {other} ({}): {why}",
        c.hosts.get(other).map_or("?", String::as_str)
    ))
}

/// Check the hello `got` from process `from` against this process's.
fn agree(c: &Cluster, from: usize, got: Option<&Hello>) -> Result<(), SplitError> {
    let Some(got) = got else {
        return Err(refused(c, from, "not a lineage process of this version"));
    };
    if got.processes != c.hosts.len() as u64 {
        return Err(refused(
            c,
            from,
            format!(
                "its host file has {} processes, this one's {}",
                got.processes,
                c.hosts.len()
            ),
        ));
    }
    if got.check != c.check {
        return Err(refused(
            c,
            from,
            "other settings or other files (paths, sizes or modification times) than this process's: start every process with the same ROOT, files (copied with their times: rsync -a, cp -p) and settings",
        ));
    }
    Ok(())
}

/// Each other process's two connections: timely's and the heartbeats'.
struct Pair {
    data: TcpStream,
    beat: TcpStream,
}

/// Connect this process to every other one, or say which could not be
/// reached in time; what every process holds (this one's is `held`).
fn connect(c: &Cluster, held: &Held) -> Result<(Vec<Option<Pair>>, Vec<Held>), SplitError> {
    let (me, n) = (c.process, c.hosts.len());
    let mine = |channel| Hello {
        process: me as u64,
        processes: n as u64,
        check: c.check,
        channel,
        held: held.words(),
    };
    let mut helds = vec![Held::Any; n];
    helds[me] = held.clone();
    let mut heard = |h: Option<Hello>| {
        if let Some(h) = h.filter(|h| h.channel == DATA)
            && let Some(held) = Held::of_words(&h.held)
        {
            helds[h.process as usize] = held;
        }
    };
    let deadline = Instant::now() + c.wait;
    let left = || deadline.saturating_duration_since(Instant::now());
    let listener = TcpListener::bind(&c.hosts[me])
        .map_err(|e| refused(c, me, format!("cannot listen (this process): {e}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| refused(c, me, e))?;
    // [timely's, the heartbeats'] connection of each other process.
    let mut sockets: Vec<[Option<TcpStream>; 2]> = (0..n).map(|_| [None, None]).collect();
    // Every earlier process listens: connect to each, twice, until the
    // deadline.
    for (i, pair) in sockets.iter_mut().enumerate().take(me) {
        let addrs: Vec<SocketAddr> = c.hosts[i]
            .to_socket_addrs()
            .map_err(|e| refused(c, i, format!("no such address: {e}")))?
            .collect();
        for channel in [DATA, BEAT] {
            let mut last = String::from("no address");
            let stream = 'tries: loop {
                for a in &addrs {
                    let tries = left().clamp(Duration::from_millis(1), Duration::from_secs(1));
                    match TcpStream::connect_timeout(a, tries) {
                        Ok(s) => break 'tries s,
                        Err(e) => last = e.to_string(),
                    }
                }
                if left().is_zero() {
                    return Err(refused(
                        c,
                        i,
                        format!(
                            "not reached in {} s ({last}): is it started, with this host file?",
                            c.wait.as_secs()
                        ),
                    ));
                }
                std::thread::sleep(Duration::from_millis(100).min(left()));
            };
            let mut s = stream;
            let hello = (|| {
                s.set_read_timeout(Some(left().max(Duration::from_millis(1))))?;
                s.write_all(&mine(channel).bytes())?;
                Hello::read(&mut s)
            })()
            .map_err(|e| refused(c, i, format!("no hello: {e}")))?;
            agree(c, i, hello.as_ref())?;
            if (hello.as_ref()).is_some_and(|h| h.channel != channel || h.process != i as u64) {
                return Err(refused(c, i, "not the process its host file names"));
            }
            heard(hello);
            pair[channel as usize] = Some(started(c, i, s, channel)?);
        }
    }
    // Every later process connects here, twice.
    while let Some(missing) = (me + 1..n).find(|&i| sockets[i].iter().any(Option::is_none)) {
        match listener.accept() {
            Ok((mut s, _)) => {
                s.set_nonblocking(false).map_err(|e| refused(c, me, e))?;
                // A stray connection that says nothing waits 5 s at most.
                let hello_wait = left().clamp(Duration::from_millis(1), Duration::from_secs(5));
                s.set_read_timeout(Some(hello_wait))
                    .map_err(|e| refused(c, me, e))?;
                // A stray connection (a port scan, a process of another
                // run) is left out, unless it says it is of this run.
                let Ok(hello) = Hello::read(&mut s) else {
                    continue;
                };
                let (from, channel) = (hello.as_ref())
                    .map_or((usize::MAX, DATA), |h| (h.process as usize, h.channel));
                if from <= me || from >= n || sockets[from][channel as usize].is_some() {
                    continue;
                }
                // Answered first, so that both ends say what differs.
                s.write_all(&mine(channel).bytes())
                    .map_err(|e| refused(c, from, format!("no hello: {e}")))?;
                agree(c, from, hello.as_ref())?;
                heard(hello);
                sockets[from][channel as usize] = Some(started(c, from, s, channel)?);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if left().is_zero() {
                    return Err(refused(
                        c,
                        missing,
                        format!(
                            "did not connect in {} s: is it started, with this host file?",
                            c.wait.as_secs()
                        ),
                    ));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(refused(c, me, format!("cannot accept: {e}"))),
        }
    }
    let pairs = sockets
        .into_iter()
        .map(|[data, beat]| {
            Some(Pair {
                data: data?,
                beat: beat?,
            })
        })
        .collect();
    Ok((pairs, helds))
}

/// A connection agreed on, set for its use: timely's blocks on reads (a
/// process that stops answering is found by the heartbeats, not here);
/// the heartbeats' starts beating at once, so that a process still waiting
/// for others to connect is not taken for lost by those it has.
fn started(c: &Cluster, other: usize, s: TcpStream, channel: u64) -> Result<TcpStream, SplitError> {
    let set = || -> io::Result<()> {
        s.set_nodelay(true)?;
        keepalive(&s)?;
        if channel == DATA {
            s.set_read_timeout(None)
        } else {
            s.set_read_timeout(Some(c.progress_timeout))?;
            s.set_write_timeout(Some(c.progress_timeout))?;
            let beats = s.try_clone()?;
            let every = beat_interval(c.progress_timeout);
            std::thread::Builder::new()
                .name(format!("lineage:beat-to-{other}"))
                .spawn(move || beat(beats, every))
                .map(drop)
        }
    };
    set().map_err(|e| refused(c, other, e))?;
    Ok(s)
}

/// How often a heartbeat goes: several times within the timeout, so that a
/// late one or two (a busy machine) do not end the run.
fn beat_interval(timeout: Duration) -> Duration {
    (timeout / 5).clamp(Duration::from_millis(10), Duration::from_secs(1))
}

/// Write a heartbeat every `every` until the connection goes (the other
/// process ended, or this one is ending).
fn beat(mut s: TcpStream, every: Duration) {
    while s.write_all(&[0]).is_ok() {
        std::thread::sleep(every);
    }
}

/// Read the heartbeats of process `other`; where none comes for the whole
/// progress timeout, it is lost, and its timely connection `data` is shut
/// down so that every thread waiting on it wakes. A closed connection is
/// the other process's end: what it means is the timely connection's to
/// say.
fn listen(c: &Cluster, other: usize, mut beats: TcpStream, data: TcpStream) {
    let mut buf = [0u8; 256];
    loop {
        match beats.read(&mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                LOST.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get_or_insert((other, stopped_answering(c.progress_timeout)));
                let _ = data.shutdown(Shutdown::Both);
                return;
            }
            Err(_) => return,
        }
    }
}

/// What a process that sent nothing for `timeout` is, in words.
fn stopped_answering(timeout: Duration) -> String {
    format!(
        "stopped answering within {} s (--progress-timeout): stopped, or its machine or network is down",
        timeout.as_secs_f64()
    )
}

/// TCP keepalive on `s`: a connection to a machine that vanished errs in
/// the end instead of waiting forever, even where no heartbeat reads it
/// (timely's, once the heartbeats' has closed).
#[cfg(unix)]
#[allow(unsafe_code)]
fn keepalive(s: &TcpStream) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: the descriptor is the open socket `s` holds, and the option's
    // value is a c_int that lives across the call, its size given.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_KEEPALIVE,
            (&raw const on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn keepalive(_: &TcpStream) -> io::Result<()> {
    Ok(())
}

/// timely's allocators for `threads` workers of this process, over the
/// connections to every other one; what holds their network threads.
pub(crate) type Allocators = (Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>);

/// [`Allocators`] for `threads` workers of this process, and the epoch
/// every process continues from (this one holds `held`): the newest all
/// of them hold ([`resume::newest_common`]).
pub(crate) fn allocators(
    c: &Cluster,
    threads: usize,
    held: &Held,
) -> Result<(Allocators, Point), SplitError> {
    let (pairs, helds) = connect(c, held)?;
    let name = |i: usize| {
        let host = c.hosts.get(i).map_or("?", String::as_str);
        format!("process {i} ({host})")
    };
    // Every process has every hello: each finds the same epoch, or fails
    // with the same line.
    let from = resume::newest_common(&helds, &name).map_err(SplitError::Resume)?;
    name_losses(c.progress_timeout);
    let mut sockets = Vec::with_capacity(pairs.len());
    for (i, pair) in pairs.into_iter().enumerate() {
        let Some(Pair { data, beat }) = pair else {
            sockets.push(None);
            continue;
        };
        let shut = data.try_clone().map_err(|e| refused(c, i, e))?;
        let cluster = c.clone();
        std::thread::Builder::new()
            .name(format!("lineage:beat-from-{i}"))
            .spawn(move || listen(&cluster, i, beat, shut))
            .map_err(|e| refused(c, c.process, e))?;
        sockets.push(Some(data));
    }
    let hooks = Hooks::default();
    let local =
        ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) =
        initialize_networking_from_sockets(local, sockets, c.process, threads, hooks)
            .map_err(|e| SplitError::Connect(e.to_string()))?;
    let builders = builders.into_iter().map(AllocatorBuilder::Tcp).collect();
    Ok(((builders, Box::new(guard)), from))
}

/// The first connection lost: the process at its other end, and why.
static LOST: Mutex<Option<(usize, String)>> = Mutex::new(None);

/// Which process was lost, if a connection was, in words.
pub(crate) fn lost(c: &Cluster) -> Option<String> {
    let lost = LOST.lock().unwrap_or_else(PoisonError::into_inner);
    lost.as_ref().map(|(i, why)| {
        format!(
            "lost process {i} ({}): {why}; a run over many processes has no fault tolerance: start every process again (with --resume to go on from the last checkpoint, where they had --checkpoint-dir)",
            c.hosts.get(*i).map_or("?", String::as_str)
        )
    })
}

/// A lost connection panics timely's network thread for it ("timely
/// communication error"), and then every worker reading from it: the first
/// such panic is kept (the thread's name says the process at the other end)
/// and the rest are not printed, so the run ends on one line naming the
/// process instead of a page of panics.
///
/// A read or write that timed out (a socket's timeout, keepalive) is said
/// as a process that stopped answering, not as an errno.
fn name_losses(timeout: Duration) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let before = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let name = std::thread::current().name().map(str::to_string);
            let text = info
                .payload()
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| info.payload().downcast_ref::<&str>().copied())
                .unwrap_or("");
            let remote = name.as_deref().and_then(|n| {
                n.strip_prefix("timely:recv-")
                    .or_else(|| n.strip_prefix("timely:send-"))
                    .and_then(|i| i.parse::<usize>().ok())
            });
            let mut lost = LOST.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(i) = remote {
                let why = text.trim_start_matches("timely communication error: ");
                let timed_out = ["timed out", "temporarily unavailable", "would block"]
                    .iter()
                    .any(|t| why.to_ascii_lowercase().contains(t));
                let why = if timed_out {
                    stopped_answering(timeout)
                } else {
                    why.to_string()
                };
                lost.get_or_insert((i, why));
                return;
            }
            if lost.is_some() {
                // A worker stopping because the connection was lost.
                return;
            }
            drop(lost);
            before(info);
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::Cluster;

    #[test]
    fn a_host_file_is_one_host_and_port_a_line() {
        let hosts = Cluster::parse_hosts("# the run\nlocalhost:7000\n\n  10.0.0.2:7000 # second\n")
            .unwrap();
        assert_eq!(hosts, ["localhost:7000", "10.0.0.2:7000"]);
        assert!(Cluster::parse_hosts("").is_err());
        assert!(
            Cluster::parse_hosts("localhost")
                .unwrap_err()
                .contains("process 0")
        );
        assert!(
            Cluster::parse_hosts("a:1\nb:99999")
                .unwrap_err()
                .contains("process 1")
        );
    }

    /// The same host:port twice would leave the second process unable to
    /// listen and the first waiting for it: refused by both, at once, with
    /// the lines named.
    #[test]
    fn a_host_named_twice_is_refused() {
        let e = Cluster::parse_hosts(
            "# run
a:7000
b:7000

A:7000
",
        )
        .unwrap_err();
        assert!(
            e.contains("line 5 (process 2)") && e.contains("line 2 (process 0)"),
            "{e}"
        );
        assert!(
            Cluster::parse_hosts(
                "a:7000
a:7001
b:7000
"
            )
            .is_ok()
        );
    }

    /// A heartbeat goes several times within the timeout, never so often
    /// that it costs anything.
    #[test]
    fn heartbeats_go_several_times_a_timeout() {
        use std::time::Duration;
        let every = super::beat_interval(Duration::from_secs(2));
        assert!(every * 4 <= Duration::from_secs(2), "{every:?}");
        assert_eq!(
            super::beat_interval(Duration::from_secs(600)),
            Duration::from_secs(1)
        );
        assert!(super::beat_interval(Duration::from_millis(1)) >= Duration::from_millis(10));
    }
}

//! Many processes, on one machine or many: their connections, made before
//! timely takes them over, and what a lost process says.
//!
//! timely's own set-up retries forever and prints to standard output, where
//! process 0 writes its report, so lineage connects the processes itself:
//! process `i` listens on its own `host:port`, connects to every earlier
//! process and accepts every later one, each pair first trading a hello
//! (the format's name, the process's number, the number of processes and a
//! check every process must share: the settings and the list of files),
//! within a deadline. The connected sockets go to timely as they are.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::{Mutex, Once, PoisonError};
use std::time::{Duration, Instant};

use timely::communication::Hooks;
use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};

use super::SplitError;

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
}

impl Cluster {
    /// The hosts of a host file's text: one `host:port` a line; blank lines
    /// and `#` comments are left out.
    pub fn parse_hosts(text: &str) -> Result<Vec<String>, String> {
        let hosts: Vec<String> = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        for (i, h) in hosts.iter().enumerate() {
            if h.rsplit_once(':')
                .is_none_or(|(host, port)| host.is_empty() || port.parse::<u16>().is_err())
            {
                return Err(format!("line for process {i}, {h:?}: expected host:port"));
            }
        }
        if hosts.is_empty() {
            return Err("no hosts (one host:port a line)".into());
        }
        Ok(hosts)
    }
}

/// The first bytes of every hello: the format of the connection.
const MAGIC: &[u8; 16] = b"lineage-split/1\0";
const HELLO: usize = 16 + 3 * 8;

/// How a process says who it is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Hello {
    process: u64,
    processes: u64,
    check: u64,
}

impl Hello {
    fn bytes(self) -> [u8; HELLO] {
        let mut b = [0u8; HELLO];
        b[..16].copy_from_slice(MAGIC);
        b[16..24].copy_from_slice(&self.process.to_le_bytes());
        b[24..32].copy_from_slice(&self.processes.to_le_bytes());
        b[32..40].copy_from_slice(&self.check.to_le_bytes());
        b
    }

    fn read(s: &mut TcpStream) -> io::Result<Option<Hello>> {
        let mut b = [0u8; HELLO];
        s.read_exact(&mut b)?;
        if &b[..16] != MAGIC {
            return Ok(None);
        }
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(w)
        };
        Ok(Some(Hello {
            process: word(16),
            processes: word(24),
            check: word(32),
        }))
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
fn agree(c: &Cluster, from: usize, got: Option<Hello>) -> Result<(), SplitError> {
    let Some(got) = got else {
        return Err(refused(c, from, "not a lineage process"));
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
            "other settings or another list of files than this process's: every process needs the same ROOT, files and settings",
        ));
    }
    Ok(())
}

/// Connect this process to every other one, or say which could not be
/// reached in time.
fn connect(c: &Cluster) -> Result<Vec<Option<TcpStream>>, SplitError> {
    let (me, n) = (c.process, c.hosts.len());
    let mine = Hello {
        process: me as u64,
        processes: n as u64,
        check: c.check,
    };
    let deadline = Instant::now() + c.wait;
    let left = || deadline.saturating_duration_since(Instant::now());
    let listener = TcpListener::bind(&c.hosts[me])
        .map_err(|e| refused(c, me, format!("cannot listen (this process): {e}")))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| refused(c, me, e))?;
    let mut sockets: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
    // Every earlier process listens: connect to each, until the deadline.
    for (i, socket) in sockets.iter_mut().enumerate().take(me) {
        let addrs: Vec<SocketAddr> = c.hosts[i]
            .to_socket_addrs()
            .map_err(|e| refused(c, i, format!("no such address: {e}")))?
            .collect();
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
            s.write_all(&mine.bytes())?;
            Hello::read(&mut s)
        })()
        .map_err(|e| refused(c, i, format!("no hello: {e}")))?;
        agree(c, i, hello)?;
        *socket = Some(s);
    }
    // Every later process connects here.
    while let Some(missing) = (me + 1..n).find(|&i| sockets[i].is_none()) {
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
                let from = hello.map_or(usize::MAX, |h| h.process as usize);
                if from <= me || from >= n || sockets[from].is_some() {
                    continue;
                }
                // Answered first, so that both ends say what differs.
                s.write_all(&mine.bytes())
                    .map_err(|e| refused(c, from, format!("no hello: {e}")))?;
                agree(c, from, hello)?;
                sockets[from] = Some(s);
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
    for s in sockets.iter_mut().flatten() {
        s.set_read_timeout(None).map_err(|e| refused(c, me, e))?;
        s.set_nodelay(true).map_err(|e| refused(c, me, e))?;
    }
    Ok(sockets)
}

/// timely's allocators for `threads` workers of this process, over the
/// connections to every other one; what holds their network threads.
pub(crate) fn allocators(
    c: &Cluster,
    threads: usize,
) -> Result<(Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>), SplitError> {
    let sockets = connect(c)?;
    name_losses();
    let hooks = Hooks::default();
    let local =
        ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) =
        initialize_networking_from_sockets(local, sockets, c.process, threads, hooks)
            .map_err(|e| SplitError::Connect(e.to_string()))?;
    Ok((
        builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
        Box::new(guard),
    ))
}

/// The first connection lost: the process at its other end, and why.
static LOST: Mutex<Option<(usize, String)>> = Mutex::new(None);

/// Which process was lost, if a connection was, in words.
pub(crate) fn lost(c: &Cluster) -> Option<String> {
    let lost = LOST.lock().unwrap_or_else(PoisonError::into_inner);
    lost.as_ref().map(|(i, why)| {
        format!(
            "lost process {i} ({}): {why}; a run over many processes has no fault tolerance: start every process again",
            c.hosts.get(*i).map_or("?", String::as_str)
        )
    })
}

/// A lost connection panics timely's network thread for it ("timely
/// communication error"), and then every worker reading from it: the first
/// such panic is kept (the thread's name says the process at the other end)
/// and the rest are not printed, so the run ends on one line naming the
/// process instead of a page of panics.
fn name_losses() {
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
                lost.get_or_insert((i, why.to_string()));
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
}

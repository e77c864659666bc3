//! Accept streams with limits, for tonic's `serve_with_incoming`: a
//! connection is admitted only with a permit of the listener's connection
//! cap, from an allowed IP, within its IP's connection rate and its IP's
//! cap of open connections. Anything
//! else is accepted and closed at once (so the backlog drains and no
//! descriptor is held), logged at debug and counted in
//! `stave_listener_refused_total{listener,reason}`.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::transport::server::Connected;

use super::allow::AllowList;
use super::rate::IpRate;

/// How long accepting pauses after an accept error (out of descriptors,
/// say) instead of spinning.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);
/// A connection that sends no byte this long after it is admitted is
/// closed: HTTP/2 has no handshake timeout of its own, so a silent
/// connection would hold its place until `max_connection_age`.
pub const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(10);

/// What a listener admits.
#[derive(Clone)]
pub struct Gate {
    /// `client`, `peer`, `admin` or `metrics` (the metrics label).
    pub name: &'static str,
    cap: Arc<Semaphore>,
    allow: Option<Arc<AllowList>>,
    rate: Option<Arc<IpRate>>,
    per_ip: Option<Arc<PerIp>>,
}

/// Open connections per IP, against a cap. An IP has an entry only while
/// it holds a connection, so the map never outgrows the listener's cap.
#[derive(Debug)]
struct PerIp {
    max: usize,
    open: parking_lot::Mutex<BTreeMap<IpAddr, usize>>,
}

/// One connection's place in its IP's count; given back on drop.
struct IpSlot {
    per_ip: Arc<PerIp>,
    ip: IpAddr,
}

impl PerIp {
    fn take(self: &Arc<Self>, ip: IpAddr) -> Option<IpSlot> {
        let mut open = self.open.lock();
        let n = open.entry(ip).or_insert(0);
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(IpSlot {
            per_ip: self.clone(),
            ip,
        })
    }
}

impl Drop for IpSlot {
    fn drop(&mut self) {
        let mut open = self.per_ip.open.lock();
        if let Some(n) = open.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Why a connection was closed at accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The listener holds its cap of connections.
    Full,
    /// The IP is not on the peer allow-list.
    NotAllowed,
    /// The IP opened connections faster than its rate.
    Rate,
    /// The IP holds its cap of open connections.
    PerIp,
}

impl Refusal {
    pub fn label(self) -> &'static str {
        match self {
            Refusal::Full => "full",
            Refusal::NotAllowed => "not_allowed",
            Refusal::Rate => "rate",
            Refusal::PerIp => "per_ip",
        }
    }
}

impl Gate {
    /// At most `max` connections at once, from anyone.
    pub fn new(name: &'static str, max: usize) -> Self {
        Gate {
            name,
            cap: Arc::new(Semaphore::new(max)),
            allow: None,
            rate: None,
            per_ip: None,
        }
    }

    /// Admits at most `max` open connections from one IP.
    pub fn per_ip(mut self, max: usize) -> Self {
        self.per_ip = Some(Arc::new(PerIp {
            max,
            open: Default::default(),
        }));
        self
    }

    /// Admits only IPs on `allow`.
    pub fn allow(mut self, allow: Arc<AllowList>) -> Self {
        self.allow = Some(allow);
        self
    }

    /// Admits an IP's new connections only within `rate`.
    pub fn rate(mut self, rate: Arc<IpRate>) -> Self {
        self.rate = Some(rate);
        self
    }

    /// A permit for a new connection from `ip` (`None`: a Unix socket), or
    /// why not.
    pub fn admit(&self, ip: Option<IpAddr>) -> Result<Permit, Refusal> {
        if let (Some(allow), Some(ip)) = (&self.allow, ip) {
            if !allow.contains(ip) {
                return Err(Refusal::NotAllowed);
            }
        }
        if let (Some(rate), Some(ip)) = (&self.rate, ip) {
            if !rate.check(ip) {
                return Err(Refusal::Rate);
            }
        }
        let ip_slot = match (&self.per_ip, ip) {
            (Some(per_ip), Some(ip)) => Some(
                per_ip
                    .take(super::rate::subject(ip))
                    .ok_or(Refusal::PerIp)?,
            ),
            _ => None,
        };
        let permit = self
            .cap
            .clone()
            .try_acquire_owned()
            .map_err(|_| Refusal::Full)?;
        let open = crate::metrics::metrics()
            .listener_connections
            .with_label_values(&[self.name]);
        open.inc();
        Ok(Permit {
            _permit: permit,
            _ip_slot: ip_slot,
            open,
        })
    }

    /// Logs (debug) and counts a connection closed at accept.
    pub fn refused(&self, why: Refusal, from: &dyn std::fmt::Debug) {
        tracing::debug!(
            listener = self.name,
            reason = why.label(),
            ?from,
            "connection refused"
        );
        crate::metrics::metrics()
            .listener_refused
            .with_label_values(&[self.name, why.label()])
            .inc();
    }
}

/// One admitted connection's place; freed when the connection closes.
pub struct Permit {
    _permit: OwnedSemaphorePermit,
    _ip_slot: Option<IpSlot>,
    open: prometheus::IntGauge,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.open.dec();
    }
}

/// An admitted connection: the stream, its [`Permit`], and the deadline
/// for its first byte.
pub struct Conn<S> {
    inner: S,
    _permit: Permit,
    first_byte: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> Conn<S> {
    fn new(inner: S, permit: Permit) -> Self {
        Conn {
            inner,
            _permit: permit,
            first_byte: Some(Box::pin(tokio::time::sleep(FIRST_BYTE_TIMEOUT))),
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Conn<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let read = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Some(deadline) = this.first_byte.as_mut() {
            match &read {
                Poll::Ready(Ok(())) if buf.filled().len() > before => this.first_byte = None,
                Poll::Pending if deadline.as_mut().poll(cx).is_ready() => {
                    return Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "no byte within the first-byte timeout",
                    )));
                }
                _ => {}
            }
        }
        read
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Conn<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write_vectored(cx, bufs)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl<S: Connected> Connected for Conn<S> {
    type ConnectInfo = S::ConnectInfo;
    fn connect_info(&self) -> Self::ConnectInfo {
        self.inner.connect_info()
    }
}

type Incoming<S> = Pin<Box<dyn Stream<Item = std::io::Result<Conn<S>>> + Send>>;

/// A listening socket: its next connection, with the remote IP if any.
pub trait Acceptor: Send + Sync + 'static {
    type Io: Send + 'static;
    fn poll_next_conn(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<std::io::Result<(Self::Io, Option<IpAddr>)>>;
}

impl Acceptor for TcpListener {
    type Io = TcpStream;
    fn poll_next_conn(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<std::io::Result<(TcpStream, Option<IpAddr>)>> {
        self.poll_accept(cx).map_ok(|(s, peer)| {
            let _ = s.set_nodelay(true);
            (s, Some(peer.ip().to_canonical()))
        })
    }
}

impl Acceptor for UnixListener {
    type Io = UnixStream;
    fn poll_next_conn(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<std::io::Result<(UnixStream, Option<IpAddr>)>> {
        self.poll_accept(cx).map_ok(|(s, _)| (s, None))
    }
}

/// The connections of `listener` that `gate` admits; the others are
/// closed at once.
pub fn admitted<L: Acceptor>(listener: L, gate: Gate) -> Incoming<L::Io> {
    Box::pin(futures::stream::unfold(
        (listener, gate),
        |(l, gate)| async move {
            loop {
                match futures::future::poll_fn(|cx| l.poll_next_conn(cx)).await {
                    Ok((inner, ip)) => match gate.admit(ip) {
                        Ok(permit) => {
                            let conn = Conn::new(inner, permit);
                            return Some((Ok::<_, std::io::Error>(conn), (l, gate)));
                        }
                        Err(why) => gate.refused(why, &ip),
                    },
                    Err(e) => accept_failed(&gate, &e).await,
                }
            }
        },
    ))
}

async fn accept_failed(gate: &Gate, e: &std::io::Error) {
    tracing::warn!(listener = gate.name, error = %e, "accepting a connection failed");
    tokio::time::sleep(ACCEPT_BACKOFF).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_refuses_until_a_permit_is_freed() {
        let gate = Gate::new("test", 2);
        let a = gate.admit(None).unwrap();
        let _b = gate.admit(None).unwrap();
        assert_eq!(gate.admit(None).err(), Some(Refusal::Full));
        drop(a);
        assert!(gate.admit(None).is_ok());
    }

    #[test]
    fn one_ip_holds_at_most_its_cap_and_others_still_pass() {
        let gate = Gate::new("test", 8).per_ip(2);
        let (a, b): (IpAddr, IpAddr) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let first = gate.admit(Some(a)).unwrap();
        let _second = gate.admit(Some(a)).unwrap();
        assert_eq!(gate.admit(Some(a)).err(), Some(Refusal::PerIp));
        assert!(gate.admit(Some(b)).is_ok(), "another IP still passes");
        drop(first);
        let _third = gate.admit(Some(a)).unwrap();
        // a refusal at the listener cap gives the IP's place back
        let full = Gate::new("test", 1).per_ip(4);
        let _only = full.admit(Some(a)).unwrap();
        assert_eq!(full.admit(Some(a)).err(), Some(Refusal::Full));
        let open = full.per_ip.as_ref().unwrap().open.lock().get(&a).copied();
        assert_eq!(open, Some(1));
    }

    /// A connection that never sends a byte is closed after
    /// [`FIRST_BYTE_TIMEOUT`]; one that sends keeps its place.
    #[tokio::test(start_paused = true)]
    async fn a_silent_connection_is_closed_after_the_first_byte_timeout() {
        use futures::StreamExt;
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut incoming = admitted(listener, Gate::new("test", 4));
        let _silent = TcpStream::connect(addr).await.unwrap();
        let mut conn = incoming.next().await.unwrap().unwrap();
        let mut buf = [0u8; 8];
        let err = conn.read(&mut buf).await.unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::TimedOut);

        let mut talker = TcpStream::connect(addr).await.unwrap();
        let mut conn = incoming.next().await.unwrap().unwrap();
        talker.write_all(b"PRI").await.unwrap();
        assert_eq!(conn.read(&mut buf).await.unwrap(), 3);
        tokio::time::advance(FIRST_BYTE_TIMEOUT * 2).await;
        talker.write_all(b"!").await.unwrap();
        assert_eq!(conn.read(&mut buf).await.unwrap(), 1, "still open");
    }

    #[test]
    fn only_listed_ips_pass_the_allow_list() {
        let allow = Arc::new(AllowList::default());
        allow.replace(["127.0.0.2".parse().unwrap()].into_iter().collect());
        let gate = Gate::new("test", 8).allow(allow);
        assert!(gate.admit(Some("127.0.0.2".parse().unwrap())).is_ok());
        assert_eq!(
            gate.admit(Some("127.0.0.99".parse().unwrap())).err(),
            Some(Refusal::NotAllowed)
        );
    }
}

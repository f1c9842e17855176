//! A bare RESP2 client for the attack tests: it sends any bytes as argv, tells
//! a reply that has not started yet (a blocked command) from a slow one, and
//! reports a dead server as an error rather than a panic.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    Status(Vec<u8>),
    Error(Vec<u8>),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Array(Option<Vec<Reply>>),
}

impl Reply {
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }

    /// The text of a status, error or bulk reply.
    pub fn text(&self) -> String {
        match self {
            Reply::Status(bytes) | Reply::Error(bytes) | Reply::Bulk(Some(bytes)) => {
                String::from_utf8_lossy(bytes).into_owned()
            }
            Reply::Int(n) => n.to_string(),
            other => format!("{other:?}"),
        }
    }

    /// The items of an array reply (empty for anything else).
    pub fn items(&self) -> &[Reply] {
        match self {
            Reply::Array(Some(items)) => items,
            _ => &[],
        }
    }
}

pub struct Client {
    stream: BufReader<TcpStream>,
    /// The socket's read timeout as last set: set again only when it
    /// changes (a system call each time, and `read` runs once per item of
    /// an array).
    timeout: Option<Duration>,
}

/// How long `read` waits for a reply before it calls the server gone.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

impl Client {
    pub fn connect(port: u16) -> io::Result<Client> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_nodelay(true)?;
        Ok(Client {
            stream: BufReader::new(stream),
            timeout: None,
        })
    }

    pub fn send(&mut self, argv: &[&[u8]]) -> io::Result<()> {
        self.send_all(&[argv])
    }

    /// Sends several commands in one write (their replies come in order).
    pub fn send_all(&mut self, commands: &[&[&[u8]]]) -> io::Result<()> {
        let mut out = Vec::new();
        for argv in commands {
            out.extend_from_slice(format!("*{}\r\n", argv.len()).as_bytes());
            for arg in *argv {
                out.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
                out.extend_from_slice(arg);
                out.extend_from_slice(b"\r\n");
            }
        }
        self.stream.get_mut().write_all(&out)
    }

    fn wait_at_most(&mut self, wait: Duration) -> io::Result<()> {
        if self.timeout != Some(wait) {
            self.stream.get_ref().set_read_timeout(Some(wait))?;
            self.timeout = Some(wait);
        }
        Ok(())
    }

    /// Waits up to `wait` for a reply to start: `Ok(false)` if none did.
    pub fn reply_started(&mut self, wait: Duration) -> io::Result<bool> {
        if !self.stream.buffer().is_empty() {
            return Ok(true);
        }
        self.wait_at_most(wait)?;
        let started = match self.stream.fill_buf() {
            Ok([]) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "server closed the connection",
            )),
            Ok(_) => Ok(true),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        };
        started
    }

    pub fn read(&mut self) -> io::Result<Reply> {
        self.wait_at_most(READ_TIMEOUT)?;
        let line = self.line()?;
        let (kind, rest) = line.split_first().ok_or_else(|| bad("empty reply line"))?;
        let number = || -> io::Result<i64> {
            std::str::from_utf8(rest)
                .ok()
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| bad("bad length"))
        };
        Ok(match kind {
            b'+' => Reply::Status(rest.to_vec()),
            b'-' => Reply::Error(rest.to_vec()),
            b':' => Reply::Int(number()?),
            b'$' => match number()? {
                -1 => Reply::Bulk(None),
                len => {
                    let mut data =
                        vec![0; usize::try_from(len).map_err(|_| bad("bad length"))? + 2];
                    self.stream.read_exact(&mut data)?;
                    data.truncate(data.len() - 2);
                    Reply::Bulk(Some(data))
                }
            },
            b'*' => match number()? {
                -1 => Reply::Array(None),
                len => Reply::Array(Some(
                    (0..len).map(|_| self.read()).collect::<io::Result<_>>()?,
                )),
            },
            _ => return Err(bad("unknown reply type")),
        })
    }

    pub fn call(&mut self, argv: &[&[u8]]) -> io::Result<Reply> {
        self.send(argv)?;
        self.read()
    }

    fn line(&mut self) -> io::Result<Vec<u8>> {
        let mut line = Vec::new();
        self.stream.read_until(b'\n', &mut line)?;
        if !line.ends_with(b"\r\n") {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "server closed the connection",
            ));
        }
        line.truncate(line.len() - 2);
        Ok(line)
    }
}

fn bad(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

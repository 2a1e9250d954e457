//! Bodies sent compressed (`Content-Encoding: gzip`, `deflate`, `br`,
//! several in turn) decoded as they arrive, with the decoded bytes counted
//! against `--max-body`: a body that inflates past it (a decompression
//! bomb) is cut there like any long body, after a few kilobytes of work.
//!
//! The run asks for no compression; this is for the servers that send it
//! anyway. A coding it does not know (`zstd`, `compress`) leaves the body as
//! sent, and so does one that is not what it says (a body labelled gzip
//! that is not): the oracles then judge what came.

use std::io::Write;
use std::sync::{Arc, Mutex};

/// The decoded bytes so far, shared by the sink at the end of the chain
/// and the reader that takes them.
#[derive(Default)]
struct Out {
    bytes: Vec<u8>,
    /// Bytes past the cap were produced (and dropped).
    over: bool,
}

/// A writer of the decoder chain that can be told the stream has ended:
/// a decoder then checks the stream was whole and passes the end on.
trait Stage: Write + Send {
    fn end(&mut self) -> std::io::Result<()>;
}

type Chain = Box<dyn Stage>;

/// The end of the decoder chain: keeps at most `cap` bytes, and refuses
/// the write that would go past it, which stops the decoders at once.
struct Capped {
    out: Arc<Mutex<Out>>,
    cap: usize,
}

impl Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let room = self.cap - out.bytes.len();
        if buf.len() > room {
            out.bytes.extend_from_slice(&buf[..room]);
            out.over = true;
            return Err(std::io::Error::other("past --max-body"));
        }
        out.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Stage for Capped {
    fn end(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// One coding undone, writing to the next stage.
enum Undo {
    Gzip(flate2::write::MultiGzDecoder<Chain>),
    Zlib(flate2::write::ZlibDecoder<Chain>),
    RawDeflate(flate2::write::DeflateDecoder<Chain>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Chain>>),
    /// `deflate` before its first two bytes, which tell zlib-wrapped
    /// deflate (RFC 9110 §8.4.1.2) from the raw deflate some servers send.
    Deflate(Option<Chain>, Vec<u8>),
}

impl Write for Undo {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Undo::Gzip(d) => d.write(buf),
            Undo::Zlib(d) => d.write(buf),
            Undo::RawDeflate(d) => d.write(buf),
            Undo::Brotli(d) => d.write(buf),
            Undo::Deflate(next, head) => {
                head.extend_from_slice(buf);
                if head.len() >= 2 {
                    let (cmf, flg) = (head[0], head[1]);
                    let zlib = cmf & 0x0f == 8 && (u16::from(cmf) << 8 | u16::from(flg)) % 31 == 0;
                    let head = std::mem::take(head);
                    let next = next.take().ok_or_else(|| std::io::Error::other("ended"))?;
                    *self = if zlib {
                        Undo::Zlib(flate2::write::ZlibDecoder::new(next))
                    } else {
                        Undo::RawDeflate(flate2::write::DeflateDecoder::new(next))
                    };
                    self.write_all(&head)?;
                }
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Undo::Gzip(d) => d.flush(),
            Undo::Zlib(d) => d.flush(),
            Undo::RawDeflate(d) => d.flush(),
            Undo::Brotli(d) => d.flush(),
            Undo::Deflate(..) => Ok(()),
        }
    }
}

impl Stage for Undo {
    fn end(&mut self) -> std::io::Result<()> {
        match self {
            Undo::Gzip(d) => {
                d.try_finish()?;
                d.get_mut().end()
            }
            Undo::Zlib(d) => {
                d.try_finish()?;
                d.get_mut().end()
            }
            Undo::RawDeflate(d) => {
                d.try_finish()?;
                d.get_mut().end()
            }
            Undo::Brotli(d) => {
                d.close()?;
                d.get_mut().end()
            }
            Undo::Deflate(..) => Err(std::io::Error::other("cut before its first bytes")),
        }
    }
}

/// How a body is decoded as its chunks come.
pub(super) struct Decoder {
    chain: Option<Chain>,
    out: Arc<Mutex<Out>>,
    /// The body is not in its coding: it is kept as sent.
    broken: bool,
}

/// Outcome of feeding a chunk.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Fed {
    /// Go on reading.
    More,
    /// The decoded body reached the cap: stop reading, it is cut.
    Full,
}

impl Decoder {
    /// A decoder for a `Content-Encoding` header value, or `None` when the
    /// body is to be kept as sent (no coding, `identity`, or one not known).
    pub(super) fn for_encoding(encoding: &str, cap: usize) -> Option<Decoder> {
        let codings: Vec<String> = encoding
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty() && c != "identity")
            .collect();
        if codings.is_empty()
            || codings.len() > 4
            || codings
                .iter()
                .any(|c| !matches!(c.as_str(), "gzip" | "x-gzip" | "deflate" | "br"))
        {
            return None;
        }
        let out = Arc::new(Mutex::new(Out::default()));
        let mut chain: Chain = Box::new(Capped {
            out: out.clone(),
            cap,
        });
        // The codings were applied in the order listed: the last one is
        // undone first, so it is the outermost writer.
        for coding in &codings {
            chain = Box::new(match coding.as_str() {
                "gzip" | "x-gzip" => Undo::Gzip(flate2::write::MultiGzDecoder::new(chain)),
                "deflate" => Undo::Deflate(Some(chain), Vec::new()),
                _ => Undo::Brotli(Box::new(brotli_decompressor::DecompressorWriter::new(
                    chain, 4096,
                ))),
            });
        }
        Some(Decoder {
            chain: Some(chain),
            out,
            broken: false,
        })
    }

    /// Feeds one chunk as it came.
    pub(super) fn feed(&mut self, chunk: &[u8]) -> Fed {
        let Some(chain) = &mut self.chain else {
            return Fed::More;
        };
        // In slices, so that a chunk that inflates a thousandfold is
        // stopped after one slice's worth past the cap.
        for slice in chunk.chunks(1024) {
            if chain.write_all(slice).is_err() {
                return self.stopped();
            }
        }
        Fed::More
    }

    fn over(&self) -> bool {
        self.out.lock().unwrap_or_else(|e| e.into_inner()).over
    }

    /// After a refused write: the cap (stop reading) or a body not in its
    /// coding (read on, keep it as sent).
    fn stopped(&mut self) -> Fed {
        self.chain = None;
        if self.over() {
            Fed::Full
        } else {
            self.broken = true;
            Fed::More
        }
    }

    /// The body (`raw`, as sent, and `cut_short` when reading it stopped
    /// early): decoded, and whether it is cut; or as sent when it was not
    /// in its coding.
    pub(super) fn finish(mut self, raw: Vec<u8>, cut_short: bool) -> (Vec<u8>, bool) {
        if let Some(mut chain) = self.chain.take() {
            // What the decoders still hold comes out; a stream that stops
            // before its end is whole only when reading was cut short.
            let ended = if cut_short {
                chain.flush()
            } else {
                chain.end()
            };
            if ended.is_err() && !self.over() {
                self.broken = true;
            }
        }
        if self.broken {
            return (raw, cut_short);
        }
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let over = out.over;
        (std::mem::take(&mut out.bytes), over || cut_short)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn brotli(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        {
            let mut e = ::brotli::CompressorWriter::new(&mut out, 4096, 9, 22);
            e.write_all(data).unwrap();
        }
        out
    }

    /// `body` fed in chunks of `chunk` bytes, as the transport does.
    fn decode(encoding: &str, body: &[u8], cap: usize, chunk: usize) -> (Vec<u8>, bool) {
        let mut d = Decoder::for_encoding(encoding, cap).expect("a known coding");
        let mut read = 0;
        for c in body.chunks(chunk) {
            read += c.len();
            if d.feed(c) == Fed::Full {
                break;
            }
        }
        d.finish(body[..read].to_vec(), false)
    }

    #[test]
    fn each_coding_is_undone() {
        let text = br#"{"items":[1,2,3],"name":"caf\u00e9"}"#.repeat(50);
        let mut zlib = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        zlib.write_all(&text).unwrap();
        let zlib = zlib.finish().unwrap();
        let mut raw = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        raw.write_all(&text).unwrap();
        let raw = raw.finish().unwrap();
        for (encoding, body) in [
            ("gzip", gzip(&text)),
            ("x-gzip", gzip(&text)),
            ("GZIP", gzip(&text)),
            ("deflate", zlib),
            ("deflate", raw),
            ("br", brotli(&text)),
            // Applied in turn: brotli first, then gzip.
            ("br, gzip", gzip(&brotli(&text))),
            ("identity, gzip", gzip(&text)),
        ] {
            for chunk in [1, 7, 4096] {
                assert_eq!(
                    decode(encoding, &body, 1 << 20, chunk),
                    (text.clone(), false),
                    "{encoding} in chunks of {chunk}"
                );
            }
        }
    }

    #[test]
    fn a_bomb_stops_at_the_cap() {
        // 64 MiB of zeros: 64 KiB as gzip, a few hundred bytes as brotli.
        let zeros = vec![0u8; 64 << 20];
        for (encoding, body) in [("gzip", gzip(&zeros)), ("br", brotli(&zeros))] {
            let (decoded, cut) = decode(encoding, &body, 4096, 16 * 1024);
            assert_eq!((decoded.len(), cut), (4096, true), "{encoding}");
        }
    }

    #[test]
    fn unknown_codings_and_mislabelled_bodies_stay_as_sent() {
        assert!(Decoder::for_encoding("zstd", 100).is_none());
        assert!(Decoder::for_encoding("gzip, compress", 100).is_none());
        assert!(Decoder::for_encoding("identity", 100).is_none());
        let plain = br#"{"not":"gzip"}"#;
        assert_eq!(decode("gzip", plain, 100, 4), (plain.to_vec(), false));
        assert_eq!(decode("br", plain, 100, 100), (plain.to_vec(), false));
    }
}

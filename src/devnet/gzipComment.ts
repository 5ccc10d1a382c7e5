/**
 * The comment field of a gzip header (RFC 1952, FCOMMENT): a few bytes of text that travel inside the file, so
 * that what a snapshot covers is written, renamed and fsynced with it. gunzip skips the field.
 */

const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;
const FIXED_HEADER = 10;

interface GzipHeader {
  flags: number;
  /** FEXTRA and FNAME fields, kept as they are. */
  extraAndName: Buffer;
  comment: string | undefined;
  /** Where the compressed data starts. */
  end: number;
}

function readHeader(gz: Buffer): GzipHeader {
  if (gz.length < FIXED_HEADER || gz[0] !== 0x1f || gz[1] !== 0x8b || gz[2] !== 8) throw new Error('not a gzip stream');
  const flags = gz[3]!;
  let at = FIXED_HEADER;
  const zeroTerminated = (): number => {
    const nul = gz.indexOf(0, at);
    if (nul < 0) throw new Error('gzip header cut short');
    return nul;
  };
  if (flags & FEXTRA) at += 2 + gz.readUInt16LE(at);
  if (flags & FNAME) at = zeroTerminated() + 1;
  const extraAndName = gz.subarray(FIXED_HEADER, at);
  let comment: string | undefined;
  if (flags & FCOMMENT) {
    const nul = zeroTerminated();
    comment = gz.toString('latin1', at, nul);
    at = nul + 1;
  }
  if (flags & FHCRC) at += 2;
  if (at > gz.length) throw new Error('gzip header cut short');
  return { flags, extraAndName, comment, end: at };
}

/** The same gzip stream with `comment` (Latin-1 text without NUL) in its header. */
export function withGzipComment(gzipped: Uint8Array, comment: string): Buffer {
  if (comment.includes('\0')) throw new Error('a gzip comment cannot hold NUL');
  const gz = Buffer.from(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength);
  const header = readHeader(gz);
  const fixed = Buffer.from(gz.subarray(0, FIXED_HEADER));
  // The optional header CRC would no longer match: dropped (it is rarely written, and anvil does not).
  fixed[3] = (header.flags | FCOMMENT) & ~FHCRC;
  return Buffer.concat([fixed, header.extraAndName, Buffer.from(comment, 'latin1'), Buffer.alloc(1), gz.subarray(header.end)]);
}

/** The comment in a gzip stream's header, if it has one. Throws if the bytes do not start a gzip stream. */
export function gzipComment(gzipped: Uint8Array): string | undefined {
  return readHeader(Buffer.from(gzipped.buffer, gzipped.byteOffset, gzipped.byteLength)).comment;
}

// Whether a file's first bytes are a text log a file source should ship (DECISIONS D25).
//
// A glob such as /var/log/* or /var/log/nginx/access.log* also matches logrotate's compressed
// copies (access.log.2.gz: lines already shipped from access.log, as compressed bytes), the
// login records (wtmp, btmp: binary structs) and lastlog (a sparse file whose apparent size is
// 292 bytes × the highest uid — gigabytes of NULs, hundreds of them with directory uids). Read
// as text they become entries of U+FFFD and garbage. Such a file is not read; status says why.

/** How many first bytes decide (git and grep -I look at the first 8000). */
export const SNIFF_BYTES = 8192;

/** A file whose first bytes hold this share of NULs (or more) is binary. */
const NUL_SHARE = 0.1;

const COMPRESSED: readonly [Buffer, string][] = [
  [Buffer.from([0x1f, 0x8b]), 'gzip'],
  [Buffer.from('BZh', 'latin1'), 'bzip2'],
  [Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), 'xz'],
  [Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), 'zstd'],
  [Buffer.from([0x04, 0x22, 0x4d, 0x18]), 'lz4'],
  [Buffer.from([0x5d, 0x00, 0x00]), 'lzma'],
  [Buffer.from([0x50, 0x4b, 0x03, 0x04]), 'zip'],
];

/**
 * Why `head` (a file's first bytes, from offset 0) is not a text log, or null when it is one.
 * bzip2's "BZh" must be followed by its block size digit, so a text line starting "BZh" is text.
 */
export function notTextReason(head: Buffer): string | null {
  for (const [magic, what] of COMPRESSED) {
    if (head.length < magic.length || !head.subarray(0, magic.length).equals(magic)) continue;
    if (what === 'bzip2' && (head.length < 4 || head[3]! < 0x31 || head[3]! > 0x39)) continue;
    return `${what}-compressed (a rotated copy? its lines were read from the file before it was compressed)`;
  }
  const n = Math.min(head.length, SNIFF_BYTES);
  if (n === 0) return null;
  let nul = 0;
  for (let i = 0; i < n; i++) if (head[i] === 0) nul++;
  if (nul < n * NUL_SHARE) return null;
  const utf16 = n >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff));
  if (utf16) return 'UTF-16 text, which a file source does not decode (have the program write UTF-8)';
  return `binary: ${Math.round((100 * nul) / n)} % of its first ${n} bytes are NUL (login records such as wtmp or lastlog, a database, a core file)`;
}

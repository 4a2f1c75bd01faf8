// Text an agent (or anything on the other end of the socket) chose, on its way into a log
// line, a metric label, a row or a close frame. Such text is bounded, has no control
// characters, and never carries a value that could be a token: the server never knows a
// token in clear (it stores hashes), so it cannot redact one by value as the agent does
// (DECISIONS H52). A token is any string of at least 32 characters (agent.hello's `token`
// minLength), so every word of peer text that long is replaced — a host_id swapped with the
// token, a token sent as a property name, an id or a close reason (DECISIONS H65).

/** Shortest string agent.hello accepts as a token (contract/schemas/agent.hello.params.json). */
export const TOKEN_MIN_CHARS = 32;

/** Longest peer text kept in a log line or a row (characters, after redaction). */
export const PEER_TEXT_MAX_CHARS = 200;

/** Largest close reason a WebSocket close frame holds (RFC 6455 5.5: 125 bytes of payload, 2 of them the code). */
export const MAX_CLOSE_REASON_BYTES = 123;

/** What replaces a word that could be a token. */
export const REDACTED = '[redacted]';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// C0 and C1 controls, DEL, and the line and paragraph separators: a log reader's line breaks.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/** True for a well-formed UUID (8-4-4-4-12 hex digits), the only shape of a host_id. */
export function isUuid(value: unknown): boolean {
  return typeof value === 'string' && value.length === 36 && UUID.test(value);
}

/**
 * A host_id a peer sent, as a log line may carry it: a well-formed UUID (lower-cased), else
 * what it was ("malformed, 43 characters", "not a string") — never the value, which may be the
 * token itself (a third-party agent that swapped host_id and token).
 */
export function loggableHostId(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && isUuid(value)) return value.toLowerCase();
  if (typeof value !== 'string') return `(not a string: ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value})`;
  return `(malformed, ${value.length} characters)`;
}

/** One whitespace-free word of peer text, with whatever in it could be a token replaced. */
function redactWord(word: string): string {
  if (word.length < TOKEN_MIN_CHARS || isUuid(word)) return word;
  // "key=value" (an error data summary): the key is the server's, the value is looked at.
  const eq = word.indexOf('=');
  if (eq > 0 && eq < TOKEN_MIN_CHARS) return `${word.slice(0, eq + 1)}${redactWord(word.slice(eq + 1))}`;
  // A JSON pointer (an issue path): each property name in it is one segment ("/" inside a
  // name is escaped "~1"), so only the long segments go.
  if (word.startsWith('/')) {
    return word
      .split('/')
      .map((segment) => (segment.length < TOKEN_MIN_CHARS || isUuid(segment) ? segment : REDACTED))
      .join('/');
  }
  return REDACTED;
}

/**
 * Peer-supplied text for a log line, a metric label or a row: control characters replaced
 * by U+FFFD, every word (run without white space) that could be a token replaced by
 * "[redacted]" (a UUID is kept: host ids are UUIDs), then at most `max` characters (cut
 * with "…").
 */
export function peerText(text: string, max = PEER_TEXT_MAX_CHARS): string {
  // Only the first part is looked at (a 64 KiB string costs no more than a short one), and
  // without the word it cuts through: the part of a token left in it could be short.
  const limit = max * 2 + TOKEN_MIN_CHARS;
  const cut = text.length > limit;
  const head = cut ? text.slice(0, limit).replace(/\S+$/, '') : text;
  const clean = head.replace(CONTROL, '\ufffd').replace(/\S+/g, redactWord);
  if (!cut && clean.length <= max) return clean;
  return `${cutChars(clean.trimEnd(), max - 1)}…`;
}

/** `text` cut to at most `n` UTF-16 units without splitting a surrogate pair. */
function cutChars(text: string, n: number): string {
  if (text.length <= n) return text;
  const last = text.charCodeAt(n - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? n - 1 : n);
}

/**
 * A peer-supplied JSON value (a list of validation issues, error data) for a log line: every
 * string in it, object keys included, through peerText; at most `maxItems` entries per
 * array or object and `maxDepth` levels (deeper is "…").
 */
export function peerValue(value: unknown, maxItems = 10, maxDepth = 4): unknown {
  if (typeof value === 'string') return peerText(value);
  if (value === null || typeof value !== 'object') return value;
  if (maxDepth <= 0) return '…';
  if (Array.isArray(value)) return value.slice(0, maxItems).map((v) => peerValue(v, maxItems, maxDepth - 1));
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (n++ >= maxItems) break;
    out[peerText(k, 64)] = peerValue(v, maxItems, maxDepth - 1);
  }
  return out;
}

/** A JSON-RPC id a peer sent, for a log line: a number as is, a string through peerText (64 characters at most). */
export function loggableId(id: unknown): unknown {
  return typeof id === 'string' ? peerText(id, 64) : id;
}

/**
 * A close frame's reason: at most MAX_CLOSE_REASON_BYTES of UTF-8, cut at a character
 * boundary with "…" when longer. `ws` throws on a longer one, and the socket was then aborted
 * (1006) instead of closed with its code (DECISIONS H64).
 */
export function closeReason(reason: string): string {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: 41 units always fit.
  if (reason.length * 3 <= MAX_CLOSE_REASON_BYTES) return reason;
  const bytes = Buffer.from(reason, 'utf8');
  if (bytes.length <= MAX_CLOSE_REASON_BYTES) return reason;
  let end = MAX_CLOSE_REASON_BYTES - 3; // room for "…" (3 bytes)
  // bytes[end] is the first byte left out: while it continues a character, that character goes too.
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}…`;
}

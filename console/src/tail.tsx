// Live tail of a host's logs over Server-Sent Events (GET …/logs/stream). EventSource
// reconnects by itself and resumes after the last seq it saw (Last-Event-ID).
//
// Lines arrive faster than anyone reads: they go into a bounded buffer and the view is
// redrawn at most 4 times a second with the newest SHOWN lines; when more arrived between
// two redraws than the view holds, the page says it is sampling.
import { useEffect, useRef, useState } from 'preact/hooks';
import { apiUrl, qs, type LogRow } from './api.js';
import { Visible } from './components.js';
import { SEVERITIES } from './severities.js';
import { plural } from './util.js';

const SHOWN = 300;
/**
 * The most characters of one message the tail shows: a longer line (a 20,000-character JSON
 * dump) filled the whole view and pushed every other line out of it. The rest is named with its
 * length; the stored-log search below shows the line whole.
 */
export const LINE_CHARS = 2000;

/** The message as the tail shows it: at most LINE_CHARS characters (a surrogate pair kept whole). */
function shownMessage(message: string): { text: string; more: number } {
  if (message.length <= LINE_CHARS) return { text: message, more: 0 };
  const cut = /[\ud800-\udbff]/.test(message.charAt(LINE_CHARS - 1)) ? LINE_CHARS - 1 : LINE_CHARS;
  return { text: message.slice(0, cut), more: message.length - cut };
}
const FLUSH_MS = 250;
const SAMPLING_NOTICE_MS = 5000;
/** A stream the browser gave up on (a non-stream answer: 503, 5xx) is opened again this long after (the server's Retry-After). */
const RETRY_MS = 10_000;
/** The longest source and text filter, as the stored-log search takes them (the server refuses a longer q). */
export const MAX_FILTER = 200;
/** C0 controls but tab, and DEL: the server refuses them in a filter (server/admin/http.ts Query). */
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** What is wrong with a filter field before it is sent, as the server would say it; undefined when nothing. */
export function filterProblem(label: string, value: string): string | undefined {
  if (value.length > MAX_FILTER) return `${label} is longer than ${MAX_FILTER} characters (${value.length}): shorten it`;
  const bad = CONTROL.exec(value);
  if (bad !== null) return `${label} contains a control character (U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} at position ${bad.index + 1}): use printable text`;
  return undefined;
}

/**
 * Why the server refused to open the stream: EventSource sees an error and no answer, so the
 * same request is made with fetch to read its status and JSON message. 0: no answer or a
 * stream (nothing to say); a 4xx is refused for good (the same filter is refused again).
 */
async function refusal(url: string): Promise<{ status: number; message?: string }> {
  const ctl = new AbortController();
  try {
    const res = await fetch(url, { headers: { Accept: 'text/event-stream' }, credentials: 'same-origin', cache: 'no-store', signal: ctl.signal });
    if (res.ok) return { status: 0 };
    const body = (await res.json().catch(() => null)) as { error?: { message?: unknown } } | null;
    const message = typeof body?.error?.message === 'string' ? body.error.message : undefined;
    return { status: res.status, ...(message !== undefined ? { message } : {}) };
  } catch {
    return { status: 0 };
  } finally {
    ctl.abort(); // a stream that did open is not read here
  }
}

export function LiveTail(props: { hostId: string }) {
  const [severity, setSeverity] = useState('');
  const [source, setSource] = useState('');
  const [text, setText] = useState('');
  const [filter, setFilter] = useState({ severity: '', source: '', q: '' });
  const [paused, setPaused] = useState(false);
  const [lines, setLines] = useState<LogRow[]>([]);
  const [status, setStatus] = useState<'connecting' | 'live' | 'reconnecting' | 'refused'>('connecting');
  /** The server's (or this page's) reason for not streaming this filter; no retry until the filter changes. */
  const [refused, setRefused] = useState<string | undefined>();
  const [stats, setStats] = useState({ received: 0, rate: 0, pendingWhilePaused: 0, sampled: false });
  const buffer = useRef<LogRow[]>([]);
  const counters = useRef({ received: 0, sinceFlush: 0, sincePause: 0, sampledAt: -Infinity, window: [] as number[] });
  const pausedRef = useRef(false);
  const list = useRef<HTMLOListElement>(null);

  useEffect(() => {
    const t = setTimeout(() => {
      const next = { severity, source: source.trim(), q: text.trim() };
      // a new object only when something changed: a new filter reopens the stream
      setFilter((f) => (f.severity === next.severity && f.source === next.source && f.q === next.q ? f : next));
    }, 300);
    return () => clearTimeout(t);
  }, [severity, source, text]);

  useEffect(() => {
    buffer.current = [];
    counters.current = { received: 0, sinceFlush: 0, sincePause: 0, sampledAt: -Infinity, window: [] };
    setLines([]);
    setStatus('connecting');
    setRefused(undefined);
    const problem = filterProblem('Source', filter.source) ?? filterProblem('Text', filter.q);
    if (problem !== undefined) {
      setRefused(problem);
      setStatus('refused');
      return;
    }
    let closed = false;
    // EventSource retries a dropped connection by itself, but gives up for good after an answer
    // that is not a stream (a 503 when the server streams as many tails as it allows, a 5xx
    // while its database is away): then a new one is opened after RETRY_MS, after the last
    // line seen (DECISIONS J12; before, the page said "Reconnecting…" for good).
    let es: EventSource | undefined;
    let retry: ReturnType<typeof setTimeout> | undefined;
    let lastSeq: number | undefined;
    const open = (): void => {
      const from = lastSeq === undefined ? { backlog: 100 } : { after_seq: lastSeq };
      const url = apiUrl(`/admin/agents/${props.hostId}/logs/stream${qs({ ...from, ...filter })}`);
      const source = new EventSource(url);
      es = source;
      source.addEventListener('open', () => setStatus('live'));
      source.addEventListener('error', () => {
        if (source.readyState !== EventSource.CLOSED) {
          setStatus('reconnecting'); // EventSource comes back by itself
          return;
        }
        if (retry !== undefined) return;
        // Given up: a 4xx (a filter the server refuses, a host that is gone) is said next to the
        // filter and not retried; anything else (503, 5xx, no answer) is retried after RETRY_MS.
        void refusal(url).then((r) => {
          if (closed) return;
          if (r.status >= 400 && r.status < 500) {
            setRefused(`The server refused the live tail (HTTP ${r.status}): ${r.message ?? 'no reason given'}. Change the filter to try again.`);
            setStatus('refused');
            return;
          }
          setStatus('reconnecting');
          retry = setTimeout(() => {
            retry = undefined;
            open();
          }, RETRY_MS);
        });
      });
      source.addEventListener('log', onLog);
    };
    const onLog = (ev: Event): void => {
      const row = JSON.parse((ev as MessageEvent<string>).data) as LogRow;
      lastSeq = row.seq;
      const b = buffer.current;
      b.push(row);
      if (b.length > SHOWN * 2) b.splice(0, b.length - SHOWN);
      const c = counters.current;
      c.received++;
      c.sinceFlush++;
      if (pausedRef.current) c.sincePause++;
    };
    open();
    const flush = setInterval(() => {
      const c = counters.current;
      const now = Date.now();
      c.window.push(c.sinceFlush);
      if (c.window.length > 1000 / FLUSH_MS) c.window.shift();
      const rate = Math.round((c.window.reduce((a, b) => a + b, 0) * 1000) / (c.window.length * FLUSH_MS));
      if (c.sinceFlush > SHOWN) c.sampledAt = now;
      // the notice stays for a few seconds after the last sampled redraw, so it can be read
      const sampled = now - c.sampledAt < SAMPLING_NOTICE_MS;
      if (!pausedRef.current && c.sinceFlush > 0) setLines(buffer.current.slice(-SHOWN));
      c.sinceFlush = 0;
      setStats((s) => (s.received === c.received && s.rate === rate && s.pendingWhilePaused === c.sincePause && s.sampled === sampled ? s : { received: c.received, rate, pendingWhilePaused: c.sincePause, sampled }));
    }, FLUSH_MS);
    return () => {
      closed = true;
      es?.close();
      clearTimeout(retry);
      clearInterval(flush);
    };
  }, [props.hostId, filter]);

  useEffect(() => {
    const el = list.current;
    if (el !== null && !paused) el.scrollTop = el.scrollHeight;
  }, [lines, paused]);

  function togglePause(): void {
    const next = !paused;
    pausedRef.current = next;
    counters.current.sincePause = 0;
    setPaused(next);
    if (!next) setLines(buffer.current.slice(-SHOWN));
  }

  return (
    <section aria-labelledby="h-tail" class="card tail">
      <h2 id="h-tail">Live tail</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label for="tail-severity">Severity at least</label>
        <select id="tail-severity" value={severity} onChange={(e) => setSeverity((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">any</option>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>{s}</option>
          ))}
        </select>
        <label for="tail-source">Source</label>
        <input id="tail-source" maxLength={MAX_FILTER} value={source} aria-invalid={refused !== undefined} aria-describedby="tail-refused" onInput={(e) => setSource((e.currentTarget as HTMLInputElement).value)} placeholder="exact, e.g. file:/var/log/app.log" />
        <label for="tail-text">Text</label>
        <input id="tail-text" type="search" maxLength={MAX_FILTER} value={text} aria-invalid={refused !== undefined} aria-describedby="tail-refused" onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} />
        <button type="button" aria-pressed={paused} onClick={togglePause}>
          {paused ? 'Resume' : 'Pause'}
        </button>
      </form>
      <p id="tail-refused" role="alert" class={refused !== undefined ? 'error' : 'visually-hidden'}>
        {refused ?? ''}
      </p>
      <p class="tail-status" aria-live="polite">
        <span class={`dot dot-${status}`} aria-hidden="true" />{' '}
        {status === 'live' ? 'Live' : status === 'connecting' ? 'Connecting…' : status === 'refused' ? 'Not streaming: see above' : 'Reconnecting (resumes where it left off)…'}
        {' · '}
        {plural(stats.received, 'line')} received{stats.rate > 0 ? `, ${stats.rate}/s` : ''}
        {paused ? ` · Paused: ${plural(stats.pendingWhilePaused, 'new line')} not shown` : ''}
      </p>
      {stats.sampled && (
        <p class="sampling" role="status">
          Sampling: lines arrive faster than this view redraws; it shows the newest {SHOWN} every {FLUSH_MS} ms, not every line. Use the search below for the complete record.
        </p>
      )}
      <ol class="log-lines" ref={list} aria-label="Log lines, newest last" tabIndex={0}>
        {lines.map((l) => {
          const m = shownMessage(l.message);
          return (
            <li key={l.seq} class={`sev-${l.severity}`}>
              <time dateTime={l.ts}>{l.ts.slice(11, 23)}</time> <span class="sev">{l.severity}</span> <span class="src"><Visible text={l.source} /></span> <span class="msg"><Visible text={m.text} /></span>
              {m.more > 0 && <span class="more">{` … ${m.more} more characters (seq ${l.seq}: the search below shows the whole line)`}</span>}
            </li>
          );
        })}
      </ol>
    </section>
  );
}

// Search over a host's stored logs: time range, severity at least, source, text; newest
// first, older pages through the cursor.
import { useState } from 'preact/hooks';
import { ApiError, get, qs, type LogRow } from './api.js';
import { ErrorText, Visible } from './components.js';
import { SEVERITIES } from './severities.js';
import { localToIso, plural } from './util.js';

export function LogSearch(props: { hostId: string }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [severity, setSeverity] = useState('');
  const [source, setSource] = useState('');
  const [text, setText] = useState('');
  const [rows, setRows] = useState<LogRow[] | undefined>();
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  /** The filters of the search shown: "Older lines" goes on with them, not with what the form holds since (J12). */
  const [shown, setShown] = useState<Record<string, string | undefined>>({});

  async function run(more: boolean): Promise<void> {
    setBusy(true);
    setError(undefined);
    const filters = more ? shown : { from: localToIso(from), to: localToIso(to), severity, source: source.trim(), q: text.trim() };
    try {
      const page = await get<{ items: LogRow[]; next_cursor: string | null }>(
        `/admin/agents/${props.hostId}/logs${qs({ ...filters, limit: 100, cursor: more ? (cursor ?? undefined) : undefined })}`,
      );
      setRows(more ? [...(rows ?? []), ...page.items] : page.items);
      setCursor(page.next_cursor);
      setShown(filters);
    } catch (e) {
      setError(e instanceof ApiError ? e.message : String(e));
      // a new search that failed leaves no rows of the one before on screen under its error
      if (!more) {
        setRows(undefined);
        setCursor(null);
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="h-search" class="card">
      <h2 id="h-search">Search stored logs</h2>
      <form class="filters" onSubmit={(e) => { e.preventDefault(); void run(false); }}>
        <label for="search-from">From</label>
        <input id="search-from" type="datetime-local" step="1" value={from} onInput={(e) => setFrom((e.currentTarget as HTMLInputElement).value)} />
        <label for="search-to">To</label>
        <input id="search-to" type="datetime-local" step="1" value={to} onInput={(e) => setTo((e.currentTarget as HTMLInputElement).value)} />
        <label for="search-severity">Severity at least</label>
        <select id="search-severity" value={severity} onChange={(e) => setSeverity((e.currentTarget as HTMLSelectElement).value)}>
          <option value="">any</option>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>{s}</option>
          ))}
        </select>
        <label for="search-source">Source</label>
        <input id="search-source" maxLength={200} value={source} onInput={(e) => setSource((e.currentTarget as HTMLInputElement).value)} />
        <label for="search-text">Text contains</label>
        <input id="search-text" type="search" maxLength={200} value={text} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} />
        <button type="submit" disabled={busy}>Search</button>
      </form>
      <ErrorText error={error} />
      {rows !== undefined && (
        <>
          <p aria-live="polite">{rows.length === 0 ? 'No stored line matches.' : `${plural(rows.length, 'line')}, newest first${cursor !== null ? ' (more below)' : ''}`}</p>
          {rows.length > 0 && (
            <div class="table-wrap">
              <table class="logs" aria-label="Stored log lines">
                <thead>
                  <tr><th scope="col">Time (agent)</th><th scope="col">Seq</th><th scope="col">Severity</th><th scope="col">Source</th><th scope="col">Message</th></tr>
                </thead>
                <tbody>
                  {rows.map((r) => (
                    <tr key={r.seq} class={`sev-${r.severity}`}>
                      <td class="mono">{r.ts}</td><td class="num">{r.seq}</td><td>{r.severity}</td><td><Visible text={r.source} /></td><td class="msg"><Visible text={r.message} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {cursor !== null && <button type="button" disabled={busy} onClick={() => void run(true)}>Older lines</button>}
        </>
      )}
    </section>
  );
}

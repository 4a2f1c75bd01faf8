// Fleet page: counts per state, a filterable, sortable, paged table of agents, refreshed
// every second without a reload (one page of rows and the counts per poll, so the cost
// does not grow with the fleet).
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, get, qs, request, type Agent, type ConnectionState, type FleetSummary } from './api.js';
import { ErrorText, StateBadge, Visible } from './components.js';
import { bytes, disconnectText, platformText, relativeTime, STATE_LABEL } from './util.js';

const PAGE = 100;
const POLL_MS = 1000;
const STATES: ConnectionState[] = ['Active', 'Disconnected', 'NeverConnected', 'Revoked'];
type SortKey = 'hostname' | 'host_id' | 'connection_state' | 'last_seen' | 'agent_version' | 'accepted_seq';

const COLUMNS: { key: SortKey | undefined; label: string }[] = [
  { key: 'hostname', label: 'Hostname' },
  { key: 'host_id', label: 'Host id' },
  { key: 'connection_state', label: 'State' },
  { key: 'last_seen', label: 'Last seen' },
  { key: 'agent_version', label: 'Agent version' },
  { key: undefined, label: 'Platform' },
  { key: undefined, label: 'Last disconnect' },
  { key: 'accepted_seq', label: 'Accepted seq' },
  { key: undefined, label: 'Buffer' },
  { key: undefined, label: 'Server' },
];

let firstViewMarked = false;

const SORT_KEYS = COLUMNS.flatMap((c) => (c.key === undefined ? [] : [c.key]));
const defaultOrder = (key: SortKey): 'asc' | 'desc' => (key === 'last_seen' || key === 'accepted_seq' ? 'desc' : 'asc');

/**
 * What the fleet page shows (filter, state, sort, page), kept in the URL fragment
 * (#/?q=web-&state=Disconnected&offset=200): Back from a host's page, a reload or a link shows
 * the same view (before, each of them went back to the first page of all hosts). Never a secret.
 */
interface FleetView {
  q: string;
  state: ConnectionState | '';
  sort: SortKey;
  order: 'asc' | 'desc';
  offset: number;
}

/** A fragment the fleet page answers: #/ or #/?… (main.tsx parseRoute). */
const isFleetHash = (hash: string): boolean => /^#?(\/(\?.*)?)?$/.test(hash);

function viewFromHash(hash: string): FleetView {
  const at = hash.indexOf('?');
  const p = new URLSearchParams(at < 0 ? '' : hash.slice(at + 1));
  const state = p.get('state') ?? '';
  const sort = (SORT_KEYS as string[]).includes(p.get('sort') ?? '') ? (p.get('sort') as SortKey) : 'hostname';
  const order = p.get('order');
  const offset = Number(p.get('offset') ?? '0');
  return {
    q: (p.get('q') ?? '').trim().slice(0, 200),
    state: (STATES as string[]).includes(state) ? (state as ConnectionState) : '',
    sort,
    order: order === 'asc' || order === 'desc' ? order : defaultOrder(sort),
    offset: Number.isSafeInteger(offset) && offset > 0 ? offset - (offset % PAGE) : 0,
  };
}

function viewHash(v: FleetView): string {
  const p = new URLSearchParams();
  if (v.q !== '') p.set('q', v.q);
  if (v.state !== '') p.set('state', v.state);
  if (v.sort !== 'hostname') p.set('sort', v.sort);
  if (v.order !== defaultOrder(v.sort)) p.set('order', v.order);
  if (v.offset > 0) p.set('offset', String(v.offset));
  const text = p.toString();
  return text === '' ? '#/' : `#/?${text}`;
}

export function FleetPage() {
  const [initial] = useState(() => viewFromHash(location.hash));
  const [text, setText] = useState(initial.q);
  const [query, setQuery] = useState(initial.q);
  const [state, setState] = useState<ConnectionState | ''>(initial.state);
  const [sort, setSort] = useState<SortKey>(initial.sort);
  const [order, setOrder] = useState<'asc' | 'desc'>(initial.order);
  const [offset, setOffset] = useState(initial.offset);
  const [rows, setRows] = useState<Agent[] | undefined>();
  const [total, setTotal] = useState(0);
  const [summary, setSummary] = useState<FleetSummary | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [now, setNow] = useState(Date.now());
  const generation = useRef(0);

  // Debounce typing into the filter (a new filter starts at its first page).
  useEffect(() => {
    const t = setTimeout(() => {
      if (text.trim() === query) return;
      setQuery(text.trim());
      setOffset(0);
    }, 200);
    return () => clearTimeout(t);
  }, [text]);

  // The view in the URL (replaced, not pushed: Back leaves the fleet, as before) ...
  useEffect(() => {
    const hash = viewHash({ q: query, state, sort, order, offset });
    if (isFleetHash(location.hash) && location.hash !== hash && !(hash === '#/' && (location.hash === '' || location.hash === '#'))) history.replaceState(history.state, '', hash);
  }, [query, state, sort, order, offset]);

  // ... and a fleet URL opened while the page shows (the Fleet link, a pasted link) shown.
  useEffect(() => {
    const on = (): void => {
      if (!isFleetHash(location.hash)) return;
      const v = viewFromHash(location.hash);
      setText(v.q);
      setQuery(v.q);
      setState(v.state);
      setSort(v.sort);
      setOrder(v.order);
      setOffset(v.offset);
    };
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);

  useEffect(() => {
    const gen = ++generation.current;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function load(): Promise<void> {
      try {
        const [list, fleet] = await Promise.all([
          request<Agent[]>('GET', `/admin/agents${qs({ q: query, state, sort, order, limit: PAGE, offset })}`),
          get<FleetSummary>('/admin/fleet'),
        ]);
        if (gen !== generation.current) return;
        const count = Number(list.headers.get('X-Total-Count') ?? list.body.length);
        if (list.body.length === 0 && offset > 0 && count > 0) {
          // the page is past the end (hosts went meanwhile): to the last page that has rows (J12)
          setOffset(Math.floor((count - 1) / PAGE) * PAGE);
          return;
        }
        setRows(list.body);
        setTotal(count);
        setSummary(fleet);
        setNow(Date.parse(fleet.server_time) || Date.now());
        setError(undefined);
      } catch (e) {
        if (gen !== generation.current) return;
        setError(e instanceof ApiError ? e.message : String(e));
        // a filter the server refuses (400) leaves no rows of the one before under its error;
        // a server out of reach keeps them (the page says it is trying again)
        if (e instanceof ApiError && e.status === 400) setRows(undefined);
      }
      if (gen === generation.current) timer = setTimeout(() => void load(), POLL_MS);
    }
    void load();
    return () => {
      generation.current++;
      clearTimeout(timer);
    };
  }, [query, state, sort, order, offset]);

  useEffect(() => {
    if (rows !== undefined && !firstViewMarked) {
      firstViewMarked = true;
      performance.mark('cortex:first-view');
      document.body.dataset['firstView'] = String(Math.round(performance.now()));
    }
  }, [rows]);

  // Servers that report which one holds each session (server_id) get a column for it.
  const withServer = (rows ?? []).some((a) => a.server_id !== undefined);

  function sortBy(key: SortKey): void {
    if (sort === key) setOrder(order === 'asc' ? 'desc' : 'asc');
    else {
      setSort(key);
      setOrder(defaultOrder(key));
    }
    setOffset(0);
  }

  return (
    <>
      <h1>Fleet</h1>
      <section aria-label="Agents per state" class="counts">
        <button type="button" class={`count ${state === '' ? 'selected' : ''}`} aria-pressed={state === ''} onClick={() => { setState(''); setOffset(0); }}>
          <span class="n">{summary?.total ?? '…'}</span> All
        </button>
        {STATES.map((s) => (
          <button type="button" key={s} class={`count count-${s} ${state === s ? 'selected' : ''}`} aria-pressed={state === s} onClick={() => { setState(state === s ? '' : s); setOffset(0); }} data-state={s}>
            <span class="n">{summary?.by_state[s] ?? '…'}</span> {STATE_LABEL[s]}
          </button>
        ))}
      </section>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label for="fleet-filter">Filter by hostname or host id</label>
        <input id="fleet-filter" type="search" maxLength={200} value={text} onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)} placeholder="e.g. web-" />
        <label for="fleet-state">State</label>
        <select id="fleet-state" value={state} onChange={(e) => { setState((e.currentTarget as HTMLSelectElement).value as ConnectionState | ''); setOffset(0); }}>
          <option value="">All states</option>
          {STATES.map((s) => (
            <option key={s} value={s}>{STATE_LABEL[s]}</option>
          ))}
        </select>
      </form>
      <ErrorText error={error} />
      <p class="summary" aria-live="polite">
        {rows === undefined ? (error === undefined ? 'Loading agents…' : 'Agents not loaded; trying again.') : total === 0 ? (query !== '' || state !== '' ? 'No agent matches the filter.' : 'No agents yet: enroll one from "Enroll a host".') : `Agents ${offset + 1}–${offset + rows.length} of ${total}`}
      </p>
      <div class="table-wrap">
        <table class="fleet" aria-label="Agents">
          <thead>
            <tr>
              {COLUMNS.filter((c) => c.label !== 'Server' || withServer).map((c) => (
                <th key={c.label} scope="col" aria-sort={c.key !== undefined && c.key === sort ? (order === 'asc' ? 'ascending' : 'descending') : undefined}>
                  {c.key === undefined ? c.label : (
                    <button type="button" class="sort" onClick={() => sortBy(c.key as SortKey)}>
                      {c.label}
                      <span aria-hidden="true">{c.key === sort ? (order === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                    </button>
                  )}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {(rows ?? []).map((a) => (
              <tr key={a.host_id} data-host-id={a.host_id}>
                <td><a href={`#/hosts/${a.host_id}`}><Visible text={a.hostname} /></a></td>
                <td class="mono">{a.host_id}</td>
                <td><StateBadge state={a.connection_state} /></td>
                <td title={a.last_seen ?? ''}>{relativeTime(a.last_seen, now)}</td>
                <td>{a.agent_version === null ? '—' : <Visible text={a.agent_version} />}</td>
                <td><Visible text={platformText(a.platform_json)} /></td>
                <td title={a.last_disconnect ?? ''}><Visible text={disconnectText(a, now)} /></td>
                <td class="num">{a.accepted_seq}</td>
                <td class="num">{a.buffer === null ? '—' : `${a.buffer.queue_depth} (${bytes(a.buffer.buffer_bytes)})`}</td>
                {withServer && <td>{a.server_id == null ? '—' : <Visible text={a.server_id} />}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>Previous page</button>
        <button type="button" disabled={offset + PAGE >= total} onClick={() => setOffset(offset + PAGE)}>Next page</button>
      </nav>
    </>
  );
}

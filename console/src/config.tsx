// The host's AgentConfig as a JSON editor, validated in the browser by the contract's
// generated validator (and the server's max_batch_entries cap) before it is sent.
//
// Saving is conditional (DECISIONS J13): the PUT (and the DELETE of "Use the server default")
// carries If-Match with the version the editor's text was based on, so a change someone else
// made meanwhile (another tab, another operator, another server) is never overwritten unseen.
// On 412 the editor keeps what was typed and shows the config stored now beside it; the
// operator either loads it (their text stays on the page) or keeps their text, to save it over
// that version on purpose.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { describeIssues, toIssues, validateAgentConfig, type ValidationIssue } from '@cortex/agent-protocol';
import { ApiError, configTag, request, type ConfigView, type Reply } from './api.js';
import { ErrorText } from './components.js';

function check(text: string, cap: number): { ok: true; value: unknown } | { ok: false; issues: ValidationIssue[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { ok: false, issues: [{ path: '', message: `is not valid JSON: ${(e as Error).message}` }] };
  }
  if (!validateAgentConfig(parsed)) return { ok: false, issues: toIssues(validateAgentConfig.errors) };
  if (parsed.max_batch_entries > cap) return { ok: false, issues: [{ path: '/max_batch_entries', message: `must be <= ${cap} (the server's max_batch_entries)` }] };
  return { ok: true, value: parsed };
}

const pretty = (v: ConfigView): string => JSON.stringify(v.stored ?? v.effective, null, 2);

/** How often an open editor checks that the stored config is still the one it loaded (also on focus). */
export const STALE_CHECK_MS = 15_000;

/** What a removal of the host's own config left it running (the DELETE's answer). */
function clearedText(v: ConfigView): string {
  if (v.source === 'group') return `This host's own config is removed: it runs the config of its group ${v.group ?? ''} now (version ${v.config_version}).`;
  if (v.group !== null && v.group !== undefined) return `This host's own config is removed; its group ${v.group} has no config, so it runs the server default (version ${v.config_version}).`;
  return `Back to the server default (version ${v.config_version}).`;
}

/**
 * What the operator typed and has not saved, kept per host in the tab's sessionStorage with the
 * version it was based on: a session that ends (signed out in another tab, expired, the admin
 * token changed), a reload, Back or a click on "← Fleet" no longer throws it away. The host's
 * page puts it back in the editor, based on the version it was typed against (a save still
 * carries that If-Match, so a change someone made meanwhile is shown, never overwritten unseen).
 */
interface Draft {
  text: string;
  etag: string;
  view: ConfigView;
}

const draftKey = (hostId: string): string => `cortex.config-draft.${hostId}`;

function readDraft(hostId: string): Draft | undefined {
  try {
    const d = JSON.parse(sessionStorage.getItem(draftKey(hostId)) ?? 'null') as Partial<Draft> | null;
    if (typeof d?.text !== 'string' || typeof d.etag !== 'string' || typeof d.view?.config_version !== 'number') return undefined;
    return d as Draft;
  } catch {
    return undefined; // storage off or junk in it: no draft
  }
}

function keepDraft(hostId: string, draft: Draft | undefined): void {
  try {
    if (draft === undefined) sessionStorage.removeItem(draftKey(hostId));
    else sessionStorage.setItem(draftKey(hostId), JSON.stringify(draft));
  } catch {
    // storage off or full: the text stays in the editor only, as before
  }
}

/** The config stored now, after a save was refused because it changed (412). */
interface Conflict {
  current: ConfigView;
  etag: string;
}

export function ConfigEditor(props: { hostId: string; revoked: boolean }) {
  const path = `/admin/agents/${props.hostId}/config`;
  const [view, setView] = useState<ConfigView | undefined>();
  /** The version the editor's text is based on (If-Match of the next save). */
  const [etag, setEtag] = useState<string | undefined>();
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [conflict, setConflict] = useState<Conflict | undefined>();
  /** The config stored now, when someone changed it since the editor loaded it (found by a check, before any save). */
  const [stale, setStale] = useState<Conflict | undefined>();
  const etagRef = useRef<string | undefined>();
  const busyRef = useRef(false);
  /** What the editor held before the operator loaded the stored config over it. */
  const [previous, setPrevious] = useState<string | undefined>();
  /** The version of an unsaved text put back from the tab's storage (Draft), while its notice shows. */
  const [restored, setRestored] = useState<number | undefined>();
  /** The text as loaded from the server: the editor holds a draft when its text differs. */
  const loaded = useRef<string | undefined>();

  function show(r: Reply<ConfigView>): void {
    loaded.current = pretty(r.body);
    setView(r.body);
    setBase(configTag(r));
    setText(pretty(r.body));
    setRestored(undefined);
  }

  /** The version the editor's text is based on, for the checks below too. */
  function setBase(tag: string): void {
    etagRef.current = tag;
    setEtag(tag);
    setStale(undefined);
  }

  useEffect(() => {
    request<ConfigView>('GET', path).then((r) => {
      const draft = readDraft(props.hostId);
      if (draft === undefined || draft.text === pretty(r.body)) {
        keepDraft(props.hostId, undefined);
        show(r);
        return;
      }
      // the unsaved text, based on the version it was typed against; a newer stored one is said at once
      loaded.current = pretty(draft.view);
      setView(draft.view);
      setBase(draft.etag);
      setText(draft.text);
      setRestored(draft.view.config_version);
      if (configTag(r) !== draft.etag) setStale({ current: r.body, etag: configTag(r) });
    }, (e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [props.hostId]);

  useEffect(() => {
    if (view === undefined || etag === undefined || loaded.current === undefined) return;
    keepDraft(props.hostId, text === loaded.current ? undefined : { text, etag, view });
  }, [props.hostId, text, etag, view]);

  /** Drops the unsaved text that was put back, and loads the config stored now. */
  function discardRestored(): void {
    keepDraft(props.hostId, undefined);
    request<ConfigView>('GET', path).then(show, (e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }

  // Another operator (another tab, another server) may save meanwhile: the editor checks the
  // stored version when its window regains focus and every STALE_CHECK_MS, and says when it
  // moved on, with a way to load it; what is typed stays. A failed check says nothing (the
  // next one, or the save's 412, will).
  useEffect(() => {
    let gone = false;
    const check = (): void => {
      if (busyRef.current || etagRef.current === undefined || document.visibilityState === 'hidden') return;
      const based = etagRef.current;
      request<ConfigView>('GET', path).then(
        (r) => {
          if (gone || busyRef.current || etagRef.current !== based) return;
          const tag = configTag(r);
          setStale(tag === based ? undefined : { current: r.body, etag: tag });
        },
        () => undefined,
      );
    };
    const onVisible = (): void => {
      if (document.visibilityState === 'visible') check();
    };
    const timer = setInterval(check, STALE_CHECK_MS);
    addEventListener('focus', check);
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      gone = true;
      clearInterval(timer);
      removeEventListener('focus', check);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [props.hostId]);

  const verdict = useMemo(() => (view === undefined ? undefined : check(text, view.max_batch_entries_cap)), [text, view]);

  /** A save or clear under If-Match; on 412 the stored config is fetched and shown, the text left as it is. */
  async function write(method: 'PUT' | 'DELETE', body: unknown, done: (v: ConfigView) => string): Promise<void> {
    setBusy(true);
    busyRef.current = true;
    setError(undefined);
    setSaved(undefined);
    try {
      const r = await request<ConfigView>(method, path, body, etag !== undefined ? { 'If-Match': etag } : {});
      show(r);
      setPrevious(undefined);
      setSaved(done(r.body));
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) {
        try {
          const now = await request<ConfigView>('GET', path);
          setStale(undefined);
          setConflict({ current: now.body, etag: configTag(now) });
        } catch (again) {
          setError(`${err.message} (reloading it failed too: ${again instanceof ApiError ? again.message : String(again)})`);
        }
      } else {
        setError(err instanceof ApiError ? err.message : String(err));
      }
    } finally {
      setBusy(false);
      busyRef.current = false;
    }
  }

  async function save(e: Event): Promise<void> {
    e.preventDefault();
    if (verdict === undefined || !verdict.ok || conflict !== undefined) return;
    await write('PUT', { config: verdict.value }, (v) => `Saved as version ${v.config_version}; a connected agent receives it within 2 s.`);
  }

  async function clear(): Promise<void> {
    await write('DELETE', undefined, clearedText);
  }

  /** Loads the stored config into the editor; the operator's text stays on the page. */
  function loadCurrent(c: Conflict): void {
    setPrevious(text);
    loaded.current = pretty(c.current);
    setView(c.current);
    setBase(c.etag);
    setText(pretty(c.current));
    setConflict(undefined);
    setSaved(`Loaded version ${c.current.config_version}, the config stored now. Your text is kept below.`);
  }

  /** Keeps the operator's text and bases it on the stored version: the next save replaces that version. */
  function keepMine(c: Conflict): void {
    setView(c.current);
    setBase(c.etag);
    setConflict(undefined);
    setSaved(`Your text is kept and now based on version ${c.current.config_version}: Save config stores it over that version.`);
  }

  return (
    <section aria-labelledby="h-config" class="card">
      <h2 id="h-config">Config</h2>
      {view === undefined ? (
        error !== undefined ? <ErrorText error={error} /> : <p>Loading…</p>
      ) : (
        <form onSubmit={(e) => void save(e)}>
          <p class="help">
            {view.source === 'host'
              ? 'This host has its own config'
              : view.source === 'group'
                ? `This host runs the config of its group ${view.group ?? ''}`
                : view.source === 'default'
                  ? 'This host uses the server default'
                  : `Staged: applies after ${view.apply_after}`}{' '}
            (version {view.config_version}). A complete AgentConfig; max_batch_entries at most {view.max_batch_entries_cap}.
          </p>
          {restored !== undefined && (
            <div class="notice" role="status">
              <p>Your unsaved text from before (based on version {restored}) is back in the editor; Save config stores it.</p>
              <button type="button" onClick={discardRestored}>Discard it and load the stored config</button>
            </div>
          )}
          <label for="config-json">AgentConfig (JSON)</label>
          <textarea id="config-json" rows={14} spellcheck={false} value={text} onInput={(e) => { setText((e.currentTarget as HTMLTextAreaElement).value); setSaved(undefined); }} aria-invalid={verdict !== undefined && !verdict.ok} aria-describedby="config-issues" />
          <div id="config-issues" aria-live="polite">
            {verdict !== undefined && !verdict.ok && (
              <ul class="issues">
                {verdict.issues.slice(0, 8).map((i) => (
                  <li key={`${i.path} ${i.message}`}><code>{i.path === '' ? '(root)' : i.path}</code> {i.message}</li>
                ))}
              </ul>
            )}
            {verdict !== undefined && verdict.ok && <p class="ok">Valid AgentConfig.</p>}
          </div>
          {conflict !== undefined && (
            <div class="conflict" role="alert">
              <p class="error">
                Not saved: someone else changed this host's config after you loaded it (you loaded version {view.config_version}; it is version {conflict.current.config_version} now). Your text is still in the editor.
              </p>
              <p class="help" aria-hidden="true">Config stored now (version {conflict.current.config_version}):</p>
              <pre class="answer" aria-label={`Config stored now (version ${conflict.current.config_version})`}>{pretty(conflict.current)}</pre>
              <div class="buttons">
                <button type="button" onClick={() => loadCurrent(conflict)}>Load version {conflict.current.config_version} into the editor</button>
                <button type="button" onClick={() => keepMine(conflict)}>Keep my text, to save over version {conflict.current.config_version}</button>
              </div>
            </div>
          )}
          {stale !== undefined && conflict === undefined && (
            <div class="stale notice" role="status">
              <p>
                The stored config changed since you loaded it: someone saved version {stale.current.config_version} (you loaded version {view.config_version}
                {stale.current.source !== view.source ? `; this host now ${stale.current.source === 'group' ? `runs the config of its group ${stale.current.group ?? ''}` : stale.current.source === 'default' ? 'uses the server default' : stale.current.source === 'host' ? 'has its own config' : 'has a staged config'}` : ''}). Your text is still in the editor; saving it now would be refused.
              </p>
              <div class="buttons">
                <button type="button" onClick={() => loadCurrent(stale)}>Load version {stale.current.config_version} into the editor</button>
                <button type="button" onClick={() => keepMine(stale)}>Keep my text, to save over version {stale.current.config_version}</button>
              </div>
            </div>
          )}
          <ErrorText error={error} />
          {saved !== undefined && <p role="status" class="ok">{saved}</p>}
          <div class="buttons">
            <button
              type="submit"
              class="primary"
              disabled={busy || props.revoked || conflict !== undefined || verdict === undefined || !verdict.ok}
              title={conflict !== undefined ? 'The config changed since you loaded it: load it, or keep your text, above' : verdict !== undefined && !verdict.ok ? describeIssues(verdict.issues) : undefined}
            >
              Save config
            </button>
            {/* Removing the host's own config leaves it its group's, when it is in one (DECISIONS J13's DELETE). */}
            <button type="button" disabled={busy || props.revoked || conflict !== undefined || view.stored === null} onClick={() => void clear()}>
              {view.group !== null && view.group !== undefined ? `Use the config of group ${view.group}` : 'Use the server default'}
            </button>
          </div>
          {previous !== undefined && (
            <details class="previous">
              <summary>Your text before you loaded the stored config</summary>
              <pre class="answer" aria-label="Your text before you loaded the stored config">{previous}</pre>
              <button type="button" onClick={() => { setText(previous); setPrevious(undefined); setSaved(undefined); }}>Put it back in the editor</button>
            </details>
          )}
        </form>
      )}
    </section>
  );
}

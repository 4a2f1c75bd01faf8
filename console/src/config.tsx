// The host's AgentConfig as a JSON editor, validated in the browser by the contract's
// generated validator (and the server's max_batch_entries cap) before it is sent.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { describeIssues, toIssues, validateAgentConfig, type ValidationIssue } from '@cortex/agent-protocol';
import { ApiError, del, get, put, type ConfigView } from './api.js';
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

export function ConfigEditor(props: { hostId: string; revoked: boolean }) {
  const [view, setView] = useState<ConfigView | undefined>();
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  function show(v: ConfigView): void {
    setView(v);
    setText(JSON.stringify(v.stored ?? v.effective, null, 2));
  }

  useEffect(() => {
    get<ConfigView>(`/admin/agents/${props.hostId}/config`).then(show, (e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, [props.hostId]);

  const verdict = useMemo(() => (view === undefined ? undefined : check(text, view.max_batch_entries_cap)), [text, view]);

  async function save(e: Event): Promise<void> {
    e.preventDefault();
    if (verdict === undefined || !verdict.ok) return;
    setBusy(true);
    setError(undefined);
    setSaved(undefined);
    try {
      const v = await put<ConfigView>(`/admin/agents/${props.hostId}/config`, { config: verdict.value });
      show(v);
      setSaved(`Saved as version ${v.config_version}; a connected agent receives it within 2 s.`);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  async function clear(): Promise<void> {
    setBusy(true);
    setError(undefined);
    try {
      const v = await del<ConfigView>(`/admin/agents/${props.hostId}/config`);
      show(v);
      setSaved(`Back to the server default (version ${v.config_version}).`);
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="h-config" class="card">
      <h2 id="h-config">Config</h2>
      {view === undefined ? <p>Loading…</p> : (
        <form onSubmit={(e) => void save(e)}>
          <p class="help">
            {view.source === 'host' ? 'This host has its own config' : view.source === 'default' ? 'This host uses the server default' : `Staged: applies after ${view.apply_after}`} (version {view.config_version}). A complete AgentConfig; max_batch_entries at most {view.max_batch_entries_cap}.
          </p>
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
          <ErrorText error={error} />
          {saved !== undefined && <p role="status" class="ok">{saved}</p>}
          <div class="buttons">
            <button type="submit" class="primary" disabled={busy || props.revoked || verdict === undefined || !verdict.ok} title={verdict !== undefined && !verdict.ok ? describeIssues(verdict.issues) : undefined}>
              Save config
            </button>
            <button type="button" disabled={busy || props.revoked || view.source === 'default'} onClick={() => void clear()}>
              Use the server default
            </button>
          </div>
        </form>
      )}
    </section>
  );
}

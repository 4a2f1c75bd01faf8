// Probes: a form generated from each probe's args schema (GET /admin/probes), checked by the
// contract's generated args validator before it is sent; the answer shown formatted.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { PROBES, describeIssues, toIssues } from '@cortex/agent-protocol';
import { ApiError, get, post, type JsonSchema, type ProbeInfo } from './api.js';
import { ErrorText } from './components.js';

let catalog: Promise<ProbeInfo[]> | undefined;

function typeOf(s: JsonSchema): string {
  if (s.enum !== undefined) return 'enum';
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== 'null') : s.type;
  return t ?? 'json';
}

/** Field text → the value the schema wants; undefined leaves the property out. */
function convert(s: JsonSchema, raw: string | boolean): unknown {
  const t = typeOf(s);
  if (t === 'boolean') return raw === true ? true : undefined;
  if (typeof raw !== 'string' || raw === '') return undefined;
  if (t === 'integer' || t === 'number') return Number(raw);
  if (t === 'enum') {
    const hit = (s.enum ?? []).find((e) => String(e) === raw);
    return hit;
  }
  if (t === 'string') return raw;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

function Field(props: { name: string; schema: JsonSchema; required: boolean; value: string | boolean; onChange(v: string | boolean): void; probe: string }) {
  const id = `probe-${props.probe}-${props.name}`.replace(/[^A-Za-z0-9_-]/g, '-');
  const t = typeOf(props.schema);
  const help = props.schema.description;
  const label = (
    <label for={id}>
      {props.name}
      {props.required ? <span aria-hidden="true"> *</span> : null}
    </label>
  );
  if (t === 'boolean') {
    return (
      <div class="field check">
        <input id={id} type="checkbox" checked={props.value === true} onChange={(e) => props.onChange((e.currentTarget as HTMLInputElement).checked)} />
        {label}
        {help !== undefined && <p class="help">{help}</p>}
      </div>
    );
  }
  return (
    <div class="field">
      {label}
      {t === 'enum' ? (
        <select id={id} value={String(props.value)} onChange={(e) => props.onChange((e.currentTarget as HTMLSelectElement).value)} required={props.required}>
          <option value="">{props.required ? 'choose…' : 'default'}</option>
          {(props.schema.enum ?? []).map((v) => (
            <option key={String(v)} value={String(v)}>{String(v)}</option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          type={t === 'integer' || t === 'number' ? 'number' : 'text'}
          value={String(props.value)}
          required={props.required}
          {...(props.schema.minimum !== undefined ? { min: props.schema.minimum } : {})}
          {...(props.schema.maximum !== undefined ? { max: props.schema.maximum } : {})}
          {...(t === 'integer' ? { step: 1 } : {})}
          onInput={(e) => props.onChange((e.currentTarget as HTMLInputElement).value)}
          placeholder={t === 'json' ? 'JSON' : undefined}
        />
      )}
      {help !== undefined && <p class="help">{help}</p>}
    </div>
  );
}

/** The agent's error codes (generated/PROTOCOL.md), by name, for the message. */
const CODE_NAME: Record<number, string> = { [-32602]: 'InvalidParams', [-32603]: 'InternalError', [-32004]: 'UnknownHost', [-32010]: 'ProbeUnavailable', [-32011]: 'ProbeExecutionFailed', [-32012]: 'ProbeTimeout' };

/**
 * A probe's failure as a sentence: what went wrong (the reason the error's data gives, never
 * its raw JSON) and what to do, in the words `cortex-server probe` uses for its hints
 * (server/cli/probe.ts, docs/cli.md).
 */
export function probeErrorText(err: ApiError, probe: string): string {
  const { code, message } = err.body;
  const data = (typeof err.body.data === 'object' && err.body.data !== null ? err.body.data : {}) as {
    reason?: unknown;
    message?: unknown;
    stderr?: unknown;
    exit_code?: unknown;
    errors?: { path?: unknown; message?: unknown; keyword?: unknown }[];
  };
  const issues = Array.isArray(data.errors) ? data.errors : [];
  const issueText = issues
    .slice(0, 4)
    .map((i) => `${typeof i.path === 'string' && i.path !== '' ? `${i.path.replace(/^\/args\//, '')} ` : ''}${typeof i.message === 'string' ? i.message : ''}`.trim())
    .filter((t) => t !== '')
    .join('; ');
  const why = issueText !== '' ? issueText : typeof data.reason === 'string' ? data.reason : typeof data.message === 'string' ? data.message : typeof data.stderr === 'string' && data.stderr !== '' ? data.stderr.slice(0, 300) : '';
  const what = `${CODE_NAME[code] ?? (code === err.status ? `HTTP ${code}` : String(code))}${why !== '' ? `: ${why}` : message !== CODE_NAME[code] ? `: ${message}` : ''}`;
  let hint: string | undefined;
  if (issues.some((i) => i.keyword === 'allowedPaths')) {
    hint = `the ${probe} probe reads only below the agent's probe_file_tail_paths (in its agent.json; default ["/var/log"]): pick a file below one of them, or add the folder there on the host and restart the agent`;
  } else if (err.status === 502) {
    hint =
      code === -32602
        ? "the host's agent refused the arguments: see the reason for what is wrong (each probe's arguments: generated/PROTOCOL.md, Probes)"
        : code === -32010
          ? "the host's agent does not have this probe (a site build without it, or an older agent)"
          : code === -32603
            ? 'the probe failed inside the host\'s agent (a bug: the agent logged it at error level; report it)'
            : 'the probe ran on the host and failed: see the reason';
  } else if (err.status === 504) {
    hint = 'the host did not answer in time: check it, or give a longer timeout';
  }
  return hint === undefined ? what : `${what}. ${hint.charAt(0).toUpperCase()}${hint.slice(1)}.`;
}

export function ProbePanel(props: { hostId: string; supported: string[] | undefined; active: boolean }) {
  const [probes, setProbes] = useState<ProbeInfo[] | undefined>();
  const [name, setName] = useState('');
  const [values, setValues] = useState<Record<string, string | boolean>>({});
  const [timeout, setTimeoutMs] = useState('10000');
  const [answer, setAnswer] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    catalog ??= get<ProbeInfo[]>('/admin/probes');
    catalog.then(setProbes, (e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, []);

  const offered = useMemo(() => (probes ?? []).filter((p) => props.supported === undefined || props.supported.includes(p.name)), [probes, props.supported]);
  useEffect(() => {
    if (name === '' && offered.length > 0) setName((offered[0] as ProbeInfo).name);
  }, [offered, name]);
  const probe = offered.find((p) => p.name === name);

  const args = useMemo(() => {
    const out: Record<string, unknown> = {};
    for (const [k, s] of Object.entries(probe?.args_schema.properties ?? {})) {
      const v = convert(s, values[k] ?? '');
      if (v !== undefined) out[k] = v;
    }
    return out;
  }, [probe, values]);
  const validator = PROBES.find((p) => p.name === name)?.validateArgs;
  const problems = validator !== undefined && !validator(args) ? describeIssues(toIssues(validator.errors), 4) : undefined;

  async function run(e: Event): Promise<void> {
    e.preventDefault();
    if (probe === undefined || problems !== undefined) return;
    setBusy(true);
    setError(undefined);
    setAnswer(undefined);
    try {
      const out = await post<unknown>(`/admin/agents/${props.hostId}/probe`, { probe: probe.name, args, timeout_ms: Number(timeout) });
      setAnswer(JSON.stringify(out, null, 2));
    } catch (err) {
      setError(err instanceof ApiError ? probeErrorText(err, probe.name) : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="h-probe" class="card">
      <h2 id="h-probe">Run a probe</h2>
      {probes === undefined ? <p>Loading…</p> : offered.length === 0 ? <p>This host declares no probe this server knows.</p> : (
        <form onSubmit={(e) => void run(e)}>
          <div class="field">
            <label for="probe-name">Probe</label>
            <select id="probe-name" value={name} onChange={(e) => { setName((e.currentTarget as HTMLSelectElement).value); setValues({}); setAnswer(undefined); setError(undefined); }}>
              {offered.map((p) => (
                <option key={p.name} value={p.name}>{p.name}</option>
              ))}
            </select>
            {probe !== undefined && <p class="help">{probe.summary}</p>}
          </div>
          {probe !== undefined && (
            <fieldset>
              <legend>Arguments of {probe.name}</legend>
              {Object.keys(probe.args_schema.properties ?? {}).length === 0 && <p class="help">No arguments.</p>}
              {Object.entries(probe.args_schema.properties ?? {}).map(([k, s]) => (
                <Field key={`${probe.name}.${k}`} probe={probe.name} name={k} schema={s} required={(probe.args_schema.required ?? []).includes(k)} value={values[k] ?? ''} onChange={(v) => setValues({ ...values, [k]: v })} />
              ))}
            </fieldset>
          )}
          <div class="field">
            <label for="probe-timeout">Timeout (ms)</label>
            <input id="probe-timeout" type="number" min={1} step={1} value={timeout} onInput={(e) => setTimeoutMs((e.currentTarget as HTMLInputElement).value)} />
          </div>
          {problems !== undefined && <p class="issues-inline" aria-live="polite">Arguments: {problems}</p>}
          <button type="submit" class="primary" disabled={busy || !props.active || problems !== undefined}>
            {busy ? 'Running…' : `Run ${name}`}
          </button>
          {!props.active && <p class="help">The host is not connected: probes need a live session.</p>}
        </form>
      )}
      <ErrorText error={error} />
      {answer !== undefined && (
        <div role="status">
          <h3>Answer</h3>
          <pre class="answer" tabIndex={0} aria-label="Probe answer">{answer}</pre>
        </div>
      )}
    </section>
  );
}

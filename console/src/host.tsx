// Host page: details and capabilities, metrics charts, live tail, stored-log search, the
// config editor, probes and the host actions (each confirmed in a dialog naming the host).
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, post, type AgentDetail, type IssuedToken } from './api.js';
import { ConfirmDialog, ErrorText, StateBadge, Visible, visibleText } from './components.js';
import { IssuedCard } from './issued.js';
import { ConfigEditor } from './config.js';
import { LogSearch } from './logsearch.js';
import { MetricsPanel } from './metrics.js';
import { ProbePanel } from './probe.js';
import { LiveTail } from './tail.js';
import { bytes, disconnectText, plural, relativeTime } from './util.js';

type Action = 'rotate' | 'revoke' | 'decommission' | 'token';

const ACTIONS: Record<Action, { label: string; verb: string; danger: boolean; explain: string }> = {
  rotate: { label: 'Rotate token', verb: 'Rotate', danger: false, explain: 'Its next hello gets a new token; a connected agent is asked to reconnect now. The old token keeps working for the grace window.' },
  revoke: { label: 'Revoke', verb: 'Revoke', danger: true, explain: 'Both tokens stop working at once; a live session is closed (4002). Undo only by issuing a new enrollment token.' },
  decommission: { label: 'Decommission', verb: 'Decommission', danger: true, explain: 'A connected agent drains what it holds (30 s) and is then revoked; a host not connected is revoked now. Its log rows are kept.' },
  token: { label: 'New enrollment token', verb: 'Issue a new token for', danger: true, explain: 'The host goes back to "never connected": its current token stops working until it enrolls again with the new one.' },
};

export function HostPage(props: { hostId: string }) {
  const id = props.hostId;
  const [agent, setAgent] = useState<AgentDetail | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [confirm, setConfirm] = useState<Action | undefined>();
  const [result, setResult] = useState<string | undefined>();
  const [issued, setIssued] = useState<IssuedToken | undefined>();
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function load(): Promise<void> {
      try {
        const a = await get<AgentDetail>(`/admin/agents/${id}`);
        if (stop) return;
        setAgent(a);
        setNow(Date.now());
        setError(undefined);
      } catch (e) {
        if (stop) return;
        setError(e instanceof ApiError ? e.message : String(e));
      }
      if (!stop) timer = setTimeout(() => void load(), 2000);
    }
    void load();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [id]);

  async function act(action: Action): Promise<void> {
    setConfirm(undefined);
    setResult(undefined);
    setIssued(undefined);
    try {
      if (action === 'token') {
        setIssued(await post<IssuedToken>(`/admin/agents/${id}/token`));
      } else {
        const r = await post<{ message: string }>(`/admin/agents/${id}/${action}`);
        setResult(r.message);
      }
      setAgent(await get<AgentDetail>(`/admin/agents/${id}`));
    } catch (e) {
      setResult(e instanceof ApiError ? `Failed: ${e.message}` : String(e));
    }
  }

  if (agent === undefined) {
    return (
      <>
        <p><a href="#/">← Fleet</a></p>
        <h1>Host <span class="mono">{id}</span></h1>
        {error !== undefined ? <ErrorText error={error} /> : <p>Loading…</p>}
      </>
    );
  }
  const caps = agent.capabilities;
  const p = agent.platform;
  const name = `${visibleText(agent.hostname)} (${agent.host_id})`;
  return (
    <>
      <p><a href="#/">← Fleet</a></p>
      <h1>
        <Visible text={agent.hostname} /> <StateBadge state={agent.connection_state} />
      </h1>
      <ErrorText error={error} />
      <section aria-labelledby="h-actions" class="actions">
        <h2 id="h-actions" class="visually-hidden">Actions</h2>
        {(Object.keys(ACTIONS) as Action[]).map((a) => (
          <button type="button" key={a} class={ACTIONS[a].danger ? 'danger' : ''} onClick={() => setConfirm(a)} disabled={a !== 'token' && agent.connection_state === 'Revoked'}>
            {ACTIONS[a].label}
          </button>
        ))}
        {result !== undefined && <p role="status" class="result">{result}</p>}
        {issued !== undefined && (
          <p role="status" class="result">
            New one-time enrollment token for <Visible text={issued.hostname} />: shown below, only here.
          </p>
        )}
      </section>
      {issued !== undefined && (
        <IssuedCard
          issued={issued}
          titleId="h-reissued"
          title={<>New enrollment token for <Visible text={issued.hostname} /></>}
          lost="It is not stored by this page; if it is lost, issue a new one with New enrollment token."
        />
      )}
      <ConfirmDialog
        open={confirm !== undefined}
        title={confirm === undefined ? '' : `${ACTIONS[confirm].verb} ${name}?`}
        confirmLabel={confirm === undefined ? '' : `${ACTIONS[confirm].verb} ${visibleText(agent.hostname)}`}
        danger={confirm !== undefined && ACTIONS[confirm].danger}
        onConfirm={() => void act(confirm as Action)}
        onCancel={() => setConfirm(undefined)}
      >
        <p>{confirm === undefined ? '' : ACTIONS[confirm].explain}</p>
      </ConfirmDialog>

      <div class="grid">
        <section aria-labelledby="h-details" class="card">
          <h2 id="h-details">Details</h2>
          <dl class="details">
            <dt>Host id</dt><dd class="mono">{agent.host_id}</dd>
            <dt>Agent version</dt><dd>{agent.agent_version ?? '—'}</dd>
            <dt>Platform</dt><dd>{p === null ? '—' : [p.os, p.arch, p.kernel, p.distro].filter((x) => x !== undefined && x !== null).join(' · ')}</dd>
            <dt>Last seen</dt><dd title={agent.last_seen ?? ''}>{relativeTime(agent.last_seen, now)}</dd>
            <dt>Last handshake</dt><dd title={agent.last_handshake ?? ''}>{relativeTime(agent.last_handshake, now)}</dd>
            <dt>First seen</dt><dd title={agent.first_seen ?? ''}>{relativeTime(agent.first_seen, now)}</dd>
            <dt>Last disconnect</dt><dd title={agent.last_disconnect ?? ''}>{disconnectText(agent, now)}</dd>
            <dt>Accepted seq</dt><dd>{agent.accepted_seq}</dd>
            <dt>Buffer</dt><dd>{agent.buffer === null ? 'not reported to this server' : `${plural(agent.buffer.queue_depth, 'entry', 'entries')} queued, ${bytes(agent.buffer.buffer_bytes)}`}</dd>
            <dt>Session</dt><dd>{agent.session_id === null ? '—' : <span class="mono">{agent.session_id}</span>}{agent.connected_here ? ' (on this server)' : ''}{agent.server_id ? ` on ${agent.server_id}` : ''}</dd>
            <dt>Config version</dt><dd>{agent.config_version}</dd>
            {agent.rotate_requested_at !== null && (<><dt>Rotation</dt><dd>requested {relativeTime(agent.rotate_requested_at, now)}</dd></>)}
            {agent.decommission_requested_at !== null && (<><dt>Decommission</dt><dd>requested {relativeTime(agent.decommission_requested_at, now)}</dd></>)}
          </dl>
        </section>
        <section aria-labelledby="h-caps" class="card">
          <h2 id="h-caps">Capabilities</h2>
          {caps === null ? <p>Not known until the agent's first hello.</p> : (
            <dl class="details">
              <dt>Probes</dt><dd>{(caps.supported_probes ?? []).join(', ') || 'none'}</dd>
              <dt>Sources</dt><dd>{(caps.sources ?? []).join(', ') || 'none'}</dd>
              <dt>Max batch entries</dt><dd>{caps.max_batch_entries ?? '—'}</dd>
              <dt>Compression</dt><dd>{(caps.compression ?? []).join(', ') || 'none'}</dd>
            </dl>
          )}
        </section>
      </div>
      <MetricsPanel hostId={id} />
      <LiveTail hostId={id} />
      <LogSearch hostId={id} />
      <div class="grid">
        <ProbePanel hostId={id} supported={caps?.supported_probes} active={agent.connection_state === 'Active'} />
        <ConfigEditor hostId={id} revoked={agent.connection_state === 'Revoked'} />
      </div>
    </>
  );
}

// Enrollment: issue a token for a new host and show the exact `cortex-agent enroll` command
// (IssuedCard: the one that reads the token from stdin first, then the token).
// The token lives only in this component's memory: never in the URL, storage or a log.
import { useState } from 'preact/hooks';
import { ApiError, post, type IssuedToken } from './api.js';
import { ErrorText, Visible } from './components.js';
import { IssuedCard } from './issued.js';

export function EnrollPage() {
  const [hostname, setHostname] = useState('');
  const [issued, setIssued] = useState<IssuedToken | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function issue(e: Event): Promise<void> {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      setIssued(await post<IssuedToken>('/admin/agents', { hostname: hostname.trim() }));
      setHostname('');
    } catch (err) {
      setError(err instanceof ApiError ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <h1>Enroll a host</h1>
      <form class="card enroll" onSubmit={(e) => void issue(e)}>
        <label for="enroll-hostname">Hostname of the new host</label>
        <input id="enroll-hostname" value={hostname} required maxLength={255} pattern="[^\s]+" onInput={(e) => setHostname((e.currentTarget as HTMLInputElement).value)} aria-describedby="enroll-help" />
        <p id="enroll-help" class="help">Registers the host and issues a one-time enrollment token for it.</p>
        <button type="submit" class="primary" disabled={busy || hostname.trim() === ''}>Issue enrollment token</button>
      </form>
      <ErrorText error={error} />
      {issued !== undefined && (
        <IssuedCard
          key={issued.host_id}
          issued={issued}
          titleId="h-issued"
          title={<>Token for <Visible text={issued.hostname} /></>}
          lost="It is not stored by this page; after you leave it, issue a new one from the host's page if it is lost."
        >
          <dl class="details">
            <dt>Host id</dt><dd class="mono">{issued.host_id}</dd>
            <dt>Server URL</dt><dd class="mono">{issued.server_url}</dd>
          </dl>
          <p>Then start it with <code>cortex-agent run --state-dir /var/lib/cortex-agent</code>. <a href={`#/hosts/${issued.host_id}`}>Open the host's page</a>.</p>
        </IssuedCard>
      )}
    </>
  );
}

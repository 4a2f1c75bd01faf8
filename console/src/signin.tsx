// Sign-in: the admin token goes in a POST body once and comes back as an HttpOnly,
// SameSite=Strict cookie; the page never stores it.
import { useState } from 'preact/hooks';
import { ApiError, post, type SessionState } from './api.js';

export function SignIn(props: { mode: 'token' | 'loopback'; onSignedIn(s: SessionState): void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function submit(e: Event): Promise<void> {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const s = await post<SessionState>('/admin/session', props.mode === 'token' ? { token } : {});
      setToken('');
      props.onSignedIn(s);
    } catch (err) {
      setError(err instanceof ApiError ? (err.status === 401 || err.status === 400 ? 'That is not the admin token of this server.' : err.message) : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main id="main" class="page signin" tabIndex={-1}>
      <h1>Sign in to the Cortex console</h1>
      <form onSubmit={(e) => void submit(e)} method="post" action="javascript:void 0" autocomplete="off">
        <label for="admin-token">Admin token</label>
        <input
          id="admin-token"
          name="admin-token"
          type="password"
          autocomplete="current-password"
          required
          value={token}
          onInput={(e) => setToken((e.currentTarget as HTMLInputElement).value)}
          aria-describedby="admin-token-help"
          autofocus
        />
        <p id="admin-token-help" class="help">
          The server's <code>--admin-token</code>. It is exchanged for a session cookie and not kept by this page.
        </p>
        {error !== undefined && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy || token === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}

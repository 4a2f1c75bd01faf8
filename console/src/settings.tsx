// Server settings, read-only.
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get } from './api.js';
import { ErrorText } from './components.js';

export function SettingsPage() {
  const [settings, setSettings] = useState<Record<string, unknown> | undefined>();
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    get<Record<string, unknown>>('/admin/settings').then(setSettings, (e: unknown) => setError(e instanceof ApiError ? e.message : String(e)));
  }, []);
  return (
    <>
      <h1>Server settings</h1>
      <p class="help">Read-only: the effective settings of this server (config file, then flags). The admin token itself is never shown.</p>
      <ErrorText error={error} />
      {settings !== undefined && (
        <table class="settings" aria-label="Server settings">
          <tbody>
            {Object.entries(settings)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(([k, v]) => (
                <tr key={k}>
                  <th scope="row">{k}</th>
                  <td>{typeof v === 'object' && v !== null ? <pre>{JSON.stringify(v, null, 2)}</pre> : <code>{v === null || v === undefined ? '—' : String(v)}</code>}</td>
                </tr>
              ))}
          </tbody>
        </table>
      )}
    </>
  );
}

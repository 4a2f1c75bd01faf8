// Small formatting helpers.

/** "12 s ago", "3 min ago", "2 h ago", "4 d ago"; "never" for null. */
export function relativeTime(iso: string | null, now = Date.now()): string {
  if (iso === null) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 0) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/**
 * The last disconnect with when it was. For an Active host it belongs to an earlier session
 * (the enrollment's, a reconnect's): marked "earlier:", as `agent list` does (DECISIONS I7),
 * never shown as if it were the host's state.
 */
export function disconnectText(
  a: { connection_state: string; last_handshake: string | null; last_disconnect: string | null; last_disconnect_reason: string | null },
  now = Date.now(),
): string {
  if (a.last_disconnect === null) return '—';
  const earlier = a.connection_state === 'Active' && (a.last_handshake === null || a.last_disconnect <= a.last_handshake);
  return `${earlier ? 'earlier: ' : ''}${relativeTime(a.last_disconnect, now)}: ${a.last_disconnect_reason ?? ''}`.trimEnd();
}

export function platformText(json: string | null): string {
  if (json === null) return '—';
  try {
    const p = JSON.parse(json) as { os?: string; arch?: string; distro?: string | null };
    return [p.distro ?? p.os, p.arch].filter((x) => x !== undefined && x !== null && x !== '').join(' / ') || '—';
  } catch {
    return '—';
  }
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(1)} GiB`;
}

export const STATE_LABEL: Record<string, string> = {
  NeverConnected: 'Never connected',
  Active: 'Active',
  Disconnected: 'Disconnected',
  Revoked: 'Revoked',
};

/** A datetime-local input's value (local time) as RFC 3339 UTC, or undefined when empty. */
export function localToIso(v: string): string | undefined {
  if (v === '') return undefined;
  const t = new Date(v).getTime();
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

/** "1 line", "2 lines"; "1 entry", "2 entries" with the plural given. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

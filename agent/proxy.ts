// Reaching the server through an HTTP(S) proxy (DECISIONS F13): hosts whose only way out is
// a proxy (HTTPS_PROXY in the environment, or agent.json `proxy`) tunnel the WebSocket through
// it with HTTP CONNECT; TLS to the server then runs inside the tunnel, checked exactly as
// without a proxy (the proxy sees only the host name and port).
//
// Which proxy: agent.json `proxy` when it is set (a URL; null: none, whatever the environment
// says), else the environment as curl reads it, through proxy-from-env: HTTPS_PROXY for
// wss://, HTTP_PROXY for ws://, then ALL_PROXY, each also in lower case, and NO_PROXY. The
// proxy packages are loaded only when a proxy is in play: an agent without one loads nothing
// more (its idle memory is measured, DECISIONS P9).
import type { Agent } from 'node:http';

/** The environment variables (in either case) that can name a proxy for proxy-from-env. */
const PROXY_ENV = ['https_proxy', 'http_proxy', 'all_proxy', 'npm_config_https_proxy', 'npm_config_http_proxy', 'npm_config_proxy'];

/** What a proxy setting of agent.json must be: null, or an http:// or https:// URL with a host. */
export function proxySettingProblem(value: unknown): string | null {
  if (value === null) return null;
  if (typeof value !== 'string') return 'proxy must be an http:// or https:// URL (e.g. "http://proxy.example.com:3128") or null';
  if (!value.includes('://')) return `proxy ${JSON.stringify(redactProxy(value))} needs its scheme: http://${redactProxy(value)} (or https:// for a proxy spoken to over TLS)`;
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return `proxy ${JSON.stringify(redactProxy(value))} is not a URL: give it as http://HOST:PORT (or http://USER:PASSWORD@HOST:PORT)`;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return `proxy must be an http:// or https:// URL, not ${u.protocol}//…`;
  if (u.hostname === '') return 'proxy must name a host: http://HOST:PORT';
  return null;
}

/**
 * The proxy for a connection to `serverUrl` (ws:// or wss://), or null for a direct one:
 * `setting` (agent.json `proxy`) when it is not undefined, else the environment.
 */
export async function proxyFor(serverUrl: string, setting: string | null | undefined): Promise<string | null> {
  if (setting !== undefined) return setting === '' ? null : setting;
  const values = PROXY_ENV.flatMap((k) => [process.env[k], process.env[k.toUpperCase()]]).filter((v): v is string => v !== undefined && v !== '');
  if (values.length === 0) return null;
  const { getProxyForUrl } = await import('proxy-from-env');
  // proxy-from-env picks the variable by the URL's scheme: ask for http(s), as curl would for wss.
  const proxy = getProxyForUrl(serverUrl.replace(/^ws/i, 'http'));
  if (proxy === '') return null;
  // A value without a scheme (HTTPS_PROXY=proxy:3128) is given the request's scheme by
  // proxy-from-env, which would mean TLS to the proxy; curl takes it as http://, and so do we.
  if (/^https:\/\//i.test(proxy) && !values.some((v) => /^https:\/\//i.test(v))) return proxy.replace(/^https:/i, 'http:');
  return proxy;
}

/** The proxy URL without its user and password, for logs and messages. */
export function redactProxy(proxy: string): string {
  if (!proxy.includes('://')) return proxy.replace(/^[^@/]*@/, '***@');
  try {
    const u = new URL(proxy);
    if (u.username === '' && u.password === '') return u.origin;
    return `${u.protocol}//***@${u.host}`;
  } catch {
    return proxy.replace(/\/\/[^/@]*@/, '//***@');
  }
}

/** What the proxy answered to CONNECT when it was not 200. */
export interface ProxyRefusal {
  statusCode: number;
  statusText: string;
}

/** An http.Agent that tunnels through `proxy`; `onRefused` hears a CONNECT answered with anything but 200. */
export async function proxyAgent(proxy: string, onRefused: (r: ProxyRefusal) => void): Promise<Agent> {
  const { HttpsProxyAgent } = await import('https-proxy-agent');
  const agent = new HttpsProxyAgent(proxy, { keepAlive: false });
  agent.on('proxyConnect', (connect: { statusCode: number; statusText: string }) => {
    if (connect.statusCode !== 200) onRefused({ statusCode: connect.statusCode, statusText: connect.statusText });
  });
  return agent;
}

/** The message for a CONNECT the proxy refused. */
export function proxyRefusedMessage(proxy: string, target: string, r: ProxyRefusal): string {
  const what = `the proxy ${redactProxy(proxy)} refused the tunnel to ${target}: HTTP ${r.statusCode} ${r.statusText}`.trim();
  if (r.statusCode === 407) return `${what} — it wants credentials: give them in the proxy URL (http://USER:PASSWORD@HOST:PORT, in HTTPS_PROXY or agent.json "proxy")`;
  if (r.statusCode === 403) return `${what} — the proxy does not let this host reach ${target}: ask its administrator to allow CONNECT to that host and port`;
  return `${what} — the proxy could not reach ${target}, or does not allow it`;
}

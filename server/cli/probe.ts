// `cortex-server probe`: runs a probe on a connected host through the admin API.
import { UsageError, err, int, out, parse } from './common.js';
import { HELP, PROG } from './help.js';

export async function probeCmd(args: string[]): Promise<void> {
  const { values, positionals } = parse(
    args,
    { args: { type: 'string' }, 'timeout-ms': { type: 'string' }, url: { type: 'string' }, 'admin-token': { type: 'string' } },
    HELP.probe,
    true,
  );
  if (positionals.length !== 2) throw new UsageError(`give HOST_ID and PROBE\n\n${HELP.probe}`);
  const [hostId, probe] = positionals as [string, string];
  if (values.url === undefined) throw new UsageError(`--url is required (the server, e.g. http://127.0.0.1:3100)\n\n${HELP.probe}`);
  let base: URL;
  try {
    base = new URL(values.url.replace(/^ws(s?):/i, 'http$1:'));
  } catch {
    throw new UsageError(`--url ${JSON.stringify(values.url)} is not a URL such as http://127.0.0.1:3100`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UsageError('--url must be http://, https://, ws:// or wss://');
  let probeArgs: unknown = {};
  if (values.args !== undefined) {
    try {
      probeArgs = JSON.parse(values.args);
    } catch (error) {
      throw new UsageError(`--args is not valid JSON: ${(error as Error).message}`);
    }
  }
  const timeout_ms = int('--timeout-ms', values['timeout-ms']) ?? 10_000;
  const token = values['admin-token'] ?? process.env['CORTEX_ADMIN_TOKEN'];
  const url = new URL(`/admin/agents/${encodeURIComponent(hostId)}/probe`, base);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ probe, args: probeArgs, timeout_ms }),
    });
  } catch (error) {
    throw new Error(`cannot reach ${base.origin}: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${res.status} from ${url.origin} without a JSON body: ${text.slice(0, 200)}`);
  }
  out(JSON.stringify(body));
  if (res.status === 200) return;
  const e = (body as { error?: { code?: unknown; message?: unknown } }).error;
  err(`${PROG}: HTTP ${res.status}: ${typeof e?.code === 'number' ? `${e.code} ` : ''}${String(e?.message ?? '')}`);
  process.exitCode = 1;
}

// CLI commands of issue 18 (DECISIONS H1, H8, H9), hooked into server/cli.ts:
//   agent reset-seq HOST_ID [--to N] [--json]
//   agent tokens [--json]                 unused one-time enrollment tokens
//   agent withdraw HOST_ID                withdraw a host's unused one-time token
//   audit [--json] [-n N] [--host-id ID]  the audit trail
// and what `agent issue` does after issuing (`--expires-in`, the audit row).
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { UnknownHostError, databaseNow, type Storage } from '../db/storage.js';
import { UsageError } from '../settings.js';
import { parseArgsErrorText } from '../../common/cli-args.js';
import { cliActor, listAudit, recordAudit, type AuditRow } from './audit.js';
import { DEFAULT_ENROLLMENT_TTL_MS, listUnusedTokens, parseDuration, recordEnrollmentToken, withdrawToken } from './enrollment.js';
import { ResetSeqError, resetSeq } from './reset-seq.js';

const PROG = 'cortex-server';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const SECURITY_HELP = {
  resetSeq: `Usage: ${PROG} agent reset-seq HOST_ID [--to N] [--json] [--db PATH]

  Repairs a host whose accepted_seq is beyond max_seq (2^53 - 1): rows stored above max_seq
  are deleted and accepted_seq becomes N (default: the highest stored seq, 0 when none). N may
  not be below a stored seq. The agent continues from N + 1 at its next hello.
`,
  tokens: `Usage: ${PROG} agent tokens [--json] [--db PATH]

  Lists one-time enrollment tokens issued and not yet used: host_id, hostname, issued_at,
  expires_at, expired. Withdraw one with: agent withdraw HOST_ID.
`,
  withdraw: `Usage: ${PROG} agent withdraw HOST_ID [--db PATH]

  Withdraws the host's unused one-time enrollment token: an enroll with it then fails.
  Issue a new one with: agent issue --host-id HOST_ID.
`,
  audit: `Usage: ${PROG} audit [--json] [-n N] [--host-id HOST_ID] [--db PATH]

  The audit trail of admin actions (CLI and admin API), oldest first: when, who (cli:<user>,
  admin-token:<hash prefix> or loopback), what, which host.
  -n N       how many recent rows (default 100)
  --json     one JSON array
`,
};

const out = (s: string): void => void process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, help: string) {
  try {
    const parsed = parseArgs({ args, options: { ...options, db: { type: 'string' }, help: { type: 'boolean' } }, strict: true, allowPositionals: true });
    if ((parsed.values as { help?: boolean }).help) {
      out(help);
      process.exit(0);
    }
    return parsed;
  } catch (error) {
    throw new UsageError(`${parseArgsErrorText(error, [...Object.keys(options), 'db'])}\n\n${help}`);
  }
}

function oneHost(positionals: string[], help: string): string {
  if (positionals.length !== 1) throw new UsageError(`give exactly one HOST_ID\n\n${help}`);
  const id = (positionals[0] as string).toLowerCase();
  if (!UUID.test(id)) throw new UsageError(`HOST_ID ${JSON.stringify(positionals[0])} is not a UUID; see \`${PROG} agent list\``);
  return id;
}

async function withDb<T>(value: string | undefined, fn: (s: Storage) => Promise<T>): Promise<T> {
  // The same database selection as every admin command (--db PATH or URL, then $CORTEX_DB).
  const { dbArg, openDbForCli } = await import('../cli-db.js');
  const storage = await openDbForCli(dbArg(value));
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}

/**
 * The admin token for `serve` (DECISIONS H7): --admin-token-file FILE, else --admin-token,
 * else $CORTEX_ADMIN_TOKEN; undefined when none. Exit 2 for an unreadable or empty file or
 * both flags. The token itself never appears in a message.
 */
export function serveAdminToken(flag: string | undefined, file: string | undefined, env: string | undefined): string | undefined {
  if (flag !== undefined && file !== undefined) throw new UsageError('give either --admin-token or --admin-token-file, not both');
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`--admin-token-file ${file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`, { code: 'E_FILE_ACCESS' });
    }
    const t = (text.split(/\r?\n/, 1)[0] ?? '').trim();
    if (t === '') throw new UsageError(`--admin-token-file ${file} is empty`, { code: 'E_TOKEN' });
    return t;
  }
  if (flag !== undefined) return flag;
  const e = env?.trim();
  return e === undefined || e === '' ? undefined : e;
}

/** Checks `agent issue --expires-in`: the token lifetime in ms (default 7 days). Exit 2 on a bad value. */
export function enrollmentTtl(expiresIn: string | undefined): number {
  if (expiresIn === undefined) return DEFAULT_ENROLLMENT_TTL_MS;
  const ms = parseDuration(expiresIn);
  if (ms === undefined) throw new UsageError(`--expires-in ${JSON.stringify(expiresIn)} is not a duration such as 90s, 30m, 24h or 7d`);
  return ms;
}

/** After `agent issue`: records the token's expiry and the audit row. Returns expires_at. */
export async function afterIssue(db: Kysely<Database>, issued: { host_id: string; hostname: string }, ttlMs: number, reissue: boolean, now?: Date): Promise<string> {
  const expires_at = await recordEnrollmentToken(db, issued.host_id, ttlMs, now);
  await recordAudit(db, { actor: cliActor(), action: reissue ? 'agent.reissue' : 'agent.issue', host_id: issued.host_id, detail: { hostname: issued.hostname, expires_at } });
  return expires_at;
}

/** One audit row for a CLI admin command (revoke, rotate, decommission, config). */
export function auditCli(db: Kysely<Database>, action: string, host_id: string, detail?: Record<string, unknown>): Promise<boolean> {
  return recordAudit(db, { actor: cliActor(), action, host_id, ...(detail !== undefined ? { detail } : {}) });
}

export async function agentResetSeq(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { to: { type: 'string' }, json: { type: 'boolean' } }, SECURITY_HELP.resetSeq);
  const hostId = oneHost(positionals, SECURITY_HELP.resetSeq);
  let to: number | undefined;
  if (values.to !== undefined) {
    if (!/^\d+$/.test(values.to)) throw new UsageError(`--to must be a non-negative integer, got ${JSON.stringify(values.to)}`);
    to = Number(values.to);
  }
  const r = await withDb(values.db, async (s) => {
    try {
      const result = await resetSeq(s.db, hostId, to);
      await auditCli(s.db, 'agent.reset-seq', hostId, { from: result.previous_accepted_seq, to: result.accepted_seq, deleted_rows: result.deleted_rows });
      return result;
    } catch (error) {
      if (error instanceof UnknownHostError) throw new UsageError(`no agent with host_id ${hostId}; see \`${PROG} agent list\``, { code: 'E_UNKNOWN_HOST' });
      if (error instanceof ResetSeqError) throw new UsageError(error.message);
      throw error;
    }
  });
  if (values.json) out(JSON.stringify(r));
  else out(`accepted_seq of ${hostId}: ${r.previous_accepted_seq} → ${r.accepted_seq}${r.deleted_rows > 0 ? ` (${r.deleted_rows} row(s) above max_seq deleted)` : ''}; the agent continues from ${r.accepted_seq + 1} at its next hello`);
}

export async function agentTokens(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, SECURITY_HELP.tokens);
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}\n\n${SECURITY_HELP.tokens}`);
  const rows = await withDb(values.db, async (s) => listUnusedTokens(s.db, await databaseNow(s)));
  if (values.json) return out(JSON.stringify(rows));
  if (rows.length === 0) return out('no unused enrollment tokens');
  for (const r of rows) out(`${r.host_id}  ${r.hostname}  expires ${r.expires_at ?? 'never'}${r.expired ? '  EXPIRED' : ''}`);
}

export async function agentWithdraw(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {}, SECURITY_HELP.withdraw);
  const hostId = oneHost(positionals, SECURITY_HELP.withdraw);
  await withDb(values.db, async (s) => {
    if (!(await withdrawToken(s.db, hostId))) {
      throw new UsageError(`host ${hostId} has no unused enrollment token (unknown, or already enrolled); see \`${PROG} agent tokens\``);
    }
    await auditCli(s.db, 'agent.withdraw', hostId);
  });
  out(`withdrew the enrollment token of ${hostId}; issue a new one with: ${PROG} agent issue --host-id ${hostId}`);
}

export async function auditCmd(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' }, n: { type: 'string', short: 'n' }, 'host-id': { type: 'string' } }, SECURITY_HELP.audit);
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}\n\n${SECURITY_HELP.audit}`);
  if (values.n !== undefined && !/^\d+$/.test(values.n)) throw new UsageError(`-n must be a non-negative integer, got ${JSON.stringify(values.n)}`);
  const rows: AuditRow[] = await withDb(values.db, (s) =>
    listAudit(s.db, { limit: values.n === undefined ? 100 : Number(values.n), ...(values['host-id'] !== undefined ? { host_id: values['host-id'] } : {}) }),
  );
  if (values.json) return out(JSON.stringify(rows));
  if (rows.length === 0) return out('no audit entries');
  for (const r of rows) out(`${r.at}  ${r.actor}  ${r.action}${r.host_id ? `  ${r.host_id}` : ''}${r.detail ? `  ${JSON.stringify(r.detail)}` : ''}`);
}

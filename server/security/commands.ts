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

/** These commands have no admin API route (see localOnly). */
const LOCAL_ONLY_HELP = `
  On the database only (--db PATH|URL: a SQLite file that must exist, or postgres://…; default
  $CORTEX_DB, then ./data/cortex.db); the admin API has no route for it, so --server (and
  $CORTEX_SERVER without --db) is refused.
`;

export const SECURITY_HELP = {
  resetSeq: `Usage: ${PROG} agent reset-seq HOST_ID [--to N] [--json] [--db PATH|URL]

  Repairs a host whose accepted_seq is beyond max_seq (2^53 - 1): rows stored above max_seq
  are deleted and accepted_seq becomes N (default: the highest stored seq, 0 when none). N may
  not be below a stored seq, nor above the host's accepted_seq (the server would ack seqs it
  never stored). The agent continues from N + 1 at its next hello.
${LOCAL_ONLY_HELP}`,
  tokens: `Usage: ${PROG} agent tokens [--json] [--db PATH|URL]

  Lists one-time enrollment tokens issued and not yet used: host_id, hostname, issued_at,
  expires_at, expired. Withdraw one with: agent withdraw HOST_ID.
${LOCAL_ONLY_HELP}`,
  withdraw: `Usage: ${PROG} agent withdraw HOST_ID [--db PATH|URL]

  Withdraws the host's unused one-time enrollment token: an enroll with it then fails.
  Issue a new one with: agent issue --host-id HOST_ID.
${LOCAL_ONLY_HELP}`,
  audit: `Usage: ${PROG} audit [--json] [-n N] [--host-id HOST_ID] [--db PATH|URL]

  The audit trail of admin actions (CLI and admin API), oldest first: when, who (cli:<user>,
  admin-token:<hash prefix> or loopback), what, which host.
  -n N       how many recent rows (default 100)
  --json     one JSON array
${LOCAL_ONLY_HELP}`,
};

const out = (s: string): void => void process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);

/** What every admin command takes; --server and the rest only to be refused by localOnly(). */
const COMMON_OPTIONS = { db: { type: 'string' }, server: { type: 'string' }, 'admin-token-file': { type: 'string' }, ca: { type: 'string' } } as const;

function parse<T extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: T, help: string, command: string) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, ...COMMON_OPTIONS, help: { type: 'boolean' } }, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(`${parseArgsErrorText(error, [...Object.keys(options), ...Object.keys(COMMON_OPTIONS)])}\n\n${help}`);
  }
  if ((parsed.values as { help?: boolean }).help) {
    out(help);
    process.exit(0);
  }
  localOnly(command, parsed.values as { db?: string; server?: string; 'admin-token-file'?: string; ca?: string });
  return parsed;
}

/**
 * These commands have no admin API route (server/admin/*.routes.ts): they work on the database
 * only. A --server, or CORTEX_SERVER with no --db (which every other admin command follows),
 * is refused (exit 2) naming --db, rather than a local database used in the server's place.
 */
function localOnly(command: string, values: { db?: string; server?: string; 'admin-token-file'?: string; ca?: string }): void {
  const env = process.env['CORTEX_SERVER'];
  const given = (['server', 'admin-token-file', 'ca'] as const).find((k) => values[k] !== undefined);
  const fromEnv = given === undefined && values.db === undefined && env !== undefined && env !== '';
  if (given === undefined && !fromEnv) return;
  const why = given !== undefined ? `--${given} cannot be used` : 'CORTEX_SERVER is set';
  throw new UsageError(`\`${PROG} ${command}\` works on the database only (the admin API has no route for it), and ${why}; nothing was done`, {
    hint: `give --db PATH|URL, the database serve uses (serve logs it as "db" when it starts), on a machine that reaches it${fromEnv ? ' (--db takes the place of CORTEX_SERVER)' : ''}`,
  });
}

function oneHost(positionals: string[], help: string): string {
  if (positionals.length !== 1) throw new UsageError(`give exactly one HOST_ID\n\n${help}`);
  const id = (positionals[0] as string).toLowerCase();
  if (!UUID.test(id)) throw new UsageError(`HOST_ID ${JSON.stringify(positionals[0])} is not a UUID; see \`${PROG} agent list\``);
  return id;
}

async function withDb<T>(value: string | undefined, fn: (s: Storage) => Promise<T>): Promise<T> {
  // Opened as every admin command opens it (--db PATH or URL, then $CORTEX_DB, then the default
  // file; DECISIONS I1): never created — a missing file, a folder, a special file or one that is
  // not a Cortex database is E_DB_OPEN, exit 2, naming the path. openDbForCli, used here before,
  // created ./data/cortex.db (and any folder of --db).
  const { withDb: withAdminDb } = await import('../cli/common.js');
  return withAdminDb(value, fn, { localOnly: true });
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
  const { values, positionals } = parse(args, { to: { type: 'string' }, json: { type: 'boolean' } }, SECURITY_HELP.resetSeq, 'agent reset-seq');
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
  const { values, positionals } = parse(args, { json: { type: 'boolean' } }, SECURITY_HELP.tokens, 'agent tokens');
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}\n\n${SECURITY_HELP.tokens}`);
  const rows = await withDb(values.db, async (s) => listUnusedTokens(s.db, await databaseNow(s)));
  if (values.json) return out(JSON.stringify(rows));
  if (rows.length === 0) return out('no unused enrollment tokens');
  for (const r of rows) out(`${r.host_id}  ${r.hostname}  expires ${r.expires_at ?? 'never'}${r.expired ? '  EXPIRED' : ''}`);
}

export async function agentWithdraw(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {}, SECURITY_HELP.withdraw, 'agent withdraw');
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
  const { values, positionals } = parse(args, { json: { type: 'boolean' }, n: { type: 'string', short: 'n' }, 'host-id': { type: 'string' } }, SECURITY_HELP.audit, 'audit');
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}\n\n${SECURITY_HELP.audit}`);
  if (values.n !== undefined && !/^\d+$/.test(values.n)) throw new UsageError(`-n must be a non-negative integer, got ${JSON.stringify(values.n)}`);
  const rows: AuditRow[] = await withDb(values.db, (s) =>
    listAudit(s.db, { limit: values.n === undefined ? 100 : Number(values.n), ...(values['host-id'] !== undefined ? { host_id: values['host-id'] } : {}) }),
  );
  if (values.json) return out(JSON.stringify(rows));
  if (rows.length === 0) return out('no audit entries');
  for (const r of rows) out(`${r.at}  ${r.actor}  ${r.action}${r.host_id ? `  ${r.host_id}` : ''}${r.detail ? `  ${JSON.stringify(r.detail)}` : ''}`);
}

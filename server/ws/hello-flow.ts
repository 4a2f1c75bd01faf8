// The I/O around the pure handshake decision (./handshake.ts): reads the host's row and the
// enrollment token's expiry (one statement), makes the row change the decision names and re-reads the row
// for the answer. Between each await the caller may have timed out or closed: `pending()`
// says whether to go on (touch nothing otherwise).
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { generateToken } from '../auth/tokens.js';
import { runCached } from '../db/cached-query.js';
import {
  HELLO_COLUMNS,
  activateSessionReturning,
  firstEnrollmentActivation,
  longLivedActivation,
  revoke,
  rotationActivation,
  type ActivatedRow,
  type HelloLookup,
  type SessionStart,
} from '../db/agents.repository.js';
import type { Database } from '../db/schema.js';
import { withTrustTables } from '../security/tables.js';
import type { RowBatch } from './row-batch.js';
import { decideHello, helloHostId, needsEnrollmentExpiry, screenHello, type Activation, type HandshakeSettings, type HelloAcceptance, type HelloRefusal } from './handshake.js';

type Db = Kysely<Database>;

const JOINED_HELLO_COLUMNS = HELLO_COLUMNS.map((c) => `agents.${c}` as const);

/**
 * The host's row (findForHello's columns) and its one-time enrollment token's expiry
 * (enrollmentExpiresAt: undefined when none is recorded), in one statement compiled once.
 */
export async function readForHello(db: Db, host_id: string): Promise<{ row: HelloLookup | undefined; expires: string | undefined }> {
  const result = await runCached(withTrustTables(db), 'readForHello', { host_id: host_id.toLowerCase() }, (d, v) =>
    d
      .selectFrom('agents')
      .leftJoin('enrollment_tokens', 'enrollment_tokens.host_id', 'agents.host_id')
      .select([...JOINED_HELLO_COLUMNS, 'enrollment_tokens.expires_at as enrollment_expires_at'])
      .where('agents.host_id', '=', v.host_id as string),
  );
  const found = result.rows[0];
  if (found === undefined) return { row: undefined, expires: undefined };
  const { enrollment_expires_at, ...row } = found;
  return { row, expires: enrollment_expires_at ?? undefined };
}

export type HelloOutcome =
  | HelloRefusal
  | { readonly kind: 'accepted'; readonly accepted: HelloAcceptance; readonly current: ActivatedRow }
  /** The socket timed out or closed meanwhile: nothing was changed. */
  | { readonly kind: 'abandoned' };

export interface HelloFlowOptions {
  readonly db: Db;
  /** Where the activation is written (batched with others per commit on SQLite). */
  readonly rows: RowBatch;
  readonly settings: HandshakeSettings;
  readonly serverId: string;
  /** The database's time (token grace, enrollment expiry and last_handshake are compared and written in it). */
  readonly now: Date;
  /** False once the socket timed out or closed: stop before the next change. */
  readonly pending: () => boolean;
  /** Called once the hello is authenticated, before its row change (the hello timer stops counting). */
  readonly authenticated: () => void;
}

/**
 * The one compare-and-set statement of an accepted hello (it also returns what the answer
 * needs of the row); undefined when the row moved on.
 */
export function applyActivation(db: Db, host_id: string, start: SessionStart, change: Activation): Promise<ActivatedRow | undefined> {
  switch (change.op) {
    case 'first_enrollment':
      return activateSessionReturning(db, host_id, start, firstEnrollmentActivation(change));
    case 'rotate':
      return activateSessionReturning(db, host_id, start, rotationActivation(change));
    case 'activate':
      return activateSessionReturning(db, host_id, start, longLivedActivation(change.presented_hash, { clear_prev: change.clear_prev }));
  }
}

export async function runHello(params: unknown, o: HelloFlowOptions): Promise<HelloOutcome> {
  const screened = screenHello(params, o.settings);
  if (screened !== undefined) return screened;
  const host_id = helloHostId(params);
  const read = host_id === undefined ? undefined : await readForHello(o.db, host_id);
  if (!o.pending()) return { kind: 'abandoned' };
  const row = read?.row;
  const decision = decideHello({
    params,
    row,
    enrollmentExpiresAt: needsEnrollmentExpiry(row) ? read?.expires : undefined,
    settings: o.settings,
    now: o.now,
    sessionId: randomUUID(),
    serverId: o.serverId,
    mintToken: generateToken,
  });
  if (decision.kind === 'refuse') {
    if (decision.change?.op === 'revoke') await revoke(o.db, decision.change.host_id).catch(() => undefined);
    return decision;
  }
  o.authenticated();
  const current = await o.rows.run((db) => applyActivation(db, decision.host_id, decision.start, decision.change));
  if (current === undefined) return decision.onConflict();
  return { kind: 'accepted', accepted: decision, current };
}

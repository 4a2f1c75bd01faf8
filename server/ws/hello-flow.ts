// The I/O around the pure handshake decision (./handshake.ts): reads the host's row (and the
// enrollment token's expiry), makes the row change the decision names and re-reads the row
// for the answer. Between each await the caller may have timed out or closed: `pending()`
// says whether to go on (touch nothing otherwise).
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { generateToken } from '../auth/tokens.js';
import {
  activateSessionReturning,
  findForHello,
  firstEnrollmentActivation,
  longLivedActivation,
  revoke,
  rotationActivation,
  type ActivatedRow,
  type SessionStart,
} from '../db/agents.repository.js';
import type { Database } from '../db/schema.js';
import { enrollmentExpiresAt } from '../security/enrollment.js';
import type { RowBatch } from './row-batch.js';
import { decideHello, helloHostId, needsEnrollmentExpiry, screenHello, type Activation, type HandshakeSettings, type HelloAcceptance, type HelloRefusal } from './handshake.js';

type Db = Kysely<Database>;

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
  const row = host_id === undefined ? undefined : await findForHello(o.db, host_id);
  if (!o.pending()) return { kind: 'abandoned' };
  let expires: string | undefined;
  if (host_id !== undefined && needsEnrollmentExpiry(row)) {
    expires = await enrollmentExpiresAt(o.db, host_id);
    if (!o.pending()) return { kind: 'abandoned' };
  }
  const decision = decideHello({
    params,
    row,
    enrollmentExpiresAt: expires,
    settings: o.settings,
    now: new Date(),
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

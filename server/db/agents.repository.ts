// The `agents` table: admin operations (issue, reissue, revoke, rotate, decommission,
// config) and the session bookkeeping the handshake needs. Plain functions taking a
// Kysely<Database>; dialect-neutral SQL only.
//
// Session writes are compare-and-set UPDATEs (the WHERE clause restates what the caller
// checked), so a concurrent revoke/reissue from another process can never be undone by a
// handshake that read the row a moment earlier. They return false when the row changed.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type QueryResult, type RawBuilder, type UpdateObject } from 'kysely';
import { generateToken, hashToken } from '../auth/tokens.js';
import type { AgentRow, ConnectionState, Database } from './schema.js';
import { runCached } from './cached-query.js';
import { HostRevokedError, UnknownHostError } from './storage.js';

type Db = Kysely<Database>;

const nowIso = (): string => new Date().toISOString();

/** host_id as stored: lowercase UUID text. */
export function normalizeHostId(host_id: string): string {
  return host_id.toLowerCase();
}

/** The next database-wide control revision (see AgentsTable.control_rev). */
function nextControlRev(): RawBuilder<number> {
  return sql<number>`(select coalesce(max(control_rev), 0) + 1 from agents)`;
}

// ---------------------------------------------------------------------------------------
// Reading

/** An agents row without its token hashes (what admin output may show). */
export type AgentSummary = Omit<AgentRow, 'token_hash' | 'token_hash_prev'>;

export const SUMMARY_COLUMNS = [
  'host_id',
  'hostname',
  'agent_version',
  'platform_json',
  'capabilities_json',
  'token_rotated_at',
  'connection_state',
  'session_id',
  'accepted_seq',
  'first_seen',
  'last_handshake',
  'last_seen',
  'last_disconnect',
  'last_disconnect_reason',
  'created_at',
  'control_rev',
  'agent_config_json',
  'config_apply_after',
  'config_version',
  'rotate_requested_at',
  'rotation_grace_secs',
  'token_rotation_grace_until',
  'decommission_requested_at',
  'decommission_drain_secs',
  'server_id',
  'agent_hostname',
  'group_name',
  'host_config_json',
  'host_config_apply_after',
] as const satisfies readonly (keyof AgentSummary)[];
// Compile-time check that SUMMARY_COLUMNS lists every non-hash column.
type MissingSummaryColumn = Exclude<keyof AgentSummary, (typeof SUMMARY_COLUMNS)[number]>;
const summaryColumnsComplete: [MissingSummaryColumn] extends [never] ? true : never = true;
void summaryColumnsComplete;

/** All agents, by hostname then host_id. Never includes token hashes. */
export async function listAgents(db: Db): Promise<AgentSummary[]> {
  return db
    .selectFrom('agents')
    .select(SUMMARY_COLUMNS)
    .orderBy('hostname')
    .orderBy('host_id')
    .execute();
}

/** One agent without token hashes, or undefined. */
export async function getAgent(db: Db, host_id: string): Promise<AgentSummary | undefined> {
  return db
    .selectFrom('agents')
    .select(SUMMARY_COLUMNS)
    .where('host_id', '=', normalizeHostId(host_id))
    .executeTakeFirst();
}

/** What the handshake needs to decide on a hello (includes the hashes: never log it). */
export type HelloLookup = Pick<
  AgentRow,
  | 'host_id'
  | 'hostname'
  | 'connection_state'
  | 'token_hash'
  | 'token_hash_prev'
  | 'token_rotated_at'
  | 'token_rotation_grace_until'
  | 'rotate_requested_at'
  | 'rotation_grace_secs'
  | 'accepted_seq'
  | 'session_id'
  | 'agent_config_json'
  | 'config_apply_after'
  | 'config_version'
  | 'decommission_requested_at'
  | 'decommission_drain_secs'
  | 'control_rev'
>;

/** The columns of HelloLookup (what findForHello reads). */
export const HELLO_COLUMNS = [
  'host_id',
  'hostname',
  'connection_state',
  'token_hash',
  'token_hash_prev',
  'token_rotated_at',
  'token_rotation_grace_until',
  'rotate_requested_at',
  'rotation_grace_secs',
  'accepted_seq',
  'session_id',
  'agent_config_json',
  'config_apply_after',
  'config_version',
  'decommission_requested_at',
  'decommission_drain_secs',
  'control_rev',
] as const satisfies readonly (keyof HelloLookup)[];

/** The row a hello is decided on (its query compiled once: ./cached-query.ts). */
export async function findForHello(db: Db, host_id: string): Promise<HelloLookup | undefined> {
  const result = await runCached(db, 'findForHello', { host_id: normalizeHostId(host_id) }, (d, v) =>
    d.selectFrom('agents').select(HELLO_COLUMNS).where('host_id', '=', v.host_id as string),
  );
  return result.rows[0];
}

/** The fields a server watches for the hosts it holds sessions for. */
export type ControlState = Pick<
  AgentRow,
  | 'host_id'
  | 'control_rev'
  | 'connection_state'
  | 'session_id'
  | 'rotate_requested_at'
  | 'decommission_requested_at'
  | 'decommission_drain_secs'
  | 'agent_config_json'
  | 'config_apply_after'
  | 'config_version'
>;

/** The highest control_rev in the database (0 when empty): a watcher's starting point. */
export async function currentControlRev(db: Db): Promise<number> {
  const row = await db
    .selectFrom('agents')
    .select((eb) => eb.fn.coalesce(eb.fn.max('control_rev'), sql<number>`0`).as('rev'))
    .executeTakeFirstOrThrow();
  return Number(row.rev);
}

const CONTROL_COLUMNS = [
  'host_id',
  'control_rev',
  'connection_state',
  'session_id',
  'rotate_requested_at',
  'decommission_requested_at',
  'decommission_drain_secs',
  'agent_config_json',
  'config_apply_after',
  'config_version',
] as const satisfies readonly (keyof ControlState)[];

/**
 * The control state of the given hosts, whatever their control_rev (a server told by a
 * notification that these rows changed: two concurrent changes can get the same
 * control_rev, so `control_rev > last seen` alone may miss the later commit).
 */
export async function listControlStateOf(db: Db, host_ids: readonly string[]): Promise<ControlState[]> {
  if (host_ids.length === 0) return [];
  return db.selectFrom('agents').select(CONTROL_COLUMNS).where('host_id', 'in', [...host_ids]).execute();
}

/** Rows one read of listControlChangesSince returns at most (see there). */
export const CONTROL_PAGE = 1000;

/**
 * Rows changed (admin operation or new session) after `after_rev`, oldest change first, at
 * most `limit` (default CONTROL_PAGE); `after_host` continues a page that ended at
 * (after_rev, after_host): one change (a group's config) gives many rows the same control_rev.
 * The limit also keeps PostgreSQL on the control_rev index when agents has no statistics yet
 * (autovacuum off or not yet run): without it the watcher's read, every 300 ms, was a scan of
 * the whole table (88 ms at 20,000 agents, DECISIONS G18).
 */
export async function listControlChangesSince(db: Db, after_rev: number, after_host?: string, limit = CONTROL_PAGE): Promise<ControlState[]> {
  let q = db.selectFrom('agents').select(CONTROL_COLUMNS);
  q =
    after_host === undefined
      ? q.where('control_rev', '>', after_rev)
      : // control_rev >= bounds the index scan; the OR alone would not (PostgreSQL would filter the whole index)
        q.where('control_rev', '>=', after_rev).where((eb) => eb.or([eb('control_rev', '>', after_rev), eb('host_id', '>', after_host)]));
  return q.orderBy('control_rev').orderBy('host_id').limit(limit).execute();
}

// ---------------------------------------------------------------------------------------
// Admin operations

export interface IssuedAgent {
  host_id: string;
  hostname: string;
  /** The one-time enrollment token. Print it once; never log it. */
  token: string;
}

/** `agent issue --host`: a NeverConnected row with a fresh host_id and one-time token. */
export async function issueAgent(
  db: Db,
  hostname: string,
  options: { now?: string } = {},
): Promise<IssuedAgent> {
  const host_id = randomUUID();
  const token = generateToken();
  await db
    .insertInto('agents')
    .values({
      host_id,
      hostname,
      token_hash: hashToken(token),
      connection_state: 'NeverConnected',
      created_at: options.now ?? nowIso(),
      control_rev: nextControlRev(),
    })
    .execute();
  return { host_id, hostname, token };
}

/**
 * `agent issue --host-id`: a fresh one-time token for an existing host (lost token,
 * -32005, or a revoked host taken back). The row returns to NeverConnected with the new
 * hash, prev cleared, rotation/decommission requests dropped, the session detached (its
 * close will not touch the row); accepted_seq and log rows are kept.
 * @throws UnknownHostError
 */
export async function reissueToken(db: Db, host_id: string): Promise<IssuedAgent> {
  const id = normalizeHostId(host_id);
  const token = generateToken();
  const row = await db
    .updateTable('agents')
    .set({
      token_hash: hashToken(token),
      token_hash_prev: null,
      token_rotation_grace_until: null,
      rotate_requested_at: null,
      rotation_grace_secs: null,
      decommission_requested_at: null,
      decommission_drain_secs: null,
      connection_state: 'NeverConnected',
      session_id: null,
      control_rev: nextControlRev(),
    })
    .where('host_id', '=', id)
    .returning('hostname')
    .executeTakeFirst();
  if (row === undefined) throw new UnknownHostError(id);
  return { host_id: id, hostname: row.hostname, token };
}

/**
 * `agent revoke`: both hashes NULL, state Revoked. The session id is kept so the server
 * holding that session sees the change and closes it (4002).
 * @throws UnknownHostError
 */
export async function revoke(db: Db, host_id: string): Promise<void> {
  const id = normalizeHostId(host_id);
  const result = await db
    .updateTable('agents')
    .set({
      token_hash: null,
      token_hash_prev: null,
      token_rotation_grace_until: null,
      rotate_requested_at: null,
      rotation_grace_secs: null,
      connection_state: 'Revoked',
      control_rev: nextControlRev(),
    })
    .where('host_id', '=', id)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new UnknownHostError(id);
}

/**
 * A conditional config write found another version than the one it was given (an If-Match
 * of the admin API, DECISIONS J13): someone changed the config since the caller read it.
 * Nothing was written. `current` is the version stored now (null: the group does not exist).
 */
export class ConfigVersionMismatchError extends Error {
  constructor(readonly current: number | null) {
    super(current === null ? 'no such config' : `the config is at version ${current}`);
    this.name = 'ConfigVersionMismatchError';
  }
}

/**
 * The UPDATE of an admin operation, unless the host is revoked. With `ifConfigVersion` the
 * row is written only while its config_version is one of those versions, in the same
 * statement (a compare-and-set the database decides, so it holds between servers too); an
 * empty list matches no version.
 */
async function updateUnlessRevoked(
  db: Db,
  host_id: string,
  set: UpdateObject<Database, 'agents'>,
  ifConfigVersion?: readonly number[],
): Promise<void> {
  const id = normalizeHostId(host_id);
  if (ifConfigVersion === undefined || ifConfigVersion.length > 0) {
    let update = db
      .updateTable('agents')
      .set(set)
      .set({ control_rev: nextControlRev() })
      .where('host_id', '=', id)
      .where('connection_state', '<>', 'Revoked');
    if (ifConfigVersion !== undefined) update = update.where('config_version', 'in', [...ifConfigVersion]);
    const result = await update.executeTakeFirst();
    if (result.numUpdatedRows > 0n) return;
  }
  // Nothing written: say why (the write itself was decided above, in one statement).
  const row = await db
    .selectFrom('agents')
    .select(['connection_state', 'config_version'])
    .where('host_id', '=', id)
    .executeTakeFirst();
  if (row === undefined) throw new UnknownHostError(id);
  if (ifConfigVersion === undefined || row.connection_state === 'Revoked') throw new HostRevokedError(id);
  throw new ConfigVersionMismatchError(Number(row.config_version));
}

/**
 * `agent rotate`: marks the host; its next hello with the current token rotates it
 * (DESIGN.md 5.2) with a grace window of `grace_secs`.
 * @throws UnknownHostError | HostRevokedError
 */
export async function requestRotation(
  db: Db,
  host_id: string,
  grace_secs: number,
  options: { now?: string } = {},
): Promise<void> {
  await updateUnlessRevoked(db, host_id, {
    rotate_requested_at: options.now ?? nowIso(),
    rotation_grace_secs: grace_secs,
  });
}

/**
 * `agent decommission`: records the request; the server holding the session drains and
 * revokes (DESIGN.md 5.13).
 * @throws UnknownHostError | HostRevokedError
 */
export async function requestDecommission(
  db: Db,
  host_id: string,
  drain_secs: number,
  options: { now?: string } = {},
): Promise<void> {
  await updateUnlessRevoked(db, host_id, {
    decommission_requested_at: options.now ?? nowIso(),
    decommission_drain_secs: drain_secs,
  });
}

/**
 * `agent config --set/--clear`: stores the host's own (already validated) AgentConfig JSON
 * text verbatim, or NULL to drop it; the effective config (agent_config_json) becomes it,
 * or else the host's group's config, or else NULL (the server default). Bumps
 * config_version, so a connected agent gets config.update. With `ifConfigVersion` (the
 * admin API's If-Match) only while config_version is one of those versions.
 * @throws UnknownHostError | HostRevokedError | ConfigVersionMismatchError
 */
export async function setAgentConfig(
  db: Db,
  host_id: string,
  config_json: string | null,
  apply_after: string | null = null,
  options: { ifConfigVersion?: readonly number[] } = {},
): Promise<void> {
  const own = config_json === null ? null : apply_after;
  await updateUnlessRevoked(db, host_id, {
    host_config_json: config_json,
    host_config_apply_after: own,
    agent_config_json: (eb) =>
      config_json !== null
        ? eb.val(config_json)
        : eb.selectFrom('agent_groups').select('agent_groups.agent_config_json').whereRef('agent_groups.name', '=', 'agents.group_name'),
    config_apply_after: (eb) =>
      config_json !== null
        ? eb.val(own)
        : eb.selectFrom('agent_groups').select('agent_groups.config_apply_after').whereRef('agent_groups.name', '=', 'agents.group_name'),
    config_version: (eb) => eb('config_version', '+', 1),
  }, options.ifConfigVersion);
}

// ---------------------------------------------------------------------------------------
// Session bookkeeping (the handshake and the connection)

export interface SessionStart {
  session_id: string;
  agent_version: string;
  hostname: string;
  /** agent.hello platform as JSON text. */
  platform_json: string;
  /** agent.hello capabilities as JSON text. */
  capabilities_json: string;
  /** Time of the successful hello; also becomes last_seen (and first_seen if unset). */
  last_handshake: string;
  /** The server holding the session (servers.server_id); default NULL. */
  server_id?: string | null;
}

export interface NewTokenHash {
  token_hash: string;
  token_hash_prev: string | null;
  /** End of the grace window for token_hash_prev (NULL: none). */
  grace_until: string | null;
}

export interface ActivateOptions {
  /**
   * BLAKE3 of the token the hello presented, already matched in constant time by the
   * caller. The update applies only while the row still holds it (compare-and-set).
   */
  presented_hash: string;
  /** Which stored hash it matched: token_hash only, or token_hash or token_hash_prev. */
  match: 'current' | 'current_or_prev';
  /** Require this connection_state (e.g. NeverConnected for first enrollment). */
  expect_state?: ConnectionState;
  /** Install a new token hash (rotation); clears the rotation request. */
  new_token?: NewTokenHash;
  /** Clear token_hash_prev and the grace window (a hello with the new token). */
  clear_prev?: boolean;
}

/**
 * A successful hello: state Active, the new session (replacing any older one, whose close
 * then no longer touches the row), platform/capabilities/agent_version/agent_hostname stored.
 * Never applies to a Revoked row. Returns false when the row no longer matches.
 */
export async function activateSession(
  db: Db,
  host_id: string,
  session: SessionStart,
  options: ActivateOptions,
): Promise<boolean> {
  const result = await runActivation(db, host_id, session, options, false);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** What a hello's answer needs of the row once it is activated (read in the same statement). */
export type ActivatedRow = Pick<AgentRow, 'accepted_seq' | 'config_version' | 'agent_config_json' | 'config_apply_after'>;

/**
 * activateSession that also returns the activated row's accepted_seq and config (UPDATE …
 * RETURNING: no second read); undefined when the row no longer matches.
 */
export async function activateSessionReturning(db: Db, host_id: string, session: SessionStart, options: ActivateOptions): Promise<ActivatedRow | undefined> {
  const result = await runActivation(db, host_id, session, options, true);
  return result.rows[0] as ActivatedRow | undefined;
}

/** The values of an activation, by name (NULLs as NULL: ./cached-query.ts): the session's and the new token's fields. */
type ActivationValues = { host_id: string; presented_hash: string } & Required<SessionStart> & { [K in keyof NewTokenHash]: string | null };

/** The activation statement, compiled once per shape (which options, which NULLs). */
function runActivation(db: Db, host_id: string, session: SessionStart, options: ActivateOptions, returning: boolean): Promise<QueryResult<unknown>> {
  const values: ActivationValues = {
    host_id: normalizeHostId(host_id),
    presented_hash: options.presented_hash,
    session_id: session.session_id,
    agent_version: session.agent_version,
    hostname: session.hostname,
    platform_json: session.platform_json,
    capabilities_json: session.capabilities_json,
    last_handshake: session.last_handshake,
    server_id: session.server_id ?? null,
    token_hash: options.new_token?.token_hash ?? null,
    token_hash_prev: options.new_token?.token_hash_prev ?? null,
    grace_until: options.new_token?.grace_until ?? null,
  };
  const shape = {
    match: options.match,
    expect_state: options.expect_state,
    new_token: options.new_token !== undefined,
    clear_prev: options.clear_prev === true,
  };
  const key = `activation|${shape.match}|${shape.expect_state ?? ''}|${shape.new_token}|${shape.clear_prev}|${returning}`;
  return runCached<Database, ActivationValues, unknown>(db, key, values, (d, v) => {
    const query = activationQuery(d, v, shape);
    return returning ? query.returning(['accepted_seq', 'config_version', 'agent_config_json', 'config_apply_after']) : query;
  });
}

function activationQuery(
  db: Db,
  v: ActivationValues,
  shape: { readonly match: ActivateOptions['match']; readonly expect_state: ConnectionState | undefined; readonly new_token: boolean; readonly clear_prev: boolean },
) {
  const tokenSet = shape.new_token
    ? {
        token_hash: v.token_hash,
        token_hash_prev: v.token_hash_prev,
        token_rotation_grace_until: v.grace_until,
        token_rotated_at: v.last_handshake,
        rotate_requested_at: null,
        rotation_grace_secs: null,
      }
    : shape.clear_prev
      ? { token_hash_prev: null, token_rotation_grace_until: null }
      : {};
  let query = db
    .updateTable('agents')
    .set((eb) => ({
      connection_state: 'Active' as const,
      session_id: v.session_id,
      agent_version: v.agent_version,
      // The operator's label (agents.hostname, from `agent issue --host`) stays; the
      // agent's own name is kept beside it.
      agent_hostname: v.hostname,
      platform_json: v.platform_json,
      capabilities_json: v.capabilities_json,
      last_handshake: v.last_handshake,
      last_seen: v.last_handshake,
      first_seen: eb.fn.coalesce('first_seen', eb.val(v.last_handshake)),
      server_id: v.server_id,
      control_rev: nextControlRev(),
      ...tokenSet,
    }))
    .where('host_id', '=', v.host_id)
    .where('connection_state', '<>', 'Revoked');
  // A plain SQL equality is fine here: the caller already compared in constant time, and
  // this only re-checks that the row still holds the hash it matched.
  query =
    shape.match === 'current'
      ? query.where('token_hash', '=', v.presented_hash)
      : query.where((eb) =>
          eb.or([
            eb('token_hash', '=', v.presented_hash),
            eb('token_hash_prev', '=', v.presented_hash),
          ]),
        );
  if (shape.expect_state !== undefined) {
    query = query.where('connection_state', '=', shape.expect_state);
  }
  return query;
}

/** A hello with a long-lived token (no rotation). See activateSession. */
export function markActive(
  db: Db,
  host_id: string,
  session: SessionStart,
  presented_hash: string,
  options: { clear_prev?: boolean } = {},
): Promise<boolean> {
  return activateSession(db, host_id, session, longLivedActivation(presented_hash, options));
}

/** The ActivateOptions of markActive. */
export function longLivedActivation(presented_hash: string, options: { clear_prev?: boolean } = {}): ActivateOptions {
  return { presented_hash, match: 'current_or_prev', ...(options.clear_prev !== undefined ? { clear_prev: options.clear_prev } : {}) };
}

/**
 * First enrollment (seed section 3 step 5), in one statement: only while the row is
 * NeverConnected and holds the one-time token's hash, sets token_hash to the new token's
 * hash, clears token_hash_prev (no grace window) and activates the session.
 */
export function rotateOnFirstEnrollment(
  db: Db,
  host_id: string,
  session: SessionStart,
  hashes: { presented_hash: string; new_token_hash: string },
): Promise<boolean> {
  return activateSession(db, host_id, session, firstEnrollmentActivation(hashes));
}

/** The ActivateOptions of rotateOnFirstEnrollment. */
export function firstEnrollmentActivation(hashes: { presented_hash: string; new_token_hash: string }): ActivateOptions {
  return {
    presented_hash: hashes.presented_hash,
    match: 'current',
    expect_state: 'NeverConnected',
    new_token: { token_hash: hashes.new_token_hash, token_hash_prev: null, grace_until: null },
  };
}

/**
 * A requested rotation at hello (DESIGN.md 5.2), or a repeated one during the grace
 * window: the new token's hash becomes token_hash, the presented (old) hash
 * token_hash_prev, valid until grace_until.
 */
export function rotateOnHello(
  db: Db,
  host_id: string,
  session: SessionStart,
  hashes: { presented_hash: string; new_token_hash: string; grace_until: string },
): Promise<boolean> {
  return activateSession(db, host_id, session, rotationActivation(hashes));
}

/** The ActivateOptions of rotateOnHello. */
export function rotationActivation(hashes: { presented_hash: string; new_token_hash: string; grace_until: string }): ActivateOptions {
  return {
    presented_hash: hashes.presented_hash,
    match: 'current_or_prev',
    new_token: {
      token_hash: hashes.new_token_hash,
      token_hash_prev: hashes.presented_hash,
      grace_until: hashes.grace_until,
    },
  };
}

/**
 * Close of an authenticated session (DESIGN.md 5.14): only while agents.session_id is
 * still this session's. The row becomes Disconnected, except that a Revoked row stays
 * Revoked; last_disconnect and last_disconnect_reason ("<code> <reason>") are recorded
 * either way. Returns false when a newer session (or a reissue) has taken the row.
 */
export async function markDisconnected(
  db: Db,
  host_id: string,
  session_id: string,
  reason: string,
  options: { now?: string } = {},
): Promise<boolean> {
  const values = { host_id: normalizeHostId(host_id), session_id, reason, now: options.now ?? nowIso() };
  const result = await runCached(db, 'markDisconnected', values, (d, v) =>
    d
      .updateTable('agents')
      .set({
        connection_state: sql<ConnectionState>`case when connection_state = 'Revoked' then 'Revoked' else 'Disconnected' end`,
        last_disconnect: v.now,
        last_disconnect_reason: v.reason,
        server_id: null,
      })
      .where('host_id', '=', v.host_id)
      .where('session_id', '=', v.session_id),
  );
  return (result.numAffectedRows ?? 0n) > 0n;
}

/**
 * A first enrollment whose answer could not be delivered: the agent closed its socket (its
 * hello timed out) while the row was being activated, so it never got the rotated token, and
 * its one-time token no longer matched — the host could not connect again until an operator
 * issued a new token (DECISIONS G16). The row goes back to NeverConnected with the one-time
 * token's hash (the enrollment token row and its expiry were left in place), so the agent's
 * retry with its token enrolls. Compare-and-set: only while the row still holds this session
 * and the undelivered token's hash (nobody can have used that token: it never left the server).
 */
export async function undoUndeliveredEnrollment(db: Db, host_id: string, session_id: string, hashes: { presented_hash: string; new_token_hash: string }): Promise<boolean> {
  const result = await db
    .updateTable('agents')
    .set({ token_hash: hashes.presented_hash, connection_state: 'NeverConnected', session_id: null, server_id: null })
    .where('host_id', '=', normalizeHostId(host_id))
    .where('session_id', '=', session_id)
    .where('token_hash', '=', hashes.new_token_hash)
    .where('connection_state', 'in', ['Active', 'Disconnected'])
    .executeTakeFirst();
  return (result.numUpdatedRows ?? 0n) > 0n;
}

/**
 * agent.heartbeat (and other signs of life): last_seen = `now` for many hosts in one statement
 * (the heartbeats of a moment, DECISIONS G19); returns the rows written (a host whose row is
 * gone is not one). PostgreSQL: the rows are locked in host_id order, as the grouped ingest
 * statement locks them, so the two never wait on each other in a cycle.
 */
export async function touchLastSeenMany(db: Db, dialect: 'sqlite' | 'postgres', host_ids: readonly string[], now: string = nowIso()): Promise<number> {
  if (host_ids.length === 0) return 0;
  const ids = host_ids.map(normalizeHostId);
  if (dialect === 'postgres') {
    const r = await sql`with t as (select host_id from agents where host_id = any(${ids}::text[]) order by host_id for update)
      update agents set last_seen = ${now} from t where agents.host_id = t.host_id`.execute(db);
    return Number(r.numAffectedRows ?? 0n);
  }
  const r = await db.updateTable('agents').set({ last_seen: now }).where('host_id', 'in', ids).executeTakeFirst();
  return Number(r.numUpdatedRows);
}

/**
 * A server is gone (its lease expired, or it restarted under the same id): every session
 * it held becomes Disconnected (a Revoked row stays Revoked), detached (session_id and
 * server_id NULL, so a push or close of that session no longer touches the row) with
 * `reason` recorded, and control_rev moves so any process still holding one of those
 * sessions closes it. Returns the rows changed.
 */
export async function releaseSessionsOf(
  db: Db,
  server_id: string,
  reason: string,
  options: { now?: string } = {},
): Promise<number> {
  const result = await db
    .updateTable('agents')
    .set({
      connection_state: sql<ConnectionState>`case when connection_state = 'Revoked' then 'Revoked' else 'Disconnected' end`,
      session_id: null,
      server_id: null,
      last_disconnect: options.now ?? nowIso(),
      last_disconnect_reason: reason,
      control_rev: nextControlRev(),
    })
    .where('server_id', '=', server_id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

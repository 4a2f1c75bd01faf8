// What a connection needs from its server. Generic over the session type so that this file
// imports nothing of ./connection.ts (no import circle): the server passes
// ServerContext<Connection>.
import type { IncomingMessage } from 'node:http';
import type { DatabaseOutage } from '../db/outage.js';
import type { Storage } from '../db/storage.js';
import type { Ingest } from '../ingest.js';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';
import type { ServerSettings } from '../settings.js';
import type { RowBatch } from './row-batch.js';
import type { LastSeenBatch } from './last-seen-batch.js';
import type { HeldSession, SessionRegistry } from './session-registry.js';

export interface ServerContext<C extends HeldSession = HeldSession> {
  readonly settings: ServerSettings;
  readonly storage: Storage;
  readonly ingest: Ingest;
  readonly logger: Logger;
  /** The database out of reach: told here, logged once (not per hello, heartbeat or close). */
  readonly outage: DatabaseOutage;
  readonly serverVersion: string;
  /** This server's id among the servers on one database (stored as agents.server_id). */
  readonly serverId: string;
  readonly metrics: ServerMetrics;
  /**
   * The time this server writes into the database and compares with what is there (received_at,
   * last_seen, token grace and enrollment expiry, staged configs): the database's, on PostgreSQL
   * this machine's clock less the offset the cluster registry measures (DECISIONS G20, G31).
   */
  now(): Date;
  /** The sessions' row writes (activation, close), batched per commit on SQLite. */
  readonly rows: RowBatch;
  /** Heartbeats: last_seen of many hosts in one statement (DECISIONS G19). */
  readonly lastSeen: LastSeenBatch;
  /** Which session holds which host: register() an authenticated session, unregister() on close. */
  readonly registry: SessionRegistry<C>;
  /** After an authenticated session closed and its row was updated (decommission follow-up). */
  onSessionClosed?(conn: C): void;
  /** The client address of an upgrade request, as the failed-hello throttle counts it (DECISIONS H7). */
  clientKey?(req: IncomingMessage): string;
  /** A hello from client `key` was refused with `code` (failed-hello throttle). */
  onHelloFailed?(key: string, code: number): void;
  /** A hello from client `key` succeeded. */
  onHelloOk?(key: string): void;
}

// What a connection needs from its server.
import type { IncomingMessage } from 'node:http';
import type { Storage } from '../db/storage.js';
import type { Ingest } from '../ingest.js';
import type { Logger } from '../log.js';
import type { ServerMetrics } from '../metrics.js';
import type { ServerSettings } from '../settings.js';
import type { Connection } from './connection.js';

export interface ServerContext {
  readonly settings: ServerSettings;
  readonly storage: Storage;
  readonly ingest: Ingest;
  readonly logger: Logger;
  readonly serverVersion: string;
  /** This server's id among the servers on one database (stored as agents.server_id). */
  readonly serverId: string;
  readonly metrics: ServerMetrics;
  /** An authenticated session: replaces (and closes) an older one of the same host. */
  register(conn: Connection): void;
  unregister(conn: Connection): void;
  /** After an authenticated session closed and its row was updated (decommission follow-up). */
  onSessionClosed?(conn: Connection): void;
  /** The client address of an upgrade request, as the failed-hello throttle counts it (DECISIONS H7). */
  clientKey?(req: IncomingMessage): string;
  /** A hello from client `key` was refused with `code` (failed-hello throttle). */
  onHelloFailed?(key: string, code: number): void;
  /** A hello from client `key` succeeded. */
  onHelloOk?(key: string): void;
}

// The session registry: the one place that knows which session holds a host in this process
// (a newer hello of the same host closes the older one), and every socket this process has
// open, authenticated or not. ../cluster/registry.ts extends it across the servers on one
// database (lease rows and agents.server_id). Imports nothing of the server but the logger.
import type { Logger } from '../log.js';

/** What the registry needs of a session (./connection.ts implements it). */
export interface HeldSession {
  readonly host_id: string | undefined;
  readonly session_id: string | undefined;
  readonly open: boolean;
  closeWith(code: number, reason: string, opts?: { terminateAfterMs?: number }): void;
}

export class SessionRegistry<C extends HeldSession> {
  /** Authenticated sessions held by this process, by host_id. */
  readonly sessions = new Map<string, C>();
  /** Every open socket of this process, before and after its hello. */
  readonly connections = new Set<C>();

  constructor(private readonly logger: Logger) {}

  /** A socket was upgraded (its hello is still to come). */
  add(conn: C): void {
    this.connections.add(conn);
  }

  /** A newly authenticated session: it replaces (and closes) an older one of its host here. */
  register(conn: C): void {
    const host = conn.host_id as string;
    const older = this.sessions.get(host);
    this.sessions.set(host, conn);
    if (older !== undefined && older !== conn) {
      this.logger.info({ host_id: host, session_id: older.session_id }, 'older session replaced by a newer one');
      older.closeWith(1000, 'replaced by a newer session');
    }
  }

  /** The socket closed: it holds nothing any more. */
  unregister(conn: C): void {
    this.connections.delete(conn);
    if (conn.host_id !== undefined && this.sessions.get(conn.host_id) === conn) this.sessions.delete(conn.host_id);
  }

  /** The session this process holds for a host, when it is open. */
  held(host_id: string): C | undefined {
    const conn = this.sessions.get(host_id);
    return conn !== undefined && conn.open ? conn : undefined;
  }
}

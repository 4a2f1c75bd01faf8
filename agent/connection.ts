// One connection of a session: the socket, its JSON-RPC peer and client, and what the
// parts keep per connection (pushes in flight, the hello outcome, the probe abort signal,
// the ping watchdog). session.ts decides what a connection's events mean.

import { AgentClient, createAgentPeer, webSocketTransport, type AgentPeer, type PeerEvent } from '@cortex/agent-protocol';
import type WebSocket from 'ws';
import type { ControlConn } from './control.js';
import type { PushConn } from './push-pump.js';

export interface Conn extends PushConn, ControlConn {
  readonly ws: WebSocket;
  readonly peer: AgentPeer;
  readonly client: AgentClient;
  watchdog: NodeJS.Timeout | null;
  /** Resolves helloDone (the hello outcome is handled). */
  markHelloDone: () => void;
}

export interface ConnSettings {
  requestTimeoutMs: number;
  validateOutgoing: boolean;
  onEvent: (e: PeerEvent) => void;
}

export function createConn(ws: WebSocket, settings: ConnSettings): Conn {
  const peer = createAgentPeer(webSocketTransport(ws), settings);
  let helloDone!: () => void;
  return {
    ws,
    peer,
    client: new AgentClient(peer),
    inFlight: 0,
    watchdog: null,
    helloDone: new Promise<void>((r) => (helloDone = r)),
    markHelloDone: () => helloDone(),
    probeAbort: new AbortController(),
  };
}

/** (Re)arms the watchdog: `onSilent` runs when nothing arrived for `ms` (0 disables). */
export function feedWatchdog(conn: Conn, ms: number, onSilent: () => void): void {
  if (ms <= 0) return;
  if (conn.watchdog) conn.watchdog.refresh();
  else conn.watchdog = setTimeout(onSilent, ms);
}

/** The connection is over: probes are killed and the watchdog stops. */
export function endConn(conn: Conn): void {
  if (!conn.probeAbort.signal.aborted) conn.probeAbort.abort(new Error('session closed'));
  if (conn.watchdog) clearTimeout(conn.watchdog);
  conn.watchdog = null;
}

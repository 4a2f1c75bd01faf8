// One connection of a session: the socket, its JSON-RPC peer and client, and what the
// parts keep per connection (pushes in flight, the hello outcome, the probe abort signal,
// the ping watchdog). session.ts decides what a connection's events mean.

import { AgentClient, createAgentPeer, webSocketTransport, type AgentPeer, type PeerEvent, type Transport } from '@cortex/agent-protocol';
import type WebSocket from 'ws';
import { readHold } from '../common/read-hold.js';
import type { ControlConn } from './control.js';
import type { PushConn } from './push-pump.js';

export interface Conn extends PushConn, ControlConn {
  readonly ws: WebSocket;
  readonly peer: AgentPeer;
  readonly client: AgentClient;
  watchdog: NodeJS.Timeout | null;
  /** Nothing is read from the server until the socket drains (common/read-hold.ts, DECISIONS H24). */
  readonly readsHeld: boolean;
  /** Resolves helloDone (the hello outcome is handled). */
  markHelloDone: () => void;
}

export interface ConnSettings {
  requestTimeoutMs: number;
  validateOutgoing: boolean;
  onEvent: (e: PeerEvent) => void;
  /** The agent stopped reading this connection, `queuedBytes` waiting to be sent. */
  onReadsHeld?: (queuedBytes: number) => void;
}

export function createConn(ws: WebSocket, settings: ConnSettings): Conn {
  // A server that sends without reading: past 1 MiB queued the agent reads nothing more from it
  // until the socket drained; one that never reads again sends no ping the agent reads either,
  // and the ping watchdog ends the connection (session.ts).
  const hold = readHold(ws, (queued) => settings.onReadsHeld?.(queued));
  const inner = webSocketTransport(ws);
  const transport: Transport = {
    ...inner,
    send: (text) => {
      inner.send(text);
      hold.afterSend();
    },
  };
  const peer = createAgentPeer(transport, settings);
  let helloDone!: () => void;
  return {
    ws,
    peer,
    client: new AgentClient(peer),
    inFlight: 0,
    watchdog: null,
    get readsHeld() {
      return hold.held;
    },
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

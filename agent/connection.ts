// One connection of a session: the socket, its JSON-RPC peer and client, and what the
// parts keep per connection (pushes in flight, the hello outcome, the probe abort signal,
// the ping watchdog). session.ts decides what a connection's events mean.

import type { Socket } from 'node:net';
import { AgentClient, createAgentPeer, webSocketTransport, type AgentPeer, type PeerEvent, type Transport } from '@cortex/agent-protocol';
import type WebSocket from 'ws';
import type { ControlConn } from './control.js';
import type { PushConn } from './push-pump.js';

export interface Conn extends PushConn, ControlConn {
  readonly ws: WebSocket;
  readonly peer: AgentPeer;
  readonly client: AgentClient;
  watchdog: NodeJS.Timeout | null;
  /** Nothing is read from the server until the socket drains (see OUTBOUND_HIGH_WATER_BYTES). */
  readsHeld: boolean;
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

/**
 * Bytes queued towards the server past which the agent reads nothing more from it until the
 * socket drained (DECISIONS H24). A server that sends without reading — every frame it sends
 * earns an answer: a 1-byte malformed frame a ~100-byte -32700 — would otherwise have the
 * agent hold its answers without bound. Far above what the agent queues while the server
 * reads: the push pump keeps at most 4 batches of ≤ 128 KiB in flight.
 */
export const OUTBOUND_HIGH_WATER_BYTES = 1024 * 1024;

export function createConn(ws: WebSocket, settings: ConnSettings): Conn {
  const inner = webSocketTransport(ws);
  const transport: Transport = {
    ...inner,
    send: (text) => {
      inner.send(text);
      if (ws.bufferedAmount > OUTBOUND_HIGH_WATER_BYTES) holdReads();
    },
  };
  const peer = createAgentPeer(transport, settings);
  let helloDone!: () => void;
  const conn: Conn = {
    ws,
    peer,
    client: new AgentClient(peer),
    inFlight: 0,
    watchdog: null,
    readsHeld: false,
    helloDone: new Promise<void>((r) => (helloDone = r)),
    markHelloDone: () => helloDone(),
    probeAbort: new AbortController(),
  };
  // TCP then holds the server's sends back; a server that never reads again sends no ping the
  // agent reads either, and the ping watchdog ends the connection (session.ts).
  function holdReads(): void {
    const socket = (ws as unknown as { _socket: Socket | null })._socket;
    if (conn.readsHeld || socket === null || ws.readyState !== ws.OPEN) return;
    conn.readsHeld = true;
    ws.pause();
    settings.onReadsHeld?.(ws.bufferedAmount);
    socket.once('drain', () => {
      conn.readsHeld = false;
      if (ws.readyState === ws.OPEN) ws.resume();
    });
  }
  return conn;
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

// A peer that sends without reading (DECISIONS H21 for the server, H24 for the agent): every
// frame it sends earns an answer — a 1-byte malformed frame a ~100-byte -32700 — which the
// other side would queue without bound. After each frame sent, once more than
// OUTBOUND_HIGH_WATER_BYTES wait to be sent, the socket is not read until it drained: TCP then
// holds the peer's sends back. A peer that never reads again has its pings or pongs unread
// too, and the side's own liveness check (the server's ping sweep, the agent's ping watchdog)
// ends the connection.

/** Bytes queued towards a peer past which nothing more is read from it until they are sent. */
export const OUTBOUND_HIGH_WATER_BYTES = 1024 * 1024;

/** What of a `ws` WebSocket this needs (its `_socket` is the underlying net.Socket). */
export interface PausableWebSocket {
  readonly bufferedAmount: number;
  readonly readyState: number;
  readonly OPEN: number;
  pause(): void;
  resume(): void;
}

export interface ReadHold {
  /** True while the socket is not read. */
  readonly held: boolean;
  /** Call after each frame sent: holds reads when too much waits to be sent. */
  afterSend(): void;
  /** Reads again at once (the connection is being closed: its close frame must be read). */
  release(): void;
}

/** `onHold(queuedBytes)` runs each time reads are held. */
export function readHold(ws: PausableWebSocket, onHold: (queuedBytes: number) => void): ReadHold {
  let held = false;
  const release = (): void => {
    if (!held) return;
    held = false;
    if (ws.readyState === ws.OPEN) ws.resume();
  };
  return {
    get held() {
      return held;
    },
    afterSend() {
      if (held || ws.bufferedAmount <= OUTBOUND_HIGH_WATER_BYTES || ws.readyState !== ws.OPEN) return;
      const socket = (ws as unknown as { _socket: { once(event: 'drain', listener: () => void): unknown } | null })._socket;
      if (socket === null) return;
      held = true;
      ws.pause();
      onHold(ws.bufferedAmount);
      socket.once('drain', release);
    },
    release,
  };
}

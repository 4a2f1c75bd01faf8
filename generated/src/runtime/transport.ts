/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * The peer talks to anything that carries text frames. Only this interface is known to the
 * protocol layer; WebSocket specifics live in the adapters below.
 */

/**
 * One received frame. A text frame comes as a string (`text`) or as its UTF-8 bytes not yet
 * decoded (`utf8`: the peer decodes and parses them, a large frame in pieces without one
 * string of the whole, see ./frame-json.ts). Binary frames are reported (the contract
 * rejects them) but never decoded.
 */
export type Frame =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'utf8'; readonly bytes: Uint8Array }
  | { readonly kind: 'binary'; readonly byteLength: number };

export interface Transport {
  /** Send one text frame. */
  send(text: string): void;
  /** Close the connection (WebSocket close code and reason). */
  close(code?: number, reason?: string): void;
  /** Register the frame listener (one per transport). */
  onFrame(listener: (frame: Frame) => void): void;
  /** Register the close listener (one per transport); called once. */
  onClose(listener: (code: number, reason: string) => void): void;
}

/**
 * What the adapter needs of a WebSocket: `send`, `close` and message/close events through
 * `addEventListener`. Both the `ws` package and the WHATWG WebSocket (browsers, Deno, Bun,
 * Node 22+) have these.
 */
export interface WebSocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
}

function byteLengthOf(data: unknown): number {
  if (data instanceof ArrayBuffer) return data.byteLength;
  if (ArrayBuffer.isView(data)) return data.byteLength;
  if (Array.isArray(data)) return data.reduce((n: number, part: unknown) => n + byteLengthOf(part), 0);
  if (data !== null && typeof data === 'object' && 'size' in data && typeof (data as { size: unknown }).size === 'number') {
    return (data as { size: number }).size; // Blob
  }
  return 0;
}

/** Adapt a WebSocket (ws or WHATWG) to a Transport. Text frames arrive as strings in both. */
export function webSocketTransport(ws: WebSocketLike): Transport {
  return {
    send: (text) => ws.send(text),
    close: (code, reason) => ws.close(code, reason),
    onFrame: (listener) =>
      ws.addEventListener('message', (event) => {
        if (typeof event.data === 'string') listener({ kind: 'text', text: event.data });
        else listener({ kind: 'binary', byteLength: byteLengthOf(event.data) });
      }),
    onClose: (listener) => ws.addEventListener('close', (event) => listener(event.code, event.reason)),
  };
}

/**
 * Two connected in-memory transports, for tests and in-process use. Frames are delivered
 * asynchronously and in order, like a socket; close reaches both sides once.
 */
export function memoryTransportPair(): [Transport, Transport] {
  type End = {
    frame?: (frame: Frame) => void;
    close?: (code: number, reason: string) => void;
    closed: boolean;
    queue: Frame[];
  };
  const ends: [End, End] = [
    { closed: false, queue: [] },
    { closed: false, queue: [] },
  ];
  const deliver = (to: End, frame: Frame) => {
    queueMicrotask(() => {
      if (to.closed) return;
      if (to.frame) to.frame(frame);
      else to.queue.push(frame);
    });
  };
  const closeBoth = (code: number, reason: string) => {
    for (const end of ends) {
      if (end.closed) continue;
      end.closed = true;
      queueMicrotask(() => end.close?.(code, reason));
    }
  };
  const make = (self: End, other: End): Transport => ({
    send(text) {
      if (self.closed) throw new Error('transport is closed');
      deliver(other, { kind: 'text', text });
    },
    close(code = 1000, reason = '') {
      // Let frames already sent arrive first, as on a socket.
      queueMicrotask(() => closeBoth(code, reason));
    },
    onFrame(listener) {
      self.frame = listener;
      for (const f of self.queue.splice(0)) listener(f);
    },
    onClose(listener) {
      self.close = listener;
    },
  });
  return [make(ends[0], ends[1]), make(ends[1], ends[0])];
}

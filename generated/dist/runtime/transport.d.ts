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
export type Frame = {
    readonly kind: 'text';
    readonly text: string;
} | {
    readonly kind: 'utf8';
    readonly bytes: Uint8Array;
} | {
    readonly kind: 'binary';
    readonly byteLength: number;
};
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
    addEventListener(type: 'message', listener: (event: {
        data: unknown;
    }) => void): void;
    addEventListener(type: 'close', listener: (event: {
        code: number;
        reason: string;
    }) => void): void;
}
/** Adapt a WebSocket (ws or WHATWG) to a Transport. Text frames arrive as strings in both. */
export declare function webSocketTransport(ws: WebSocketLike): Transport;
/**
 * Two connected in-memory transports, for tests and in-process use. Frames are delivered
 * asynchronously and in order, like a socket; close reaches both sides once.
 */
export declare function memoryTransportPair(): [Transport, Transport];

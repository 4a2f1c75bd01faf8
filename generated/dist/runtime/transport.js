/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * The peer talks to anything that carries text frames. Only this interface is known to the
 * protocol layer; WebSocket specifics live in the adapters below.
 */
function byteLengthOf(data) {
    if (data instanceof ArrayBuffer)
        return data.byteLength;
    if (ArrayBuffer.isView(data))
        return data.byteLength;
    if (Array.isArray(data))
        return data.reduce((n, part) => n + byteLengthOf(part), 0);
    if (data !== null && typeof data === 'object' && 'size' in data && typeof data.size === 'number') {
        return data.size; // Blob
    }
    return 0;
}
/** Adapt a WebSocket (ws or WHATWG) to a Transport. Text frames arrive as strings in both. */
export function webSocketTransport(ws) {
    return {
        send: (text) => ws.send(text),
        close: (code, reason) => ws.close(code, reason),
        onFrame: (listener) => ws.addEventListener('message', (event) => {
            if (typeof event.data === 'string')
                listener({ kind: 'text', text: event.data });
            else
                listener({ kind: 'binary', byteLength: byteLengthOf(event.data) });
        }),
        onClose: (listener) => ws.addEventListener('close', (event) => listener(event.code, event.reason)),
    };
}
/**
 * Two connected in-memory transports, for tests and in-process use. Frames are delivered
 * asynchronously and in order, like a socket; close reaches both sides once.
 */
export function memoryTransportPair() {
    const ends = [
        { closed: false, queue: [] },
        { closed: false, queue: [] },
    ];
    const deliver = (to, frame) => {
        queueMicrotask(() => {
            if (to.closed)
                return;
            if (to.frame)
                to.frame(frame);
            else
                to.queue.push(frame);
        });
    };
    const closeBoth = (code, reason) => {
        for (const end of ends) {
            if (end.closed)
                continue;
            end.closed = true;
            queueMicrotask(() => end.close?.(code, reason));
        }
    };
    const make = (self, other) => ({
        send(text) {
            if (self.closed)
                throw new Error('transport is closed');
            deliver(other, { kind: 'text', text });
        },
        close(code = 1000, reason = '') {
            // Let frames already sent arrive first, as on a socket.
            queueMicrotask(() => closeBoth(code, reason));
        },
        onFrame(listener) {
            self.frame = listener;
            for (const f of self.queue.splice(0))
                listener(f);
        },
        onClose(listener) {
            self.close = listener;
        },
    });
    return [make(ends[0], ends[1]), make(ends[1], ends[0])];
}

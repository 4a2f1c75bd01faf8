// Shared by the server benchmarks (ingest, retention): a load client's log entry and its
// WebSocket connect + agent.hello. Not a benchmark itself (run.mjs skips files named _*).
import { createHash, randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';
import WebSocket from 'ws';
import { SUBPROTOCOL } from '@cortex/agent-protocol';

/** One sshd-like entry (about 200 bytes of JSON) with the given seq. */
export function entry(seq) {
  return { seq, ts: '2026-05-16T19:42:50.123Z', severity: 'info', app_name: 'sshd', process_id: '1431', message: `Accepted publickey for user from 10.0.0.4 port 5${seq % 10000} ssh2: ED25519 SHA256:abcdefghijklmnop`, source: 'journald' };
}

/**
 * Opens a session for an issued agent ({ host_id, hostname, token }); resolves with the
 * socket, the server's accepted_seq and the rotated token (null when none was sent).
 * `zeroMask`: frames go with an all-zero masking key, which ws then does not apply (no copy
 * of each frame): a load client's saving on loopback — the server unmasks every frame as
 * always (RFC 6455 wants an unpredictable key to protect proxies; there is none here).
 */
export function connect(url, agent, { zeroMask = false } = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, SUBPROTOCOL, { perMessageDeflate: false, ...(zeroMask ? { generateMask: (mask) => mask.fill(0) } : {}) });
    ws.once('error', reject);
    ws.once('open', () => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'agent.hello', params: { protocol_version: 1, agent_version: '0.1.0', hostname: agent.hostname, host_id: agent.host_id, platform: { os: 'linux', arch: 'x86_64', kernel: '6.6', distro: null }, capabilities: { supported_probes: [], sources: ['journald'], max_batch_entries: 1000, compression: [] }, token: agent.token, resume_from_seq: 0 } }));
      ws.once('message', (d) => {
        const m = JSON.parse(d.toString());
        if (m.error) return reject(new Error(JSON.stringify(m.error)));
        resolve({ ws, accepted: m.result.accepted_seq, rotated: m.result.rotated_token ?? null });
      });
    });
  });
}

// ───────────── a cheap load client for hello benchmarks ─────────────
// `connect` above is the `ws` client: per connect it builds a WebSocket, its Receiver and
// Sender, draws a key, checks the accept hash, parses the 101 with Node's HTTP client and
// masks every frame — in the bench's own single process that costs about as much CPU as the
// server's side of a bare connect, so the load generator, not the server, set the bare ceiling.
// `rawHello` speaks the same wire over a plain `net` socket with everything built before the
// clock starts: the upgrade request (a fixed Sec-WebSocket-Key, so the expected accept value
// is known), and the hello as a ready masked frame (`helloFrame`, a random mask key per frame,
// as RFC 6455 5.3 asks). It still waits for the 101 before sending the hello (RFC 6455 4.1),
// checks the status, Sec-WebSocket-Accept and the subprotocol, and parses the answer.
const WS_KEY = 'Y29ydGV4LWJlbmNoLWtleQ==';
const WS_ACCEPT = createHash('sha1').update(`${WS_KEY}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
const HEAD_END = Buffer.from('\r\n\r\n');

/** The agent.hello request `connect` sends, as text. */
export function helloText(agent) {
  return JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'agent.hello', params: { protocol_version: 1, agent_version: '0.1.0', hostname: agent.hostname, host_id: agent.host_id, platform: { os: 'linux', arch: 'x86_64', kernel: '6.6', distro: null }, capabilities: { supported_probes: [], sources: ['journald'], max_batch_entries: 1000, compression: [] }, token: agent.token, resume_from_seq: 0 } });
}

/** A client's masked frame (FIN set) with the given opcode and payload. */
export function maskedFrame(opcode, payload) {
  const len = payload.length;
  const head = len < 126 ? 2 : len < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(head + 4 + len);
  frame[0] = 0x80 | opcode;
  if (head === 2) {
    frame[1] = 0x80 | len;
  } else if (head === 4) {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(len, 2);
  } else {
    frame[1] = 0x80 | 127;
    frame.writeBigUInt64BE(BigInt(len), 2);
  }
  const mask = randomBytes(4);
  mask.copy(frame, head);
  for (let i = 0; i < len; i++) frame[head + 4 + i] = payload[i] ^ mask[i & 3];
  return frame;
}

/** The hello of `agent` as a ready masked text frame. */
export function helloFrame(agent) {
  return maskedFrame(0x1, Buffer.from(helloText(agent)));
}

/** The upgrade request for `url` (ws://host:port/path), subprotocol cortex.v1. */
export function upgradeRequest(url) {
  const u = new URL(url);
  return Buffer.from(`GET ${u.pathname} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: ${WS_KEY}\r\nSec-WebSocket-Protocol: ${SUBPROTOCOL}\r\n\r\n`);
}

const CLOSE_1000 = maskedFrame(0x8, Buffer.from([0x03, 0xe8]));

/**
 * Upgrade + agent.hello over a plain socket: `request` from upgradeRequest(url), `frame` from
 * helloFrame(agent). Resolves with the accepted_seq, the rotated token (null when none) and
 * close(), which sends a close frame (1000) and resolves when the server closed the socket;
 * rejects on a refused upgrade, an error answer or a close before the answer.
 */
export function rawHello(port, host, request, frame) {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ port, host, noDelay: true });
    let buf = Buffer.alloc(0);
    let upgraded = false;
    let done = false;
    const fail = (error) => {
      if (done) return;
      done = true;
      socket.destroy();
      reject(error);
    };
    socket.once('error', fail);
    socket.once('close', () => fail(new Error('closed before the hello was answered')));
    socket.once('connect', () => socket.write(request));
    socket.on('data', (chunk) => {
      if (done) return;
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf(HEAD_END);
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        if (!head.startsWith('HTTP/1.1 101 ')) return fail(new Error(`upgrade refused: ${head.split('\r\n')[0]}`));
        if (!head.includes(`\r\nSec-WebSocket-Accept: ${WS_ACCEPT}`) || !head.includes(`\r\nSec-WebSocket-Protocol: ${SUBPROTOCOL}`)) return fail(new Error(`bad 101: ${head}`));
        upgraded = true;
        buf = buf.subarray(end + 4);
        socket.write(frame);
      }
      // frames until the answer: a ping or pong before it (the server's keepalive) is skipped
      let payload;
      for (;;) {
        if (buf.length < 2) return;
        let len = buf[1] & 0x7f;
        let off = 2;
        if (len === 126) {
          if (buf.length < 4) return;
          len = buf.readUInt16BE(2);
          off = 4;
        } else if (len === 127) {
          if (buf.length < 10) return;
          len = Number(buf.readBigUInt64BE(2));
          off = 10;
        }
        if (buf.length < off + len) return;
        const opcode = buf[0] & 0x0f;
        payload = buf.subarray(off, off + len);
        const fin = (buf[0] & 0x80) !== 0;
        buf = buf.subarray(off + len);
        if (opcode === 0x9 || opcode === 0xa) continue;
        if (opcode === 0x8) return fail(new Error(`closed ${len >= 2 ? payload.readUInt16BE(0) : 1005} before the answer: ${payload.subarray(2).toString()}`));
        if (opcode !== 0x1 || !fin) return fail(new Error(`unexpected frame (opcode ${opcode})`));
        break;
      }
      const m = JSON.parse(payload.toString());
      if (m.error) return fail(new Error(JSON.stringify(m.error)));
      done = true;
      socket.removeAllListeners('data');
      socket.removeAllListeners('close');
      socket.on('data', () => undefined); // later frames (a staged config.update, the close answer)
      const closed = new Promise((r) => socket.once('close', r));
      resolve({
        accepted: m.result.accepted_seq,
        rotated: m.result.rotated_token ?? null,
        close: () => {
          socket.write(CLOSE_1000);
          return closed;
        },
      });
    });
  });
}

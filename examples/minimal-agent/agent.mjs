#!/usr/bin/env node
// A complete tiny Cortex agent using only @cortex/agent-protocol and ws. See README.md.
//
//   node agent.mjs enroll --server URL --token T --host-id ID --state-dir DIR
//   node agent.mjs run --state-dir DIR [--backoff-base-ms N] [--backoff-cap-ms N] [--heartbeat-ms N]
//                      [--request-timeout-ms N]
//
// State dir: token (the credential alone), agent.json ({server, host_id}), state.json
// ({next_seq, acked_seq, offsets, pending}). Every file is replaced atomically (write a temp
// file, fsync, rename), and an entry is in state.json before it is sent, so a kill at any
// point loses nothing and never reuses a seq.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { arch, hostname, loadavg, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import {
  AgentClient,
  PROTOCOL_VERSION,
  ProbeUnavailableError,
  InvalidParamsError,
  LIMITS,
  PeerError,
  RpcError,
  SUBPROTOCOL,
  createAgentPeer,
  registerAgentHandlers,
  webSocketTransport,
} from '@cortex/agent-protocol';

const VERSION = '0.1.0';
const PROBES = ['demo.echo'];
const WINDOW = 4; // logs.push requests in flight at once (DESIGN 5.5: several, acked in order)
const log = (msg) => process.stderr.write(`minimal-agent: ${msg}\n`);

// ───────────────────────────── state files ─────────────────────────────

function writeAtomic(path, text) {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dir = openSync(join(path, '..'), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

const readJson = (path, fallback) => (existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : fallback);

class StateDir {
  constructor(dir) {
    this.dir = dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.state = readJson(join(dir, 'state.json'), { next_seq: 1, acked_seq: 0, offsets: {}, pending: [] });
  }
  get token() {
    const p = join(this.dir, 'token');
    return existsSync(p) ? readFileSync(p, 'utf8').trim() : null;
  }
  set token(value) {
    if (value === null) rmSync(join(this.dir, 'token'), { force: true });
    else writeAtomic(join(this.dir, 'token'), `${value}\n`);
  }
  get settings() {
    return readJson(join(this.dir, 'agent.json'), null);
  }
  set settings(value) {
    writeAtomic(join(this.dir, 'agent.json'), JSON.stringify(value, null, 2));
  }
  save() {
    writeAtomic(join(this.dir, 'state.json'), JSON.stringify(this.state));
  }
}

// ───────────────────────────── one connection ─────────────────────────────

function helloParams(host_id, token, resume) {
  return {
    protocol_version: PROTOCOL_VERSION,
    agent_version: VERSION,
    hostname: hostname() || 'localhost',
    host_id,
    platform: { os: process.platform, arch: arch(), kernel: release(), distro: null },
    capabilities: { supported_probes: PROBES, sources: ['file'], max_batch_entries: 500, compression: [] },
    token,
    resume_from_seq: resume,
  };
}

/**
 * Opens the socket and performs agent.hello. Resolves { ws, peer, client, hello } or rejects.
 * A request (the hello included) unanswered for timeoutMs rejects with PeerError 'timeout'.
 */
async function connect(url, params, handlers, timeoutMs = 15_000) {
  // V1 has no compression (ws offers permessage-deflate unless told not to) and no frame over
  // LIMITS.max_frame_bytes: ws closes the connection with 1009 when the server sends a larger one.
  const ws = new WebSocket(url, SUBPROTOCOL, { perMessageDeflate: false, maxPayload: LIMITS.max_frame_bytes });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
  });
  ws.on('error', () => {});
  const peer = createAgentPeer(webSocketTransport(ws), { requestTimeoutMs: timeoutMs });
  registerAgentHandlers(peer, handlers);
  const client = new AgentClient(peer);
  try {
    const hello = await client.agentHello(params);
    return { ws, peer, client, hello };
  } catch (err) {
    ws.terminate();
    throw err;
  }
}

// ───────────────────────────── enroll ─────────────────────────────

async function enroll(opts) {
  const store = new StateDir(opts['state-dir']);
  const { ws, hello } = await connect(opts.server, helloParams(opts['host-id'], opts.token, null), {});
  // The rotated token is our credential from now on: persist it before anything else.
  store.token = hello.rotated_token ?? opts.token;
  store.settings = { server: opts.server, host_id: opts['host-id'] };
  ws.close(1000, `final_seq=${store.state.acked_seq}`);
  log(`enrolled ${opts['host-id']}`);
}

// ───────────────────────────── run ─────────────────────────────

async function run(opts) {
  const store = new StateDir(opts['state-dir']);
  const settings = store.settings;
  if (!settings || !store.token) throw new Error('not enrolled (or revoked): run "agent.mjs enroll" first');
  const baseMs = Number(opts['backoff-base-ms'] ?? 1000);
  const requestTimeoutMs = Number(opts['request-timeout-ms'] ?? 15_000);
  const capMs = Number(opts['backoff-cap-ms'] ?? Math.max(baseMs, 60_000));
  const st = store.state;
  let attempt = 0;
  let stopped = false;
  let conn = null;
  let config = null;
  let timers = [];
  let staged = null; // the timer of a config.update whose apply_after is ahead
  let inflight = 0; // logs.push requests sent and not answered
  let sentUpTo = 0; // the last seq sent in this session
  let draining = null;
  let pausedUntil = 0; // no logs.push before this (a -32020/-32007/-32030 asked for a pause)
  let batchCap = Infinity; // halved on -32008 PayloadTooLarge

  const finalReason = () => `final_seq=${st.acked_seq}`;

  /** Reads new complete lines of the configured file sources into pending (durably). */
  function tail() {
    let added = 0;
    for (const src of config?.log_sources ?? []) {
      if (src.kind !== 'file' || !src.path || !existsSync(src.path)) continue;
      const size = statSync(src.path).size;
      let offset = st.offsets[src.path] ?? 0;
      if (size < offset) offset = 0; // truncated: start again
      if (size === offset) continue;
      const fd = openSync(src.path, 'r');
      const buf = Buffer.alloc(Math.min(size - offset, 1 << 20));
      readSync(fd, buf, 0, buf.length, offset);
      closeSync(fd);
      const text = buf.toString('utf8');
      const end = text.lastIndexOf('\n');
      if (end < 0) continue;
      for (const line of text.slice(0, end).split('\n')) {
        st.pending.push({ seq: st.next_seq++, ts: new Date().toISOString(), severity: 'info', message: line.slice(0, 65536), source: `file:${src.path}` });
        added++;
      }
      st.offsets[src.path] = offset + Buffer.byteLength(text.slice(0, end + 1));
    }
    if (added > 0) store.save(); // durable before it is sent
    pump();
  }

  /** Sends the unacked entries not yet sent in this session, up to WINDOW pushes in flight. */
  function pump() {
    while (conn && inflight < WINDOW && Date.now() >= pausedUntil) {
      const size = Math.min(config?.max_batch_entries ?? 100, 500, batchCap);
      const from = Math.max(st.acked_seq, sentUpTo);
      const batch = st.pending.filter((e) => e.seq > from).slice(0, size);
      if (batch.length === 0) break;
      send(conn, batch);
    }
    if (draining && inflight === 0 && !st.pending.some((e) => e.seq > st.acked_seq)) draining();
  }

  function send(c, batch) {
    inflight++;
    const last = batch[batch.length - 1].seq;
    sentUpTo = last;
    c.client.logsPush({ seq_start: batch[0].seq, entries: batch }).then(
      (ack) => {
        // An ack counts only up to what this push sent (DECISIONS F5): taking a larger
        // up_to_seq as acked would drop entries read later without ever sending them.
        const upTo = Math.min(ack.up_to_seq, last);
        if (upTo > st.acked_seq) st.acked_seq = upTo;
        st.pending = st.pending.filter((e) => e.seq > st.acked_seq);
        store.save();
        if (conn !== c) return;
        inflight--;
        pump();
      },
      (err) => {
        if (conn !== c) return; // the session is gone: the next hello's accepted_seq decides what is resent
        inflight--;
        // Nothing of this push was stored, nor of those sent behind it: send again from its start.
        sentUpTo = Math.min(sentUpTo, batch[0].seq - 1);
        const code = err instanceof RpcError ? err.code : undefined;
        if (code === -32004) {
          // UnknownHost: this session is no use any more; reconnect (the hello says what to resend).
          c.ws.close(1000, finalReason());
          return;
        }
        if (err instanceof PeerError && err.code === 'timeout') {
          // No answer within the request timeout: take the connection as dead and reconnect.
          c.ws.terminate();
          return;
        }
        if (code === -32008) {
          // PayloadTooLarge: send the same entries again in pushes of half the size.
          batchCap = Math.max(1, Math.floor(batch.length / 2));
          pump();
          return;
        }
        // -32020 Backpressure, -32007 BufferOverflow, -32030 RateLimited: pause as advised;
        // anything else (an internal error, the connection closing): the contract's default pause.
        const advised = err instanceof RpcError ? err.data?.retry_after_ms : undefined;
        const pauseMs = typeof advised === 'number' && advised >= 0 ? advised : LIMITS.retry_after_default_ms;
        pausedUntil = Date.now() + pauseMs;
        setTimeout(() => {
          if (conn === c) pump();
        }, pauseMs);
      },
    );
  }

  /** A delay that may be longer than a Node.js timer holds (2^31 - 1 ms): waits in steps. */
  function after(ms, fn) {
    const at = Date.now() + ms;
    const step = () => {
      const left = at - Date.now();
      if (left <= 0) fn();
      else timer = setTimeout(step, Math.min(left, 2 ** 31 - 1));
    };
    let timer = setTimeout(step, Math.min(ms, 2 ** 31 - 1));
    return { cancel: () => clearTimeout(timer) };
  }

  function every(ms, fn) {
    let next;
    const tick = () => {
      fn();
      next = after(ms, tick);
    };
    next = after(ms, tick);
    return { cancel: () => next.cancel() };
  }

  /** config.update: in force now, or at apply_after (a later update replaces a staged one). */
  function updateConfig(next, applyAfter) {
    staged?.cancel();
    staged = null;
    const wait = applyAfter ? Date.parse(applyAfter) - Date.now() : 0;
    if (wait > 0) staged = after(wait, () => applyConfig(next));
    else applyConfig(next);
  }

  function applyConfig(next) {
    config = next;
    batchCap = Infinity;
    for (const t of timers) t.cancel();
    const hbMs = Number(opts['heartbeat-ms'] ?? config.heartbeat_interval_secs * 1000);
    timers = [
      every(200, tail),
      every(hbMs, () => {
        try {
          conn?.client.agentHeartbeat({ ts: new Date().toISOString(), queue_depth: st.pending.length, buffer_bytes: 0, push_lag_seq: Math.max(0, st.next_seq - 1 - st.acked_seq) });
        } catch {
          // closed: the reconnect loop takes over
        }
      }),
    ];
    // Host metrics every metrics_interval_secs (absent: 60 s; null: none). One sample here.
    const metricsSecs = config.metrics_interval_secs === undefined ? 60 : config.metrics_interval_secs;
    if (metricsSecs !== null) {
      timers.push(every(metricsSecs * 1000, () => {
        conn?.client.metricsPush({ ts: new Date().toISOString(), samples: [{ name: 'load1', value: loadavg()[0] }] }).catch(() => {
          // a refused or lost sample is not resent: the next one follows
        });
      }));
    }
  }

  function stopForGood(why, code) {
    stopped = true;
    for (const t of timers) t.cancel();
    staged?.cancel();
    log(why);
    setTimeout(() => process.exit(code), 50);
  }

  const handlers = {
    'probe.request': ({ probe, args }) => {
      if (probe !== 'demo.echo') throw new ProbeUnavailableError({ probe });
      if (args === null || typeof args !== 'object') throw new InvalidParamsError({ method: 'probe.request', errors: [{ path: '/args', message: 'must be an object' }] });
      return { output: args, exit_code: 0, stderr: null, duration_ms: 0 };
    },
    'config.update': ({ config: next, apply_after }) => updateConfig(next, apply_after),
    'agent.shutdown': ({ reason, drain_seconds }) => {
      const c = conn;
      if (reason === 'Revoked') {
        store.token = null;
        c?.ws.close(1000, finalReason());
        stopForGood('revoked: token deleted, stopping for good', 1);
        return;
      }
      // ServerReload / Decommission: send what is unacked within drain_seconds, then close.
      const close = () => {
        draining = null;
        if (conn === c) c.ws.close(1000, finalReason());
      };
      draining = close;
      setTimeout(close, drain_seconds * 1000);
      pump();
    },
  };

  process.on('SIGTERM', () => {
    conn?.ws.close(1000, finalReason());
    stopForGood('SIGTERM', 0);
  });

  while (!stopped) {
    let activeSince = 0;
    try {
      conn = null;
      const c = await connect(settings.server, helloParams(settings.host_id, store.token, st.acked_seq), handlers, requestTimeoutMs);
      if (c.hello.rotated_token) store.token = c.hello.rotated_token; // before any further RPC
      if (!Number.isSafeInteger(c.hello.accepted_seq) || c.hello.accepted_seq > LIMITS.max_seq) {
        // A protocol error (limits.json max_seq): send nothing in this session, retry later.
        c.ws.close(1011, 'accepted_seq beyond max_seq');
        throw new Error(`the server reports accepted_seq ${c.hello.accepted_seq}, beyond max_seq ${LIMITS.max_seq}`);
      }
      // Replay: entries up to accepted_seq are committed; everything after is resent.
      st.acked_seq = Math.max(st.acked_seq, c.hello.accepted_seq);
      st.pending = st.pending.filter((e) => e.seq > st.acked_seq);
      if (st.next_seq <= st.acked_seq) st.next_seq = st.acked_seq + 1;
      store.save();
      conn = c;
      activeSince = Date.now();
      applyConfig(c.hello.config);
      tail();
      const closed = await new Promise((resolve) => c.ws.once('close', (code) => resolve(code)));
      log(`connection closed (${closed})`);
    } catch (err) {
      if (err instanceof RpcError) {
        if (err.code === -32002) {
          store.token = null;
          stopForGood('token revoked (-32002): token deleted, stopping for good', 1);
          return;
        }
        if ([-32001, -32003, -32005].includes(err.code)) {
          stopForGood(`authentication failed for good (${err.code} ${err.message})`, 1);
          return;
        }
      }
      log(`connection failed: ${err.message}`);
    } finally {
      conn = null;
      inflight = 0;
      sentUpTo = 0;
      draining = null;
      pausedUntil = 0;
      for (const t of timers) t.cancel();
      timers = [];
      staged?.cancel();
      staged = null;
    }
    if (stopped) return;
    if (activeSince && Date.now() - activeSince >= 60_000) attempt = 0;
    // Full-jitter exponential backoff (seed 6).
    const delay = Math.floor(Math.random() * Math.min(capMs, baseMs * 2 ** attempt));
    attempt++;
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

// ───────────────────────────── main ─────────────────────────────

const [command, ...rest] = process.argv.slice(2);
const options = {
  server: { type: 'string' },
  token: { type: 'string' },
  'host-id': { type: 'string' },
  'state-dir': { type: 'string' },
  'backoff-base-ms': { type: 'string' },
  'backoff-cap-ms': { type: 'string' },
  'heartbeat-ms': { type: 'string' },
  'request-timeout-ms': { type: 'string' },
};
// A base64url token may begin with "-": parseArgs refuses `--token -abc…` as ambiguous, so
// each value is attached as `--token=-abc…` unless it is one of the options itself.
const isOption = (a) => a.startsWith('--') && a.slice(2).split('=')[0] in options;
const args = [];
for (let i = 0; i < rest.length; i++) {
  const a = rest[i];
  if (a.startsWith('--') && !a.includes('=') && a.slice(2) in options && i + 1 < rest.length && !isOption(rest[i + 1])) args.push(`${a}=${rest[++i]}`);
  else args.push(a);
}
const { values } = parseArgs({ args, options });
const need = (...names) => {
  for (const n of names) if (!values[n]) throw new Error(`--${n} is required`);
};
try {
  if (command === 'enroll') {
    need('server', 'token', 'host-id', 'state-dir');
    await enroll(values);
    process.exit(0);
  } else if (command === 'run') {
    need('state-dir');
    await run(values);
  } else {
    process.stderr.write('usage: agent.mjs enroll --server URL --token T --host-id ID --state-dir DIR\n       agent.mjs run --state-dir DIR [--backoff-base-ms N] [--backoff-cap-ms N] [--heartbeat-ms N] [--request-timeout-ms N]\n');
    process.exit(2);
  }
} catch (err) {
  log(err instanceof RpcError ? `${err.code} ${err.message}` : err.message);
  process.exit(1);
}

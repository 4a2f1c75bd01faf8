#!/usr/bin/env node
// A complete tiny Cortex agent using only @cortex/agent-protocol and ws. See README.md.
//
//   node agent.mjs enroll --server URL --token T --host-id ID --state-dir DIR
//   node agent.mjs run --state-dir DIR [--backoff-base-ms N] [--heartbeat-ms N]
//
// State dir: token (the credential alone), agent.json ({server, host_id}), state.json
// ({next_seq, acked_seq, offsets, pending}). Every file is replaced atomically (write a temp
// file, fsync, rename), and an entry is in state.json before it is sent, so a kill at any
// point loses nothing and never reuses a seq.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { arch, hostname, release } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import {
  AgentClient,
  PROTOCOL_VERSION,
  ProbeUnavailableError,
  InvalidParamsError,
  RpcError,
  SUBPROTOCOL,
  createAgentPeer,
  registerAgentHandlers,
  webSocketTransport,
} from '@cortex/agent-protocol';

const VERSION = '0.1.0';
const PROBES = ['demo.echo'];
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

/** Opens the socket and performs agent.hello. Resolves { ws, peer, client, hello } or rejects. */
async function connect(url, params, handlers) {
  const ws = new WebSocket(url, SUBPROTOCOL, { perMessageDeflate: false });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
  });
  ws.on('error', () => {});
  const peer = createAgentPeer(webSocketTransport(ws), { requestTimeoutMs: 15_000 });
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
  const capMs = 60_000;
  const st = store.state;
  let attempt = 0;
  let stopped = false;
  let conn = null;
  let config = null;
  let timers = [];
  let inflight = false;
  let draining = null;

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

  /** Sends the oldest unacked entries, one push at a time. */
  function pump() {
    if (!conn || inflight) return;
    const batch = st.pending.filter((e) => e.seq > st.acked_seq).slice(0, Math.min(config?.max_batch_entries ?? 100, 500));
    if (batch.length === 0) {
      if (draining) draining();
      return;
    }
    inflight = true;
    const c = conn;
    c.client.logsPush({ seq_start: batch[0].seq, entries: batch }).then(
      (ack) => {
        inflight = false;
        if (ack.up_to_seq > st.acked_seq) st.acked_seq = ack.up_to_seq;
        st.pending = st.pending.filter((e) => e.seq > st.acked_seq);
        store.save();
        pump();
      },
      (err) => {
        inflight = false;
        const retry = err instanceof RpcError && (err.code === -32020 || err.code === -32030) ? (err.data?.retry_after_ms ?? 1000) : 1000;
        if (conn === c) setTimeout(pump, retry);
      },
    );
  }

  function applyConfig(next) {
    config = next;
    for (const t of timers) clearInterval(t);
    const hbMs = Number(opts['heartbeat-ms'] ?? config.heartbeat_interval_secs * 1000);
    timers = [
      setInterval(tail, 200),
      setInterval(() => {
        try {
          conn?.client.agentHeartbeat({ ts: new Date().toISOString(), queue_depth: st.pending.length, buffer_bytes: 0, push_lag_seq: Math.max(0, st.next_seq - 1 - st.acked_seq) });
        } catch {
          // closed: the reconnect loop takes over
        }
      }, hbMs),
    ];
  }

  function stopForGood(why, code) {
    stopped = true;
    for (const t of timers) clearInterval(t);
    log(why);
    setTimeout(() => process.exit(code), 50);
  }

  const handlers = {
    'probe.request': ({ probe, args }) => {
      if (probe !== 'demo.echo') throw new ProbeUnavailableError({ probe });
      if (args === null || typeof args !== 'object') throw new InvalidParamsError({ method: 'probe.request', errors: [{ path: '/args', message: 'must be an object' }] });
      return { output: args, exit_code: 0, stderr: null, duration_ms: 0 };
    },
    'config.update': ({ config: next }) => applyConfig(next),
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
      const c = await connect(settings.server, helloParams(settings.host_id, store.token, st.acked_seq), handlers);
      if (c.hello.rotated_token) store.token = c.hello.rotated_token; // before any further RPC
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
      inflight = false;
      draining = null;
      for (const t of timers) clearInterval(t);
      timers = [];
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
  'heartbeat-ms': { type: 'string' },
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
    process.stderr.write('usage: agent.mjs enroll --server URL --token T --host-id ID --state-dir DIR\n       agent.mjs run --state-dir DIR [--backoff-base-ms N] [--heartbeat-ms N]\n');
    process.exit(2);
  }
} catch (err) {
  log(err instanceof RpcError ? `${err.code} ${err.message}` : err.message);
  process.exit(1);
}

#!/usr/bin/env node
// A real agent process for fault tests and the soak: runs the reference agent's library
// entry (dist/agent/index.js) with short test intervals, plus an optional generator.
//
//   node test/support/agent-runner.mjs '<json options>'
//
// Options: stateDir (required), total (generator: entries to produce in all, 0 = none),
// rate (entries/s, 0 = as fast as the buffer takes them), chunk (entries per ingest),
// pingWatchdogMs, backoffBaseMs, backoffCapMs, heartbeatIntervalMs, window, logLevel,
// sources (true: plug in the file source factories from dist/agent/sources when present).
//
// The generator commits its position ("custom:gen" = entries produced so far) in the same
// buffer transaction as the entries, so after a SIGKILL it resumes exactly where the
// buffer stopped: message `gen <k>` is produced once for every k in 1..total.
//
// stdout: one JSON object per line: {"ev":"started"}, {"ev":"state","to":...},
// {"ev":"progress","produced":k,"acked":n}, {"ev":"done","produced":total,"acked":n}.
// Logs (JSON) go to stderr. SIGTERM: clean stop, exit 0.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const opts = JSON.parse(process.argv[2] ?? '{}');
const lib = await import(pathToFileURL(join(ROOT, 'dist/agent/index.js')).href);

const say = (o) => process.stdout.write(`${JSON.stringify({ ...o, t: Date.now() })}\n`);
const logger = lib.createLogger({ level: opts.logLevel ?? 'info' });

let sourceFactories = [];
if (opts.sources) {
  try {
    const src = await import(pathToFileURL(join(ROOT, 'dist/agent/sources/index.js')).href);
    sourceFactories = src.sourceFactories({ logger, pollMs: opts.pollMs ?? 50 });
  } catch (err) {
    say({ ev: 'no_sources', error: String(err) });
  }
}

const agent = await lib.startAgent({
  stateDir: opts.stateDir,
  ...(opts.serverUrl ? { serverUrl: opts.serverUrl } : {}),
  ...(opts.hostId ? { hostId: opts.hostId } : {}),
  allowInsecure: true,
  logger,
  sourceFactories,
  pingWatchdogMs: opts.pingWatchdogMs ?? 3000,
  heartbeatIntervalMs: opts.heartbeatIntervalMs ?? 1000,
  heartbeatJitterMs: 0,
  heartbeatMinMs: 100,
  metricsIntervalMs: opts.metricsIntervalMs ?? 0,
  helloTimeoutMs: opts.helloTimeoutMs ?? 3000,
  connectTimeoutMs: opts.connectTimeoutMs ?? 3000,
  requestTimeoutMs: opts.requestTimeoutMs ?? 5000,
  stopFlushMs: 1000,
  statusIntervalMs: 250,
  ...(opts.window ? { window: opts.window } : {}),
  backoff: { baseMs: opts.backoffBaseMs ?? 100, capMs: opts.backoffCapMs ?? 2000 },
});
say({ ev: 'started', pid: process.pid });
agent.on('state', (t) => say({ ev: 'state', from: t.from, to: t.to, event: t.event }));

const total = opts.total ?? 0;
const chunk = opts.chunk ?? 200;
const rate = opts.rate ?? 0;
const SOURCE = 'custom:gen';
let produced = Number(agent.buffer.getSourcePosition(SOURCE) ?? 0);
say({ ev: 'resume', produced, next_seq: agent.buffer.nextSeq, acked_seq: agent.buffer.ackedSeq });

let stopping = false;
const t0 = Date.now();
const startProduced = produced;
async function generate() {
  while (!stopping && produced < total) {
    if (rate > 0) {
      const due = startProduced + Math.floor(((Date.now() - t0) / 1000) * rate);
      if (produced >= due) {
        await new Promise((r) => setTimeout(r, 5));
        continue;
      }
    }
    const n = Math.min(chunk, total - produced);
    const ts = new Date().toISOString();
    const entries = [];
    for (let i = 1; i <= n; i++) entries.push({ ts, severity: 'info', message: `gen ${produced + i}`, source: SOURCE });
    try {
      agent.ingest(entries, { position: { source: SOURCE, position: produced + n } });
      produced += n;
    } catch (err) {
      say({ ev: 'ingest_error', name: err?.name, kind: err?.kind, message: String(err?.message) });
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    // let the sender run between chunks
    await new Promise((r) => setImmediate(r));
    // keep the buffer bounded: do not run far ahead of the acks
    let guard = 0;
    while (!stopping && agent.buffer.nextSeq - 1 - agent.buffer.ackedSeq > (opts.maxAhead ?? 20_000) && guard++ < 2000) {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

// The file runners' own status (lines_read, lines_lost, rotations, truncations); the
// agent's status() keeps only position/last_error, so read the manager's runners.
function fileSourceStatus() {
  const running = agent.sources.running;
  if (!(running instanceof Map)) return agent.status().sources;
  return [...running.values()].map((r) => (r.source && typeof r.source.status === 'function' ? r.source.status() : { error: r.error }));
}

const progress = setInterval(() => {
  const st = agent.status();
  say({ ev: 'progress', produced, acked: st.acked_seq, next_seq: st.next_seq, state: st.state, ...(opts.sources ? { sources: fileSourceStatus() } : {}) });
}, opts.progressMs ?? 500);
progress.unref();

process.on('SIGTERM', () => {
  stopping = true;
  void agent.stop().then(() => {
    say({ ev: 'stopped', produced });
    process.exit(0);
  });
});

await generate();
if (total > 0 && !stopping) {
  // wait until everything produced is acked (bounded by the test's own timeout)
  const last = agent.buffer.nextSeq - 1;
  const poll = async () => {
    for (let i = 0; i < 100_000 && !stopping; i++) {
      try {
        await agent.waitForAck(last, 1000);
        return true;
      } catch {
        // not yet
      }
    }
    return false;
  };
  if (await poll()) say({ ev: 'done', produced, acked: agent.buffer.ackedSeq, last_seq: last });
}

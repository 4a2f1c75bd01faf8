// The scope of `npm run conformance:mutants`: the modules that implement the wire rules, the
// parts of each that are mutated, what is left out of them and why, and the conformance cases
// that test each module. Parts are found by text (a function's signature, its body as the
// TypeScript parser sees it, or the lines between two markers), so the scope follows the code
// when lines move; a part or an exception that is no longer found fails the run, naming this file.
import { readFileSync } from 'node:fs';
import ts from 'typescript';

/**
 * side: which suite tests it (run-server.mjs / run-agent.mjs).
 * parts: a function signature (its body), or { from, to } (the line holding `from` up to, not
 *   including, the next one holding `to`).
 * except: source text inside the parts that is not mutated, each with the reason (listed in
 *   conformance/MUTANTS.md); every occurrence inside a part is left out, and so is any mutant
 *   that spans one (a whole enclosing block, say).
 * cases: the runner's --only list for a mutant of this module (the dry run without a mutant
 *   runs every case). Cases a selected one needs (handshake/first-enrollment-rotates: the
 *   primary host's credential) are listed too.
 */
export const MODULES = [
  {
    side: 'server',
    name: 'handshake',
    // the hello verdict (protocol and agent versions, host id, token, revoked, rotation
    // required, enrollment expiry, params, resume_from_seq) and which rotation the session
    // gets: the pure decision module (its I/O, hello-flow.ts, only carries it out)
    file: 'server/ws/handshake.ts',
    parts: ['export function helloHostId(', 'export function screenHello(', 'export function needsEnrollmentExpiry(', 'export function decideHello('],
    except: [
      { text: '.slice(0, 20)', why: 'how many schema issues the -32602 data lists is not a rule' },
      { text: "outcome: rotatedToken === undefined ? 'ok' : row.connection_state === 'NeverConnected' ? 'enrolled' : 'rotated',", why: 'the label of a server metric, not wire behaviour' },
    ],
    cases: [
      'handshake/*', 'vector/agent.hello/*', 'error/-32001-*', 'error/-32002-*', 'error/-32003-*', 'error/-32005-*',
      'close/4001-*', 'close/4002-*', 'close/1012-*', 'revocation/*', 'rotation/*', 'ingest/ack-up-to-seq', 'control/decommission-hello-while-draining',
    ],
  },
  {
    side: 'server',
    name: 'ingest',
    // contiguity, max_seq, metadata limits, the refused-push rule, cap, host gone, quota, queue
    file: 'server/ingest.ts',
    parts: ['  push(params: LogsPushParams)', '  private accept('],
    except: [
      { text: '`must be seq_start + ${i} = ${seq_start + i} (entries are contiguous from seq_start)`', why: 'the text of the -32602 message' },
      { text: 'replaced += makeStorable(e);', why: 'the count of replaced characters only feeds a log line and a metric (the replacement itself, makeStorable, is not mutated here)' },
      { text: "if (replaced > 0) {\n      this.ingest.options.metrics?.charsReplaced.inc(replaced);", why: 'a log line and a metric, not wire behaviour' },
      { text: 'this.pendingEntries += n;\n      this.pendingChars += chars;\n      if (this.pendingEntries >= this.ingest.flushEntries || this.pendingChars >= ACK_FLUSH_CHARS) this.requestFlush();', why: 'the K and 256 KiB triggers (DECISIONS H16): whether the ack comes at K entries, at 256 KiB of text or T ms later is timing the runner does not judge (all are allowed on the wire); pinned in-process by test/contract/pinned-server.test.ts R-ING-06' },
    ],
    cases: [
      'handshake/first-enrollment-rotates', 'ingest/*', 'error/-32007-*', 'error/-32008-*', 'error/-32020-*', 'error/-32030-*', 'vector/logs.push/*',
    ],
  },
  {
    side: 'server',
    name: 'control',
    // the control watcher: which rows it acts on, revocation (agent.shutdown Revoked, close
    // 4002), decommission (the drain, then revocation), rotation (ServerReload, then 1012),
    // config.update after a config change, a session superseded in the database
    file: 'server/control/control.ts',
    // Not onSessionClosed (a decommission drain cut short by the agent's close revokes at once):
    // the wire cannot tell it from revoking at the next hello, which handshake.ts's
    // decommission branch refuses -32002 + 4002 either way (DESIGN 5.13).
    parts: ['  private async pollOnce(', '  private apply(', '  private closeRevoked(', '  private askRotation(', '  private startDecommission(', '  private async finishDecommission('],
    except: [
      { text: "this.metrics.controlActions.labels('superseded').inc();", why: 'a server metric' },
      { text: "this.metrics.controlActions.labels('config_update').inc();\n        this.logger.info({ host_id: row.host_id, config_version: version, apply_after: applyAfter }, 'config.update sent');", why: 'a server metric and a log line' },
      { text: "this.metrics.controlActions.labels('revoke').inc();", why: 'a server metric' },
      { text: "this.metrics.controlActions.labels('rotate').inc();", why: 'a server metric' },
      { text: "this.metrics.controlActions.labels('decommission').inc();", why: 'a server metric' },
      { text: "this.logger.info(\n        { host_id: row.host_id, session_id: conn.session_id },\n        reissued ? 'token reissued (agent issue --host-id): closing the session; the agent must enroll again with the new token' : 'session superseded in the database: closing',\n      );", why: 'a log line' },
      { text: "this.logger.info({ host_id: conn.host_id, session_id: conn.session_id, why }, 'session revoked: agent.shutdown Revoked, closing 4002');", why: 'a log line' },
      { text: "this.logger.info({ host_id: conn.host_id, session_id: conn.session_id }, 'rotation requested: asked the agent to reconnect');", why: 'a log line' },
      { text: "this.logger.info({ host_id: conn.host_id }, 'agent did not reconnect for rotation: closing 1012');", why: 'a log line' },
      { text: "this.logger.info({ host_id, drain_seconds: drain }, 'decommission: agent.shutdown Decommission sent; revoking after the drain');", why: 'a log line' },
      { text: "this.logger.info({ host_id }, 'decommission: drain over, host revoked (rows kept)');", why: 'a log line' },
      { text: "this.logger.error({ host_id, err: String(error) }, 'decommission: revocation failed');", why: 'a log line' },
      { text: "const hosts = [...this.notified].slice(0, 500);\n    for (const h of hosts) this.notified.delete(h);", why: "PostgreSQL's NOTIFY shortcut (hosts named by a notification are read again): it only makes a change seen before the next 300 ms poll, which reads it anyway; the run's reference server uses SQLite" },
      { text: "const extra = await listControlStateOf(this.storage.db, hosts.filter((h) => !seen.has(h)));", why: "the same NOTIFY shortcut (see above)" },
      { text: "if (row.connection_state !== 'Revoked' && row.session_id !== conn.session_id) {\n        recheck.push(row.host_id);\n        continue;\n      }", why: 'race guard: a row read before a hello activation committed is read again (PostgreSQL under load; test/server/control-stale-read.test.ts)' },
      { text: "if (recheck.length === 0) return;\n    for (const row of await listControlStateOf(this.storage.db, recheck)) {\n      const conn = this.sessions.get(row.host_id);\n      if (conn === undefined || !conn.open) continue;\n      this.apply(conn, row);\n    }", why: 'race guard: a row read again because it was read before a hello activation committed (PostgreSQL under load; test/server/control-stale-read.test.ts)' },
    ],
    cases: ['handshake/first-enrollment-rotates', 'revocation/*', 'rotation/*', 'control/*', 'close/4002-*', 'close/1012-*', 'error/-32002-*'],
  },
  {
    side: 'server',
    name: 'probes',
    // the probe router's outcomes (DESIGN 5.11): 404 -32004, 422 -32010 (nothing sent), the
    // agent's error passed through, 502 -32603 for an answer that is no ProbeOutput, 503 when
    // the session closes first, 504 -32012 after timeout_ms + grace
    file: 'server/control/probes.ts',
    parts: ['  async invokeLocal('],
    except: [
      { text: "const row = /^[0-9a-f-]{36}$/.test(id) ? await getAgent(this.storage.db, id) : undefined;\n      const message =\n        row === undefined\n          ? `unknown host ${host_id}`\n          : row.connection_state === 'Active'\n            ? this.forwarder !== undefined\n              ? `host ${id} is marked Active but no live server on this database holds its session (its server stopped or lost its lease; the agent reconnects shortly)`\n              : `host ${id} has no session on this server (it may be connected to another server process; send the probe to that one)`\n            : `host ${id} is not connected (state ${row.connection_state})`;", why: 'the text of the -32004 reason (which host state it names)' },
      { text: "this.metrics.probeRequests.labels(probe, 'unlisted').inc();", why: 'a server metric' },
      { text: "const started = performance.now();", why: 'only feeds a metric' },
      { text: "this.metrics.probeRequests.labels(probe, 'ok').inc();\n      this.metrics.probeDuration.labels(probe).observe((performance.now() - started) / 1000);", why: 'server metrics' },
      { text: "this.metrics.probeRequests.labels(probe, 'agent_error').inc();\n        this.metrics.probeDuration.labels(probe).observe((performance.now() - started) / 1000);", why: 'server metrics' },
      { text: "this.metrics.probeRequests.labels(probe, 'timeout').inc();\n        this.logger.info({ host_id: id, probe, timeout_ms }, 'probe timed out (-32012)');", why: 'a server metric and a log line' },
      { text: "this.metrics.probeRequests.labels(probe, 'invalid_output').inc();", why: 'a server metric' },
      { text: "if (error instanceof PeerError && (error.code === 'closed' || error.code === 'send_failed')) {\n        this.metrics.probeRequests.labels(probe, 'session_closed').inc();\n        throw new ProbeFailure(503, new InternalError({ reason: `the session closed before the probe was answered (${error.message})` }, 'InternalError'));\n      }", why: 'differs from the fallback after it only by its metric label and its reason text: both answer 503 -32603 (admin/probe-session-closed judges that)' },
      { text: "String((error as Error)?.message ?? error)", why: 'the text of the -32603 reason' },
      { text: "this.metrics.probeRequests.labels(probe, 'error').inc();\n      this.logger.error({ host_id: id, probe, err: String(error) }, 'probe failed');", why: 'a server metric and a log line' },
    ],
    cases: ['handshake/first-enrollment-rotates', 'admin/probe-*', 'error/-32004-*'],
  },
  {
    side: 'agent',
    name: 'agent session',
    // the hello and its result (rotated token persisted before anything else, fatal auth,
    // Revoked, resume point), and the close reason final_seq=<n>
    file: 'agent/session.ts',
    parts: ['  private async authenticate(', '  private finalSeqReason('],
    except: [
      { text: 'if (conn !== this.conn || this.halted) return;', why: 'race guard: a hello outcome arriving after the connection was replaced or the agent was stopped' },
      { text: "const what =\n        err instanceof RpcError\n          ? err.code === ErrorCode.InternalError\n            ? `hello failed on the server: ${err.message}; retrying (the server's log says why: its database out of reach, for one)`\n            : `hello rejected: ${err.message}`\n          : `hello failed: ${(err as Error).message}`;", why: 'the text of the status error and log line' },
      { text: 'this.log.warn({ code: err instanceof RpcError ? err.code : (err as PeerError).code }, msg);', why: 'a log line' },
      { text: "events.emit('hello', { ...result, rotated_token: result.rotated_token ? '[redacted]' : result.rotated_token });", why: "an in-process event (the library's 'hello'), not wire behaviour" },
      { text: "const msg = this.deps.setError(authErrorMessage(code, this.options.hostId) + (total > 1 ? ` (every server of agent.json, ${total}, refused it)` : ''));\n        this.log.error({ code, ...(total > 1 ? { servers_refused: refused } : {}) }, msg);", why: 'the status text and log line of a fatal refusal (how many servers of agent.json refused it)' },
      { text: "if (replaced >= REPLACED_LIMIT) this.deps.setError(this.cloneMessage(replaced));\n    else this.deps.clearError();", why: "the status text while another agent uses this host's identity (a cloned state directory): what status shows, pinned in-process by test/agent" },
    ],
    cases: undefined, // the whole agent suite: every case starts from a hello
  },
  {
    side: 'agent',
    name: 'sender',
    // the logs.push sender: the window, batch size and flush, what an ack deletes (F5), and
    // what each refusal does (-32020/-32030 pause, -32008 halving, -32007 pause, -32004
    // reconnect, another code, a push timed out)
    file: 'agent/push-pump.ts',
    parts: ['  private pump(): void', '  private send(', '  private onAck(', '  private onPushError('],
    except: [
      { text: 'if (conn === null || !this.deps.canSend()) return;', why: 'race guard: the pump is woken only while a session is Active or Draining' },
      { text: 'this.rate.cap() !== null || this.pausedUntil > this.now()', why: 'the window of one while the send rate recovers or a pause runs: not a contract rule (DECISIONS K9; B6a keeps a refused range from being passed)' },
      { text: 'const looksFull = unsent >= size || unsent * this.avgEntryBytes >= maxBytes;', why: 'whether a batch that is not full waits for the flush timer (armed either way) or goes at once: the contract lets a batch go at any size up to the cap and at any time within the flush bound (DECISIONS K10)' },
      { text: 'const rateWait = this.rate.delayFor(Math.min(unsent, size));\n      if (rateWait > 0) return this.armPumpTimer(rateWait);', why: 'the send rate: not judged (DECISIONS K9, "halve the send rate" is relative to a rate a client cannot see)' },
      { text: 'this.avgEntryBytes = Math.max(1, Math.round(batch.bytes / n));\n      const full = n >= size || batch.seqEnd < sendable - 1;', why: 'the same early-send heuristic as looksFull (DECISIONS K10)' },
      { text: 'if (!full) this.flushDue = false;', why: 'the same early-send heuristic (DECISIONS K10)' },
      { text: 'if (conn.inFlight === 0) this.idleWaiter?.();', why: "wakes agent.stop()'s wait for the pushes in flight (the SIGTERM flush): a process signal, not wire behaviour; pinned in-process by test/agent/push-pump.test.ts" },
      { text: 'if (conn !== this.deps.connection()) return;', why: "race guard: an answer arriving after the session's connection was replaced (as session.ts's)" },
      { text: "if (typeof (err.data as { resend_from_seq?: unknown } | undefined)?.resend_from_seq !== 'number') this.rate.halve();", why: 'whether a B6a follow-on refusal halves the send rate again: the rate is not judged (DECISIONS K9)' },
      { text: "const message = (err as Error).message;\n        const stored = this.deps.setError(message);\n        const w = this.readWarned;\n        const now = this.now();\n        if (w === null || w.message !== message || now - w.at >= READ_ERROR_LOG_EVERY_MS) {\n          this.deps.log.error({ err: message, ...(w !== null ? { failed_since_last_line: w.since } : {}) }, 'cannot read the buffer; retrying every second');\n          this.readWarned = { message, at: now, since: 0, stored };\n        } else {\n          w.since++;\n          w.stored = stored;\n        }", why: 'the log lines and the status text of a local buffer read failure, said once a minute (no peer can cause one; pinned in-process by test/agent/push-pump.test.ts)' },
      { text: "if (this.readWarned !== null) {\n        this.deps.log.info({ failed_since_last_line: this.readWarned.since }, 'the buffer reads again');\n        this.deps.clearErrorIf(this.readWarned.stored);\n        this.readWarned = null;\n      }", why: 'the line and the status text when a local buffer read works again (no peer can cause the failure)' },
      { text: "this.deps.log.warn({ up_to_seq: upTo, highest_sent_seq: this.highestSentSeq }, 'server acknowledged entries that were never sent; ignoring the excess');", why: 'a log line' },
      { text: "if (r.jumped) this.deps.log.warn({ up_to_seq: res.up_to_seq, next_seq: r.nextSeq }, 'ack beyond next_seq: next_seq jumped');", why: 'a log line' },
      { text: "} catch (err) {\n        // rows stay and are resent later; the server drops the duplicates\n        this.deps.log.error({ err: (err as Error).message }, 'cannot record the ack in the buffer');\n        this.deps.storageError(err);\n      }", why: 'a local buffer write failure while recording an ack (no peer can cause one; its storage-error handling is pinned in-process by test/agent)' },
      { text: "if (res.up_to_seq < batch.seqEnd && conn === this.deps.connection()) {\n      this.deps.log.debug({ up_to_seq: res.up_to_seq, seq_end: batch.seqEnd }, 'partial ack');\n    }", why: 'a debug log line' },
      { text: "this.deps.events.emit('push_error', { code, seq_start: batch.seqStart, seq_end: batch.seqEnd });", why: "an in-process event (the library's 'push_error'), not wire behaviour" },
      { text: "const code = err instanceof RpcError ? err.code : err instanceof PeerError ? err.code : 'unknown';", why: "only feeds the in-process 'push_error' event" },
      { text: "log.warn({ code: err.code, retry_after_ms: pause, ...capped, rate_cap: Math.round(this.rate.cap() ?? 0), ...(w !== null && w.since > 0 ? { refused_since_last_line: w.since } : {}) }, 'server asked to slow down');", why: 'a log line' },
      { text: "log.warn({ batch_entries: this.batchCap }, 'payload too large: halving the batch size');", why: 'a log line' },
      { text: "const reason = (err.data as { reason?: unknown } | undefined)?.reason;\n          const why = typeof reason === 'string' && reason !== '' ? reason.slice(0, 300) : err.message;\n          this.storeError = this.deps.setError(`the server could not store logs.push (-32007: ${why}); the entries are kept and resent`);\n          // Every push in flight is refused, again at each retry: one line per reason and minute,\n          // not four a second for as long as the server's database is out.\n          const w = this.storeWarned;\n          if (w === null || w.reason !== why || this.now() - w.at >= 60_000) {\n            log.warn({ retry_after_ms: pause, ...capped, reason: why, ...(w !== null && w.since > 0 ? { refused_since_last_line: w.since } : {}) }, 'server could not store the batch; keeping it and resending after a pause');\n            this.storeWarned = { reason: why, at: this.now(), since: 0 };\n          } else w.since++;", why: "the status text of a -32007 and its log line, one per reason and minute (DECISIONS H12): what the agent shows, not what it sends" },
      { text: "this.deps.setError(`logs.push rejected (${err.code} ${err.message})`);\n          log.error({ code: err.code, data: err.data }, 'logs.push rejected; retrying after a pause');", why: 'the status text and a log line' },
      { text: "log.warn('logs.push timed out; treating the connection as dead');", why: 'a log line' },
      { text: "log.error({ err: (err as Error)?.message }, 'logs.push failed locally; retrying after a pause');", why: 'a log line' },
    ],
    // The story's steps outside the cases still run (restarts, reconnects); left out are the
    // cases that judge other modules and cost seconds each (B, C, D: fresh agents, quiet windows;
    // the hello-error reconnects; backoff; heartbeat; the staged config).
    cases: ['agent/enroll-exit', 'agent/subprotocol-offered', 'agent/hello-contents', 'agent/rotated-token-used', 'agent/logs-sequencing', 'agent/kill-with-unacked', 'agent/rotated-token-persisted', 'agent/replay-after-kill', 'agent/no-seq-reuse', 'agent/config-update', 'agent/shutdown-server-reload', 'agent/reconnect-after-reload', 'agent/push-*', 'agent/shutdown-decommission', 'agent/requests-valid'],
  },
  {
    side: 'agent',
    name: 'agent control',
    // what the server asks of the agent: agent.shutdown (Revoked, drain), probe.request, config.update
    file: 'agent/control.ts',
    parts: ['  handlersFor(', '  applyConfig(', '  afterAck(', '  private onShutdown(', '  private finishDrain(', '  private async onProbeRequest(', '  private onConfigUpdate(', '  private stageUntil('],
    except: [
      { text: "if (from === 'update') log.info({ config: summarizeConfig(config) }, 'config.update applied');", why: 'a log line' },
      { text: "} catch (err) {\n      log.error({ err: (err as Error).message }, 'applying log sources failed');\n    }", why: 'a log line of a local failure' },
      { text: "} catch (err) {\n        log.error({ err: (err as Error).message, probe_concurrency: config.probe_concurrency }, 'cannot apply probe_concurrency');\n      }", why: 'a log line of a local failure' },
      { text: "this.deps.events.emit('config_applied', config);\n    this.deps.writeStatus();", why: "an in-process event and the status file, not wire behaviour" },
      { text: "this.deps.log.info({ reason: params.reason, drain_seconds: params.drain_seconds }, 'agent.shutdown received');", why: 'a log line' },
      { text: 'if (!session.isCurrent(conn)) return;', why: 'race guard: a notification of a connection the session has replaced' },
      { text: "this.deps.log.info({ why, acked_seq: this.deps.buffer.ackedSeq, drain_target: this.drainTarget }, 'drain finished');", why: 'a log line' },
      { text: "const started = Date.now();", why: 'only feeds a log line' },
      { text: "log.info({ probe: params.probe, duration_ms: out.duration_ms, exit_code: out.exit_code }, 'probe answered');", why: 'a log line' },
      { text: "if (err instanceof RpcError) {\n        log.info({ probe: params.probe, code: err.code, ms: Date.now() - started }, 'probe failed');\n      } else if (!conn.probeAbort.signal.aborted) {\n        log.error({ probe: params.probe, err: (err as Error)?.message ?? String(err) }, 'probe failed unexpectedly');\n      }", why: 'log lines (the error itself is rethrown as it is)' },
      { text: "this.deps.log.info({ apply_after: params.apply_after }, 'config.update staged');", why: 'a log line' },
    ],
    cases: ['agent/enroll-exit', 'agent/hello-contents', 'agent/logs-sequencing', 'agent/probe-*', 'vector/*', 'error/*', 'agent/config-*', 'agent/shutdown-*', 'agent/reconnect-after-reload', 'agent/push-window-several', 'agent/push-flush-latency', 'agent/requests-valid'],
  },
];

/** Line range (1-based, inclusive) of the body that starts at the first "{" after `signature`. */
export function rangeOf(file, signature) {
  const text = readFileSync(file, 'utf8');
  const [a, b] = bodySpan(text, file, signature);
  const line = (pos) => text.slice(0, pos).split('\n').length;
  return `${file}:${line(a)}-${line(b)}`;
}

const sources = new Map();
/** The file parsed once for all its parts. */
function parsed(file, text) {
  let source = sources.get(file);
  if (source === undefined || source.text !== text) {
    source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    sources.set(file, source);
  }
  return source;
}

/**
 * [start, end) offsets from the signature to the body's closing brace (inclusive). The function
 * is found by the TypeScript parser: brace counting by hand took a quote inside a template
 * literal (`the server's log`) for a string and ran on past the body (DECISIONS K12).
 */
function bodySpan(text, file, signature) {
  const at = text.indexOf(signature);
  if (at < 0) throw new Error(`mutants: ${file} has no "${signature}" any more: update scripts/mutants/ranges.mjs`);
  const start = at + signature.length - signature.trimStart().length;
  const source = parsed(file, text);
  let found;
  const visit = (node) => {
    if (found !== undefined) return;
    if (node.getStart(source) === start && ts.isFunctionLike(node) && node.body !== undefined) found = node;
    else ts.forEachChild(node, visit);
  };
  visit(source);
  if (found === undefined) throw new Error(`mutants: no function with a body at "${signature}" in ${file}`);
  return [at, found.end];
}

/** [start, end) offsets of the lines from the one holding `from` up to (not including) the next one holding `to`. */
function linesSpan(text, file, from, to) {
  const lines = text.split('\n');
  const a = lines.findIndex((l) => l.includes(from));
  const b = a < 0 ? -1 : lines.findIndex((l, i) => i > a && l.includes(to));
  if (a < 0 || b < 0) throw new Error(`mutants: ${file} has no "${from}" … "${to}" any more: update scripts/mutants/ranges.mjs`);
  const offset = (n) => lines.slice(0, n).reduce((s, l) => s + l.length + 1, 0);
  return [offset(a), offset(b) - 1];
}

/** Stryker `mutate` entries of one module: "file:line:col-line:col" (line 1-based, col 0-based, end exclusive). */
export function moduleRanges(m) {
  const text = readFileSync(m.file, 'utf8');
  const pos = (off) => {
    const before = text.slice(0, off).split('\n');
    return `${before.length}:${before.at(-1).length}`;
  };
  const out = [];
  for (const part of m.parts) {
    const [a, b] = typeof part === 'string' ? bodySpan(text, m.file, part) : linesSpan(text, m.file, part.from, part.to);
    const cuts = [];
    for (const ex of m.except) {
      let found = 0;
      for (let i = text.indexOf(ex.text, a); i >= 0 && i + ex.text.length <= b; i = text.indexOf(ex.text, i + 1)) {
        cuts.push([i, i + ex.text.length]);
        found++;
      }
      ex.found = (ex.found ?? 0) + found;
    }
    cuts.sort((x, y) => x[0] - y[0]);
    let from = a;
    for (const [c0, c1] of cuts) {
      if (c0 > from) out.push(`${m.file}:${pos(from)}-${pos(c0)}`);
      from = Math.max(from, c1);
    }
    if (b > from) out.push(`${m.file}:${pos(from)}-${pos(b)}`);
  }
  for (const ex of m.except) {
    if (!ex.found) throw new Error(`mutants: ${m.file} has no "${ex.text}" inside its parts any more: update scripts/mutants/ranges.mjs`);
  }
  return out;
}

export function mutateList(side) {
  return MODULES.filter((m) => m.side === side).flatMap(moduleRanges);
}

/** The module a mutated file belongs to. */
export function moduleOf(file) {
  return MODULES.find((m) => m.file === file);
}

/**
 * PROTOCOL.md's "Agent behaviour": what an agent must do beyond the shape of each message, in
 * the package's own words, so that an author who has only the package can write a conforming
 * agent. The conformance runner's messages cite these sections (PROTOCOL.md#<section>), and a
 * test checks that every section it cites is here. Limits are named with their values from
 * limits.json; a limit that is renamed or removed fails codegen here.
 */
import type { Contract } from './contract.js';

/** The section headings; their anchors (lower case, spaces to hyphens) are what citations name. */
export const BEHAVIOUR_SECTIONS = [
  'Connecting',
  'Rotated token',
  'Hello refused',
  'Sequence numbers',
  'Acks',
  'Sending logs',
  'Refusals and resends',
  'Shutdown and drain',
  'Configuration updates',
  'Probes on the agent',
] as const;

export function behaviourSection(contract: Contract): string[] {
  const limit = (name: string): string => {
    const l = contract.limits[name];
    if (l === undefined) throw new Error(`PROTOCOL.md "Agent behaviour" names limit ${name}, which limits.json does not define`);
    return `\`${name}\` = ${String(l.value)}${l.unit !== undefined && l.unit !== 'seq' ? ` ${l.unit}` : ''}`;
  };
  const sections: Record<(typeof BEHAVIOUR_SECTIONS)[number], string[]> = {
    Connecting: [
      `Offer the subprotocol \`${String(contract.limits['subprotocol']?.value)}\` and no WebSocket extension: V1 has no frame-level compression, so the upgrade never offers \`permessage-deflate\` (\`Sec-WebSocket-Extensions\`; some WebSocket libraries offer it unless told not to).`,
      `Send one JSON-RPC message per text frame, each at most ${limit('max_frame_bytes')}. A text frame from the server over that size: close the connection with 1009; a binary frame: close with 1003 ([close codes](#websocket-close-codes)); then reconnect as after any lost connection.`,
      'The first frame on a connection is `agent.hello`. Wait for its answer only so long (a timeout of the agent\'s own): then close that connection and reconnect with backoff.',
      `Reconnect with full-jitter backoff: delay = rand(0, min(cap, base * 2^attempt)) with ${limit('backoff_base_s')} and ${limit('backoff_cap_s')}, the attempt counter reset after ${limit('backoff_reset_after_active_s')} in Active ([state machine](#agent-connection-state-machine)).`,
    ],
    'Rotated token': [
      'When a HelloResult carries `rotated_token`, it is the agent\'s credential from then on: save it atomically (write a new file, then rename it over the old one), replacing the token the hello carried, **before the agent sends anything else** on that connection: no request, notification or response goes out before the token is on disk. An agent killed at any moment after that must present the new token when it starts again.',
      'After a first enrollment the enrollment token is invalid at once: an agent that lost the rotated token cannot connect again. After a later rotation the server may accept the previous token for a grace period; the agent does not rely on it.',
      'Tokens are secrets: never log them.',
    ],
    'Hello refused': [
      '-32001 AuthFailed, -32003 AgentVersionUnsupported, -32005 TokenRotationRequired (close 4001): the agent stops connecting for good (FatalAuth): no further connection attempt, however long it keeps running; an operator has to act (-32005: enroll again).',
      '-32002 TokenRevoked (close 4002), like `agent.shutdown` Revoked: delete the stored token and never connect again. Started again, the agent never presents that token.',
      '-32603 InternalError or a closed connection: reconnect with backoff and send the hello again.',
      `A HelloResult with \`accepted_seq\` above \`max_seq\` is a protocol error: send nothing on that connection, close it and reconnect with backoff. \`accepted_seq\` = \`max_seq\` is valid ([limits](#limits-and-timings)).`,
    ],
    'Sequence numbers': [
      `Each log entry gets the next seq when the agent reads it, from ${limit('first_seq')} on, one more per entry. A seq is never given to other content, also not after a restart: the agent keeps its next seq (and the entries not yet acked) on disk.`,
      'In a `logs.push`, `seq_start` = `entries[0].seq` and the entries are contiguous: `entries[i].seq` = `seq_start` + i. Otherwise the push is answered -32602 and nothing of it is accepted.',
      'After each accepted hello: acked = max(the agent\'s own acked seq, `accepted_seq`); delete the entries up to it; push again from acked + 1 (the entries not acked, with their original content). The hello\'s `resume_from_seq` is the agent\'s acked seq. If the agent\'s next seq is not above `accepted_seq` (its buffer was lost), it continues after `accepted_seq`.',
      'Within a session each push starts right after the one before it. Entries are sent again only after a refusal ([refusals and resends](#refusals-and-resends)) or after a reconnect (from `accepted_seq` + 1). A `seq_start` beyond `accepted_seq` + 1 (entries the agent evicted unsent) is accepted as a gap when no push of the session was refused before it.',
      'The server drops an entry whose seq is at or below its `accepted_seq` and still acks it: delivery is at least once, a duplicate is harmless.',
    ],
    Acks: [
      `The result of \`logs.push\` is the ack: \`up_to_seq\` is the server's \`accepted_seq\` after committing. The server answers once ${limit('ack_flush_entries')} are pending or ${limit('ack_flush_ms')} after the oldest pending push, whichever comes first; pushes are answered in the order they were sent.`,
      'Count an ack only up to the highest seq the agent has sent: an `up_to_seq` beyond it (a broken or hostile server) must not make the agent delete entries it never delivered, nor give the next entries seqs at or below it.',
      'Delete entries only when acked. An ack below the push\'s last seq (a partial ack) leaves the rest unacked: they are not sent again in that session, but after the next hello (from `accepted_seq` + 1).',
    ],
    'Sending logs': [
      'Several pushes may be in flight at once (a window); the contract sets no size.',
      `A push carries at most min(\`config.max_batch_entries\`, the hello's \`capabilities.max_batch_entries\`, ${limit('logs_push_max_entries')}) entries.`,
      '`flush_interval_ms` bounds how long an entry the agent has read waits before a push carries it; sooner is always allowed.',
      'A `logs.push` left unanswered for the agent\'s own request timeout means the connection is dead: close it, reconnect, and push again from `accepted_seq` + 1.',
      `\`agent.heartbeat\` every \`heartbeat_interval_secs\`, give or take ${limit('heartbeat_jitter_s')}, never less than ${limit('heartbeat_min_interval_s')} apart; \`metrics.push\` every \`metrics_interval_secs\` ([AgentConfig](#agentconfig)).`,
    ],
    'Refusals and resends': [
      'A refused push stored nothing: the agent keeps its entries and sends them again. Once a push of a session is refused (any error), the server refuses every later push of that session that starts beyond the refused `seq_start`, with -32020 and `data.resend_from_seq` = that `seq_start`, until a push starts at or before it; so the resend starts at the refused `seq_start` (a later start is refused again).',
      '-32008 PayloadTooLarge: send the refused entries again from the same `seq_start` in pushes of at most half the batch size (at least 1), and keep the smaller size.',
      `-32020 Backpressure and -32030 QuotaExceeded: push nothing for \`data.retry_after_ms\` (${limit('retry_after_default_ms')} when it is absent; 0 means no pause), then send again from the refused \`seq_start\`; halve the send rate and recover to the full rate over ${limit('backpressure_recovery_ms')} without refusals.`,
      '-32007 BufferOverflow: nothing of the push was stored; push nothing for `data.retry_after_ms` (`retry_after_default_ms` when it is absent), then send the entries again from the same `seq_start`. The session stays open.',
      'A -32020 that carries `resend_from_seq` refuses a push only because an earlier push of the session was refused (the agent sent it before it read that refusal): pause for its `retry_after_ms` and send again from `resend_from_seq` (from the refused push\'s own `seq_start` is refused again until a push has started at or before `resend_from_seq`), but do not halve the send rate again. Each refusal asks for one resend: an agent that has already sent again from there may ignore such a refusal of a push it sent before that resend, or send those entries once more (the server drops the duplicates).',
      '-32004 UnknownHost: close the connection and reconnect; after the accepted hello push again from `accepted_seq` + 1.',
    ],
    'Shutdown and drain': [
      '`agent.shutdown` ServerReload or Decommission: drain: push the entries not yet acked and wait for their acks. Draining ends when everything is acked or when `drain_seconds` have passed, whichever comes first; then close the connection with 1000 Normal closure and the reason `final_seq=<n>`, n the last seq acked ([limits](#limits-and-timings): `final_seq_close_reason`). 1001 is the server\'s code for going away, not the agent\'s. Then reconnect with backoff.',
      '`agent.shutdown` Revoked: delete the stored token, close, and never connect again ([hello refused](#hello-refused)).',
      'The server acks pushes during the drain. After a decommission\'s drain it sends `agent.shutdown` Revoked and closes with 4002; a hello of that host is then answered -32002 (close 4002).',
    ],
    'Configuration updates': [
      '`config.update` is applied while connected, without a reconnect: batch size, flush interval, heartbeat and metrics intervals, log sources, probe concurrency.',
      'With `apply_after` in the future the new configuration is staged and nothing of it is in force before that time (also when that is further ahead than the agent\'s timers hold); a later `config.update` replaces a staged one.',
      'An invalid `config.update` (or `agent.shutdown`) is ignored: no answer, the session stays open. Notifications that arrive while the agent is still handling its HelloResult are handled right after it, in order.',
    ],
    'Probes on the agent': [
      '`probe.request` for a probe the agent does not have: -32010. Invalid args: -32602. A probe that ran and failed: -32011 with `stderr` and `exit_code`. Longer than `timeout_ms`: -32012 (the probe is stopped). A fault of the agent\'s own (a bug in the probe\'s handler): -32603.',
      'At most `probe_concurrency` probes run at once; the others wait. Answers may come in any order: they are matched by id.',
    ],
  };
  const out = ['## Agent behaviour', '', 'What an agent does beyond sending valid messages. The conformance suite of this toolkit judges an agent by these rules and names the section of each it finds broken.', ''];
  for (const title of BEHAVIOUR_SECTIONS) out.push(`### ${title}`, '', ...sections[title].map((rule) => `- ${rule}`), '');
  return out;
}

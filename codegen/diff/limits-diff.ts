// Limits and versioning for the contract diff: each limit judged by who depends on it,
// and protocol_version/subprotocol moving together (seed 9).
import type { Contract, LimitEntry } from '../contract.js';
import { deepEqual, show } from './json-util.js';
import type { Differ } from './schema-differ.js';

// Limits policy. Each limit is judged by who depends on it:
//   ceiling  — the largest/longest thing a receiver accepts or waits for. Lowering it rejects
//              what older peers send (breaking); raising it is additive.
//   promise  — a bound one side promises the other (the server acks within ack_flush_ms, pings
//              every ping_interval_ms, ...). Raising it breaks peers that rely on it; lowering
//              is additive.
//   floor    — a minimum one side promises (heartbeats are never closer than N s). Lowering
//              it is breaking.
//   exact    — a value both sides must agree on (path, first seq, close-reason format): any
//              change is breaking.
//   local    — a tuning value of one implementation that never shows on the wire or in a
//              peer's expectations (agent backoff, buffer caps, default drains that travel
//              explicitly in messages): any change is additive.
// Limits not listed are treated as ceilings (lowered = breaking) and the report says so.
// protocol_version and subprotocol are handled separately (see versioning below).

export type LimitPolicy = 'ceiling' | 'promise' | 'floor' | 'exact' | 'local';
export const LIMIT_POLICY: Record<string, LimitPolicy> = {
  max_frame_bytes: 'ceiling',
  pre_hello_bytes: 'ceiling',
  max_hello_frame_bytes: 'ceiling',
  hello_timeout_ms: 'ceiling', // time the server gives an agent to say hello
  missed_pongs: 'ceiling',
  logs_push_max_entries: 'ceiling',
  metrics_push_max_samples: 'ceiling',
  max_message_chars: 'ceiling',
  server_max_batch_entries: 'ceiling',
  upgrades_per_minute: 'ceiling',
  rotation_grace_secs: 'ceiling', // how long the previous token keeps working
  rotation_close_grace_ms: 'ceiling', // how long an agent has to reconnect before 1012
  max_drain_seconds: 'ceiling',
  ingest_queue_min_batches: 'ceiling',
  agent_rate_entries_per_s: 'ceiling',
  ack_flush_entries: 'promise', // agents keep up to K entries un-acked
  ack_flush_ms: 'promise', // agents wait up to T for an ack
  ping_interval_ms: 'promise', // agents may use ping silence to detect a dead link
  control_propagation_ms: 'promise',
  heartbeat_jitter_s: 'promise', // the server expects a heartbeat within interval + jitter
  heartbeat_min_interval_s: 'floor',
  ws_path: 'exact',
  first_seq: 'exact',
  final_seq_close_reason: 'exact',
  backoff_base_s: 'local',
  backoff_cap_s: 'local',
  backoff_reset_after_active_s: 'local',
  retry_after_default_ms: 'local',
  backpressure_recovery_ms: 'local',
  agent_frame_target_bytes: 'local',
  buffer_soft_cap_bytes: 'local',
  buffer_hard_cap_bytes: 'local',
  shutdown_drain_secs: 'local', // sent explicitly as drain_seconds
  decommission_drain_secs: 'local', // sent explicitly as drain_seconds
};

export function diffLimits(d: Differ) {
  const o = d.oldC.limits;
  const n = d.newC.limits;
  for (const name of Object.keys(o)) {
    if (name === 'subprotocol' || name === 'protocol_version') continue;
    const where = `limits.json:${name}`;
    const a = o[name] as LimitEntry;
    const b = n[name];
    if (b === undefined) {
      d.add('breaking', 'limit-removed', where, `limit ${name} (${show(a.value)}) removed`);
      continue;
    }
    if (a.unit !== b.unit) d.add('breaking', 'limit-unit-changed', where, `unit ${show(a.unit)} → ${show(b.unit)}`);
    if (!deepEqual(a.value, b.value)) {
      const policy = LIMIT_POLICY[name];
      const desc = `${name} ${show(a.value)} → ${show(b.value)}`;
      if (typeof a.value !== 'number' || typeof b.value !== 'number') {
        d.add(policy === 'local' ? 'additive' : 'breaking', 'limit-changed', where, `${desc}${policy === 'local' ? ' (implementation tuning)' : ' (a value both sides must agree on)'}`);
      } else if (policy === 'local') d.add('additive', 'limit-changed', where, `${desc} (implementation tuning; not visible to peers)`);
      else if (policy === 'exact') d.add('breaking', 'limit-changed', where, `${desc} (a value both sides must agree on)`);
      else {
        const raised = b.value > a.value;
        const effective = policy ?? 'ceiling';
        const breaking = effective === 'promise' ? raised : !raised;
        const why =
          effective === 'promise'
            ? raised
              ? 'peers relying on the promised bound wait longer or keep more'
              : 'a tighter promise'
            : raised
              ? 'accepts more than before'
              : 'rejects or cuts off what older peers may send';
        const unlisted = policy === undefined ? '; limit has no policy entry, judged as a ceiling' : '';
        d.add(breaking ? 'breaking' : 'additive', raised ? 'limit-raised' : 'limit-lowered', where, `${desc} (${why}${unlisted})`);
      }
    }
    const docs = (['source', 'description'] as const).filter((k) => a[k] !== b[k]);
    if (docs.length > 0) d.add('additive', 'annotation-changed', where, `${docs.join(', ')} changed; documentation only`);
  }
  for (const name of Object.keys(n)) {
    if (name === 'subprotocol' || name === 'protocol_version' || name in o) continue;
    d.add('additive', 'limit-added', `limits.json:${name}`, `limit ${name} = ${show((n[name] as LimitEntry).value)} added`);
  }
}

// ---------------------------------------------------------------------------------------
// Versioning (seed 9): protocol_version and subprotocol move together, never alone.

export interface VersionInfo {
  oldVersion: unknown;
  newVersion: unknown;
  oldSubprotocol: unknown;
  newSubprotocol: unknown;
  /** Both bumped together, consistently: breaking changes are allowed. */
  bumped: boolean;
}

export function versionInfo(oldC: Contract, newC: Contract): VersionInfo {
  const ov = oldC.limits['protocol_version']?.value;
  const nv = newC.limits['protocol_version']?.value;
  const os = oldC.limits['subprotocol']?.value;
  const ns = newC.limits['subprotocol']?.value;
  const bumped = typeof ov === 'number' && typeof nv === 'number' && nv > ov && os !== ns && ns === `cortex.v${nv}`;
  return { oldVersion: ov, newVersion: nv, oldSubprotocol: os, newSubprotocol: ns, bumped };
}

export function diffVersioning(d: Differ) {
  const v = versionInfo(d.oldC, d.newC);
  const vChanged = !deepEqual(v.oldVersion, v.newVersion);
  const sChanged = !deepEqual(v.oldSubprotocol, v.newSubprotocol);
  if (!vChanged && !sChanged) return;
  if (v.bumped) {
    d.add('breaking', 'protocol-version-bumped', 'limits.json:protocol_version', `protocol_version ${show(v.oldVersion)} → ${show(v.newVersion)} with subprotocol ${show(v.oldSubprotocol)} → ${show(v.newSubprotocol)} (new major version: breaking changes allowed)`);
  } else if (vChanged && !sChanged) {
    d.add('breaking', 'protocol-version-changed-alone', 'limits.json:protocol_version', `protocol_version ${show(v.oldVersion)} → ${show(v.newVersion)} but subprotocol stays ${show(v.oldSubprotocol)} (seed 9: bump both together)`);
  } else if (sChanged && !vChanged) {
    d.add('breaking', 'subprotocol-changed-alone', 'limits.json:subprotocol', `subprotocol ${show(v.oldSubprotocol)} → ${show(v.newSubprotocol)} but protocol_version stays ${show(v.oldVersion)} (seed 9: bump both together)`);
  } else {
    d.add('breaking', 'version-mismatch', 'limits.json:protocol_version', `protocol_version ${show(v.oldVersion)} → ${show(v.newVersion)} with subprotocol ${show(v.oldSubprotocol)} → ${show(v.newSubprotocol)}: a bump must raise protocol_version to N and set the subprotocol to cortex.vN`);
  }
}


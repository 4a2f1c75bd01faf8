/**
 * Breaking-change check for contract/ (seed section 9, issue 7).
 *
 * diffContracts(old, new) compares two loaded contracts and classifies every change as
 * "breaking" or "additive". The model, taken from seed 9:
 *
 *  - Additive: new methods, new optional fields, new probes, new error/close codes, anything
 *    that only WIDENS what a schema accepts (enum value added, bound relaxed, pattern/format
 *    removed, additionalProperties false → true), documentation.
 *  - Breaking: anything REMOVED or RENAMED (methods, fields, codes, probes), anything that
 *    NARROWS what a schema accepts (type, enum, const, range, pattern, format, additional-
 *    Properties tightened), new required fields without a default, changed semantics
 *    (error meaning/name/number, close codes, direction/kind of a method, defaults), and a
 *    change of protocol_version or subprotocol without the other.
 *
 * Direction (schema-differ.ts classify): the fleet upgrades the server first, so breaking
 * means a server of the new release cannot talk with agents of the previous release. What
 * agents RECEIVE (server→agent params, agent→server results, probe args, error data from the
 * server) breaks when it widens — old agents validate it with the old schema; what agents SEND
 * breaks when it narrows. The model above is that of a message the upgraded side receives.
 *
 * A note on new optional fields. Seed 9 calls them additive, and this check follows it. But
 * this contract uses additionalProperties:false almost everywhere, so a receiver that
 * validates with the OLD schema rejects a message that carries the new field. "Additive"
 * therefore means: the change does not need a protocol_version bump, and senders must only
 * send the new field to peers known to accept it (seed 9: "additive evolution requires
 * explicit schema relaxation"). The report says so on each such line.
 *
 * Schema changes are found by walking every schema file (schemas/*.json and the probe
 * args/output schemas) including its $defs, so a change in a shared definition is reported
 * once, at the definition, with the methods that reach it through $ref listed as "used by".
 * Where a $ref itself changes (retargeted, or inlined ↔ referenced) both sides are resolved
 * and compared structurally, so a pure refactoring is not a change.
 *
 * Whatever is not understood is never silently passed: an unknown schema keyword that
 * changed, or a data-file difference no rule accounted for, is reported as breaking
 * ("cannot prove compatible").
 */
//
// The parts: json-util.ts (helpers), schema-index.ts (files, $refs, "used by"),
// schema-differ.ts (schema comparison), limits-diff.ts (limits, versioning),
// catalog-diff.ts (methods, codes, probes, state machine, examples, leftovers).
import type { Contract } from '../contract.js';
import type { Change, DiffResult } from './types.js';
import { diffCloseCodes, diffErrors, diffExamples, diffLeftovers, diffMethods, diffProbes, diffSchemaFiles, diffStateMachine } from './catalog-diff.js';
import { diffLimits, diffVersioning, versionInfo, type VersionInfo } from './limits-diff.js';
import { Differ } from './schema-differ.js';

export { LIMIT_POLICY, versionInfo, type VersionInfo } from './limits-diff.js';

export type { Change, ChangeKind, DiffResult } from './types.js';

// ---------------------------------------------------------------------------------------

/** Every change between two contracts, classified. Order: versioning, methods, errors, close codes, limits, probes, schemas, state machine, examples, leftovers. */
export function diffContracts(oldC: Contract, newC: Contract): Change[] {
  const d = new Differ(oldC, newC);
  diffVersioning(d);
  diffMethods(d);
  diffErrors(d);
  diffCloseCodes(d);
  diffLimits(d);
  diffProbes(d);
  diffSchemaFiles(d);
  diffStateMachine(d);
  diffExamples(d);
  diffLeftovers(d);
  return d.changes;
}

/** Classifies a diff as a whole: exit 1 when there is a breaking change and the version was not bumped. */
export function evaluate(oldC: Contract, newC: Contract, changes = diffContracts(oldC, newC)): DiffResult & { version: VersionInfo } {
  const breaking = changes.filter((c) => c.kind === 'breaking').length;
  const additive = changes.length - breaking;
  const version = versionInfo(oldC, newC);
  const allowed = breaking > 0 && version.bumped;
  const exit_code = breaking > 0 && !allowed ? 1 : 0;
  return { changes, breaking, additive, allowed, exit_code, version };
}

export function formatReport(r: DiffResult & { version: VersionInfo }): string {
  const lines = r.changes.map((c) => `${c.kind === 'breaking' ? 'BREAKING' : 'additive'} ${c.rule} at ${c.where}: ${c.detail}`);
  if (r.changes.length === 0) lines.push('no changes');
  else {
    const counts = `${r.changes.length} change${r.changes.length === 1 ? '' : 's'}: ${r.breaking} breaking, ${r.additive} additive`;
    if (r.breaking === 0) lines.push(`${counts}; no protocol version bump needed (exit 0)`);
    else if (r.allowed) lines.push(`${counts}; breaking changes allowed: protocol version bumped to ${String(r.version.newVersion)} with subprotocol ${String(r.version.newSubprotocol)} (exit 0)`);
    else lines.push(`${counts}; breaking changes need protocol_version and subprotocol bumped together (seed 9) (exit 1)`);
  }
  return lines.join('\n') + '\n';
}


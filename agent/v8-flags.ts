// V8 settings of the cortex-agent process (DECISIONS P13), applied by runCli before anything
// else runs, and by the benches that run the agent's code in their own process.
//
// Allocation-site pretenuring off: a source builds a chunk's entries (up to ~1,700 objects
// from one object literal) and the buffer keeps them until the append commits; V8 sees all
// of them survive a scavenge, decides that literal's objects are long-lived and allocates
// them in the old generation from then on. They die a few milliseconds later, but their
// young strings, referenced from old space, are then promoted by every scavenge until a full
// GC: measured on 300,000 RFC 5424 lines into a fresh buffer, 145 MB promoted instead of 8,
// scavenges of ~10 ms instead of ~3, ~25 % more CPU per line. Nothing the agent keeps for
// long is built in such bursts, so it loses nothing by it.
//
// Fallback to the linear-time regular expression engine (DECISIONS H26): a source's `filter`
// is an operator's regular expression run on every line, and one that backtracks
// catastrophically (`^(a|aa)+$` against 60 `a` and a `b`: 2^60 steps) stopped the agent's only
// thread for good. With this flag V8 runs an expression that has backtracked more than
// --regexp-backtracks-before-fallback times (50,000) again in its linear-time engine, which
// gives the same answer: a match costs what it cost before until it goes wrong.
import { setFlagsFromString } from 'node:v8';

/** The V8 flags the agent process runs with. */
export const AGENT_V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring', '--enable-experimental-regexp-engine-on-excessive-backtracks'];

let applied = false;

/**
 * Applies AGENT_V8_FLAGS to this process (once; later calls do nothing). A Node.js that would
 * refuse flags at run time leaves the agent as it is, only slower on bursts of entries: the
 * settings are a performance matter, never a reason not to start.
 */
export function applyAgentV8Flags(): void {
  if (applied) return;
  applied = true;
  for (const flag of AGENT_V8_FLAGS) {
    try {
      setFlagsFromString(flag);
    } catch {
      // see above
    }
  }
}

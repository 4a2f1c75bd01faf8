#!/usr/bin/env node
// cortex-conformance: runs the protocol conformance suites against any server or agent.
//
//   cortex-conformance server --url ws://HOST:PORT/ws/agent --enroll-token T --host-id ID [...]
//   cortex-conformance agent  --enroll-command "..." --run-command "..." [...]
//
// Output: one line per case (PASS|FAIL|SKIP|XFAIL|XPASS <id> — expected …; seen …), then the
// summary "N passed, M failed, K skipped[, X expected failures][, Y unexpected passes]" as the
// last stdout line; --json prints one JSON value instead (one object per case in "cases"),
// --json-lines one object per case then a summary object; --junit FILE also writes JUnit XML.
// Exit 0 when the run passes (no unexpected failure or pass; with --strict, no skip), 1
// otherwise or when the target cannot be reached at all, 2 on bad usage.
import { readFileSync } from 'node:fs';
import { BailOut, Runner, caseJson, caseLine, parseExpectFail, parseOnly, report, type CaseResult, type ExpectFailList } from './report.js';
import { runServerSuite, TargetUnreachable } from './server-suite.js';
import { runAgentSuite, AGENT_VALUE_OPTIONS, AGENT_FLAGS, agentOptionsFrom } from './agent-suite.js';
import { COMMON_FLAGS, COMMON_VALUES, HELP, SERVER_FLAGS, SERVER_VALUES, serverOptionsFrom } from './options.js';
import { UsageError, killAllSpawned, parseArgs, type ParsedArgs } from './util.js';
import { formatCliError } from '../common/errors.js';

/** --expect-fail FILE, read once before anything runs (a missing file is bad usage). */
function expectFailFrom(p: ParsedArgs): ExpectFailList | undefined {
  const file = p.values.get('expect-fail');
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`--expect-fail ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, { code: 'E_FILE_ACCESS' });
  }
  return parseExpectFail(file, text);
}

/**
 * A runner that prints each case as it finishes: one JSON object per case with --json-lines, its
 * line in the text output (so nothing printed is lost if the run ends early; DECISIONS K14).
 * --json prints one value at the end. `printed` counts the results already written.
 */
function runnerFor(p: ParsedArgs, expectFail: ExpectFailList | undefined): { runner: Runner; printed: () => number } {
  let printed = 0;
  const stream = p.flags.has('json-lines') ? (r: CaseResult) => JSON.stringify(caseJson(r)) : p.flags.has('json') ? undefined : caseLine;
  const runner =
    stream === undefined
      ? new Runner()
      : new Runner((r) => {
          if (expectFail?.ids.has(r.id)) r.expectedFail = true;
          process.stdout.write(`${stream(r)}\n`);
          printed++;
        });
  if (p.flags.has('bail')) runner.bail = { expectFail };
  const only = p.values.get('only');
  if (only !== undefined) {
    const selection = parseOnly(only);
    if (selection.patterns.length === 0) throw new UsageError('--only needs at least one case id');
    runner.only = selection;
  }
  return { runner, printed: () => printed };
}

function common(p: ParsedArgs, expectFail: ExpectFailList | undefined) {
  if (p.flags.has('json') && p.flags.has('json-lines')) throw new UsageError('--json and --json-lines exclude each other');
  return { json: p.flags.has('json'), jsonLines: p.flags.has('json-lines'), junit: p.values.get('junit'), strict: p.flags.has('strict'), expectFail };
}

async function main(argv: string[]): Promise<number> {
  const [suite, ...rest] = argv;
  if (suite === undefined || suite === '--help' || suite === '-h' || suite === 'help') {
    process.stdout.write(HELP);
    return suite === undefined ? 2 : 0;
  }
  if (rest.includes('--help')) {
    process.stdout.write(HELP);
    return 0;
  }
  const results: CaseResult[] = [];
  if (suite === 'server') {
    const p = parseArgs(rest, SERVER_VALUES, SERVER_FLAGS);
    const o = serverOptionsFrom(p);
    const expectFail = expectFailFrom(p);
    const c = common(p, expectFail);
    const { runner, printed } = runnerFor(p, expectFail);
    let fatal: string | undefined;
    try {
      await runServerSuite(o, runner);
    } catch (err) {
      if (err instanceof BailOut) {
        process.stderr.write(`cortex-conformance: ${err.message}\n`);
        return report(runner.results, { suite: 'server', target: o.url, ...c, printed: printed() });
      }
      if (!(err instanceof TargetUnreachable)) throw err;
      fatal = err.message;
      process.stderr.write(`cortex-conformance: ${fatal}\n`);
      runner.results.push({ id: 'server/reachable', status: 'FAIL', expected: `a WebSocket server at ${o.url} accepting subprotocol cortex.v1`, seen: fatal, durationMs: 0 });
    }
    results.push(...runner.results);
    return report(results, { suite: 'server', target: o.url, ...c, fatal, printed: printed() });
  }
  if (suite === 'agent') {
    const p = parseArgs(rest, [...AGENT_VALUE_OPTIONS, ...COMMON_VALUES], [...AGENT_FLAGS, ...COMMON_FLAGS]);
    const o = agentOptionsFrom(p);
    const expectFail = expectFailFrom(p);
    const c = common(p, expectFail);
    const { runner, printed } = runnerFor(p, expectFail);
    let fatal: string | undefined;
    try {
      fatal = await runAgentSuite(o, runner);
    } catch (err) {
      if (!(err instanceof BailOut)) throw err;
      process.stderr.write(`cortex-conformance: ${err.message}\n`);
    }
    if (fatal !== undefined) process.stderr.write(`cortex-conformance: ${fatal}\n`);
    return report(runner.results, { suite: 'agent', target: o.runCommand, ...c, fatal, printed: printed() });
  }
  throw new UsageError(`unknown suite "${suite}" (server or agent)`);
}

main(process.argv.slice(2)).then(
  (code) => {
    // Sockets and timers of the target may still be open; the report is written. Commands
    // the suite started and did not stop (a bailed run) go with it.
    killAllSpawned();
    process.exit(code);
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`cortex-conformance: ${formatCliError(err.code, err.message, err.code === 'E_USAGE' ? 'run "cortex-conformance --help" for the options' : err.hint)}\n`);
      process.exit(2);
    }
    process.stderr.write(`cortex-conformance: ${formatCliError('E_INTERNAL', `internal error: ${(err as Error)?.stack ?? String(err)}`)}\n`);
    killAllSpawned();
    process.exit(1);
  },
);

#!/usr/bin/env node
// npm run conformance:mutants [-- --side server|agent]
// Mutation proof of the conformance runner (issue 15): StrykerJS mutates the functions that
// implement the wire rules (scripts/mutants/ranges.mjs: handshake and ingest on the server,
// the agent's session), and each mutant is tested by the runner's suites against the
// compiled reference server / agent built from the mutated sources (command runner, see
// scripts/mutants/stryker.config.mjs). Prints per module the mutants killed, survived and
// the score, then every surviving mutant; the last line is one JSON object. Exit 0 when the
// score is at least 80 %, 1 below it, 2 on bad usage. Not part of npm test (the two sides run at
// the same time; under 20 minutes on the quiet 2-core machine; DECISIONS K7).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

const args = process.argv.slice(2);
let sides = ['server', 'agent'];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--side' && ['server', 'agent'].includes(args[i + 1])) sides = [args[++i]];
  else if (args[i] === '--help') {
    process.stdout.write('Usage: npm run conformance:mutants [-- --side server|agent]\n');
    process.exit(0);
  } else {
    process.stderr.write(`conformance:mutants: unknown argument ${args[i]} (--side server|agent)\n`);
    process.exit(2);
  }
}

const TARGET = 80;
const started = Date.now();
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

/** Slots per side: the server side is CPU-bound, the agent side mostly waits (see below). */
const CONCURRENCY = { server: 2, agent: 4 };

function runStryker(side) {
  // One line per tested mutant (the case that killed it), see mutant.mjs.
  const log = resolve(`reports/mutation/${side}-cases.jsonl`);
  mkdirSync('reports/mutation', { recursive: true });
  writeFileSync(log, '');
  const t0 = Date.now();
  return new Promise((done) => {
    // nice: the machine is shared (the servers and agents under test inherit it).
    const child = spawn('nice', ['-n', '10', process.execPath, 'node_modules/@stryker-mutator/core/bin/stryker.js', 'run', 'scripts/mutants/stryker.config.mjs'], {
      env: { ...process.env, CORTEX_MUTANTS_SIDE: side, CORTEX_MUTANTS_LOG: log, CORTEX_MUTANTS_CONCURRENCY: process.env.CORTEX_MUTANTS_CONCURRENCY ?? String(CONCURRENCY[side]) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Both sides run at once: every line of their output is prefixed with its side.
    for (const [from, to] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
      let rest = '';
      from.on('data', (d) => {
        const lines = (rest + d).split('\n');
        rest = lines.pop();
        for (const l of lines) to.write(`[${side}] ${l}\n`);
      });
      from.on('end', () => rest && to.write(`[${side}] ${rest}\n`));
    }
    child.on('exit', (code) => {
      process.stderr.write(`conformance:mutants: ${side} side done in ${((Date.now() - t0) / 60000).toFixed(1)} min (stryker exit ${code})\n`);
      done(code ?? 1);
    });
  });
}

// Made in the sandbox (build-mutated.mjs, run-server.mjs); stale copies must not be copied into it.
rmSync('dist/mutants.json', { force: true });
rmSync('dist/mutants-template', { recursive: true, force: true });

const modules = [];
const survivors = [];
// The two sides at once (separate sandboxes and reports, stryker.config.mjs): the agent side's
// mutants mostly wait on the agent's timers, so it overlaps the CPU-bound server side well.
process.stderr.write(`conformance:mutants: ${sides.join(' and ')} side${sides.length > 1 ? 's at once' : ''}…\n`);
const codes = await Promise.all(sides.map((side) => runStryker(side)));
for (const [i, side] of sides.entries()) {
  const code = codes[i];
  if (code !== 0) {
    process.stderr.write(`conformance:mutants: stryker (${side}) exited ${code}\n`);
    process.exit(1);
  }
  const report = JSON.parse(readFileSync(`reports/mutation/${side}.json`, 'utf8'));
  for (const [file, { source, mutants }] of Object.entries(report.files)) {
    const lines = source.split('\n');
    const tested = mutants.filter((m) => DETECTED.has(m.status) || UNDETECTED.has(m.status));
    const killed = tested.filter((m) => DETECTED.has(m.status)).length;
    modules.push({ side, file, killed, survived: tested.length - killed, ignored: mutants.length - tested.length, score: tested.length ? (100 * killed) / tested.length : 100 });
    for (const m of tested.filter((x) => UNDETECTED.has(x.status))) {
      const { start, end } = m.location;
      const original = start.line === end.line ? lines[start.line - 1].slice(start.column - 1, end.column - 1) : `${lines[start.line - 1].slice(start.column - 1)} …`;
      survivors.push({ side, at: `${file}:${start.line}:${start.column}`, mutator: m.mutatorName, original: original.trim().slice(0, 100), replacement: (m.replacement ?? '').replace(/\s+/g, ' ').slice(0, 100), status: m.status });
    }
  }
}

const killed = modules.reduce((n, m) => n + m.killed, 0);
const survived = modules.reduce((n, m) => n + m.survived, 0);
const score = killed + survived === 0 ? 100 : (100 * killed) / (killed + survived);
const out = [];
out.push('module                         killed  survived  score');
for (const m of modules) out.push(`${m.file.padEnd(30)} ${String(m.killed).padStart(6)}  ${String(m.survived).padStart(8)}  ${m.score.toFixed(1)} %`);
out.push(`mutation score: ${score.toFixed(1)} % (${killed} killed of ${killed + survived}; target ${TARGET} %)`);
out.push(`surviving mutants (${survivors.length}):`);
for (const s of survivors) out.push(`  ${s.at} ${s.mutator}: ${JSON.stringify(s.original)} -> ${JSON.stringify(s.replacement)}${s.status === 'NoCoverage' ? ' (no coverage)' : ''}`);
out.push(JSON.stringify({ bench: 'conformance:mutants', score: Number(score.toFixed(1)), killed, survived, target: TARGET, minutes: Number(((Date.now() - started) / 60000).toFixed(1)), modules: modules.map((m) => ({ file: m.file, killed: m.killed, survived: m.survived, score: Number(m.score.toFixed(1)) })) }));
process.stdout.write(`${out.join('\n')}\n`);
process.exit(score >= TARGET ? 0 : 1);

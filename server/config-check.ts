// Checking an AgentConfig given by an operator (`agent config --set`, the admin API):
// every problem at once, each with its JSON Pointer, so a fix takes one try.
//
// 1. The contract's schema (generated/schemas/defs.json#/$defs/AgentConfig) with ajv in
//    allErrors mode — the generated validators stop at the first error, which is right for
//    the wire and wrong for a person.
// 2. Log sources strictly, per kind (the contract keeps LogSourceConfig open for
//    extensions, the reference agent does not): unknown keys (`pathh`), a missing or
//    relative path, a `command` that is not an array of strings, and so on.
// 3. max_batch_entries not above the server's max_batch_entries.
// A static JSON import (not a file read at run time), so a bundle (npm run package) carries it.
import defsJson from '@cortex/agent-protocol/schemas/defs.json' with { type: 'json' };
import { toIssues, type ValidationIssue } from '@cortex/agent-protocol';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export type { ValidationIssue };

let compiled: ValidateFunction | undefined;

function schemaValidator(): ValidateFunction {
  if (compiled !== undefined) return compiled;
  const defs = defsJson as { $id: string };
  const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true });
  addFormats.default(ajv);
  ajv.addSchema(defs);
  compiled = ajv.compile({ $ref: `${defs.$id}#/$defs/AgentConfig` });
  return compiled;
}

/** Keys each source kind of the reference agent reads (DECISIONS D5–D21, I). */
export const SOURCE_KEYS: Readonly<Record<string, readonly string[]>> = {
  file: ['kind', 'path', 'filter', 'labels', 'start_at'],
  journald: ['kind', 'filter', 'labels', 'journalctl'],
  docker: ['kind', 'path', 'socket', 'filter', 'labels'],
  custom: ['kind', 'path', 'command', 'socket', 'socket_mode', 'filter', 'labels'],
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The strict per-kind checks of log_sources (beyond the schema). */
export function logSourceIssues(sources: unknown): ValidationIssue[] {
  if (!Array.isArray(sources)) return [];
  const issues: ValidationIssue[] = [];
  sources.forEach((s, i) => {
    const at = `/log_sources/${i}`;
    if (!isObject(s) || typeof s['kind'] !== 'string') return; // the schema reports it
    const kind = s['kind'];
    const allowed = SOURCE_KEYS[kind];
    if (allowed === undefined) return;
    for (const key of Object.keys(s)) {
      if (!allowed.includes(key)) issues.push({ path: `${at}/${key}`, message: `is not a ${kind} source key (known: ${allowed.join(', ')})` });
    }
    const path = s['path'];
    const str = (key: string): boolean => {
      if (s[key] !== undefined && typeof s[key] !== 'string') {
        issues.push({ path: `${at}/${key}`, message: 'must be a string' });
        return false;
      }
      return s[key] !== undefined;
    };
    const absolute = (key: string, what: string) => {
      if (str(key) && !(s[key] as string).startsWith('/')) issues.push({ path: `${at}/${key}`, message: `must be an absolute path (${what}), got ${JSON.stringify(s[key])}` });
    };
    if (kind === 'file') {
      if (path === undefined) issues.push({ path: `${at}/path`, message: 'is required (the file to tail, an absolute path; * and ? allowed in the last part)' });
      else absolute('path', 'the file to tail');
      if (typeof s['filter'] === 'string') {
        try {
          new RegExp(s['filter']);
        } catch (error) {
          issues.push({ path: `${at}/filter`, message: `is not a valid regular expression: ${(error as Error).message}` });
        }
      }
    }
    if (kind === 'journald') absolute('journalctl', 'the journalctl program');
    if (kind === 'docker') {
      absolute('socket', 'the Docker Engine unix socket');
      if (str('path') && !/^\/?[A-Za-z0-9_.*?-]+$/.test(path as string)) issues.push({ path: `${at}/path`, message: 'must be a container name or a glob of one (letters, digits, _ . - * ?)' });
    }
    if (kind === 'custom') {
      if (path === undefined) issues.push({ path: `${at}/path`, message: 'is required (the name in custom:<name>)' });
      else if (str('path') && !/^[^\s\p{Cc}]{1,200}$/u.test(path as string)) issues.push({ path: `${at}/path`, message: 'must be 1-200 characters without whitespace or control characters' });
      const c = s['command'];
      if (c !== undefined && !(Array.isArray(c) && c.length > 0 && c.every((x) => typeof x === 'string' && x.length > 0))) {
        issues.push({ path: `${at}/command`, message: 'must be a non-empty array of strings: the program, then its arguments (no shell), e.g. ["/usr/bin/tail", "-F", "/var/log/app.log"]' });
      }
      absolute('socket', 'the unix socket to listen on');
      if (c !== undefined && s['socket'] !== undefined) issues.push({ path: `${at}/socket`, message: 'give either command or socket, not both' });
      if (str('socket_mode') && !/^0?[0-7]{3}$/.test(s['socket_mode'] as string)) issues.push({ path: `${at}/socket_mode`, message: 'must be an octal mode such as "0660"' });
    }
  });
  return issues;
}

/**
 * Whether two last path components with `*` and `?` (or none) can match one name: the file
 * sources of one config must not read one file twice (DECISIONS H42). Each pair of positions
 * in the two patterns is looked at once.
 */
export function namePatternsMeet(a: string, b: string): boolean {
  const seen = new Set<number>();
  const meet = (i: number, j: number): boolean => {
    if (i === a.length && j === b.length) return true;
    const k = i * (b.length + 1) + j;
    if (seen.has(k)) return false;
    seen.add(k);
    const x = a[i], y = b[j];
    if (x === '*' && meet(i + 1, j)) return true; // a's star matches nothing more
    if (y === '*' && meet(i, j + 1)) return true;
    if (x === undefined || y === undefined || (x === '*' && y === '*')) return false;
    // one character both can take: a star takes it and stays, `?` any, a letter itself
    if (x !== '*' && x !== '?' && y !== '*' && y !== '?' && x !== y) return false;
    return meet(x === '*' ? i : i + 1, y === '*' ? j : j + 1);
  };
  return meet(0, 0);
}

/**
 * File sources of one config that name a common file (the same path, a file a glob of the same
 * folder matches, two globs of one folder that can match one name): both would read it — every
 * line stored twice — and store their positions under one key, so a restart resumes one at the
 * other's offset. Folders reached by different paths (symlinks) are not seen here.
 */
function overlappingFileSources(sources: readonly unknown[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const files = sources.flatMap((s, i) => (isObject(s) && s['kind'] === 'file' && typeof s['path'] === 'string' && s['path'].startsWith('/') ? [{ i, path: s['path'] }] : []));
  const split = (p: string) => ({ dir: p.slice(0, p.lastIndexOf('/') + 1).replace(/\/+$/, '') || '/', name: p.slice(p.lastIndexOf('/') + 1) });
  for (let b = 1; b < files.length; b++) {
    const later = files[b]!;
    const l = split(later.path);
    const earlier = files.slice(0, b).find((f) => {
      const e = split(f.path);
      return e.dir === l.dir && namePatternsMeet(e.name, l.name);
    });
    if (earlier !== undefined) {
      issues.push({
        path: `/log_sources/${later.i}/path`,
        message:
          `${JSON.stringify(later.path)} and /log_sources/${earlier.i} (${JSON.stringify(earlier.path)}) can name the same file: each file is read by one source only ` +
          '(both would store every line, and share one stored position); merge them, or narrow the glob',
      });
    }
  }
  return issues;
}

/** Every problem of `value` as an AgentConfig for a server whose cap is `maxBatchEntries`. */
export function agentConfigIssues(value: unknown, maxBatchEntries: number): ValidationIssue[] {
  const validate = schemaValidator();
  const issues: ValidationIssue[] = validate(value) ? [] : toIssues(validate.errors);
  issues.push(...logSourceIssues(isObject(value) ? value['log_sources'] : undefined));
  if (isObject(value) && Array.isArray(value['log_sources'])) issues.push(...overlappingFileSources(value['log_sources']));
  if (isObject(value) && typeof value['max_batch_entries'] === 'number' && value['max_batch_entries'] > maxBatchEntries) {
    issues.push({ path: '/max_batch_entries', message: `${value['max_batch_entries']} exceeds the server's max_batch_entries (${maxBatchEntries}); lower it` });
  }
  // ajv may report one problem under several keywords (e.g. anyOf branches): once each
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = `${i.path} ${i.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** One line per issue, for a CLI message. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  return issues.map((i) => `  ${i.path === '' ? '(root)' : i.path}: ${i.message}`).join('\n');
}

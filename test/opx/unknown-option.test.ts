// An option a command does not know is named as typed, with the command's own option it was
// most likely meant to be (a typo, a prefix), in every program; Node's parseArgs said
// `Unknown option '--folow'. To specify a positional argument starting with a '-', place it at
// the end of the command after '--', as in '-- "--folow"` for commands with positionals.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { closestOption, parseArgsErrorText, unknownOptionText } from '../../common/cli-args.js';
import { requireServerCli } from '../server/spawn.js';
import { AGENT_CLI, CLI, ROOT } from './helpers.js';

describe('closestOption', () => {
  const tail = ['follow', 'json', 'db', 'server', 'admin-token-file', 'ca'];
  it('a typo within two edits (one for short names), a swap, a unique prefix; nothing when nothing is near or two are', () => {
    expect(closestOption('folow', tail)).toBe('follow');
    expect(closestOption('jsno', tail)).toBe('json'); // adjacent swap: one edit
    expect(closestOption('sever', tail)).toBe('server');
    expect(closestOption('admin-token', tail)).toBe('admin-token-file'); // the only option it starts
    expect(closestOption('limit', tail)).toBeUndefined();
    expect(closestOption('dbb', tail)).toBe('db');
    expect(closestOption('x', tail)).toBeUndefined();
    expect(closestOption('cx', ['ca', 'cb'])).toBeUndefined(); // two equally near
    expect(closestOption('s', ['server', 'state-dir'])).toBeUndefined(); // a one-letter prefix proves nothing
  });

  it('the text: as typed, without a value given with =', () => {
    expect(unknownOptionText('--folow=1', ['follow'])).toBe('unknown option --folow (did you mean --follow?)');
    expect(unknownOptionText('-q', ['json'])).toBe('unknown option -q');
    const e = Object.assign(new Error(`Unknown option '--folow'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- "--folow"`), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' });
    expect(parseArgsErrorText(e, ['follow'])).toBe('unknown option --folow (did you mean --follow?)');
    expect(parseArgsErrorText(Object.assign(new Error("Option '--db <value>' argument missing"), { code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE' }), ['db'])).toBe('--db needs a value');
    // Node's text for a value that starts with "-" named a --n that does not exist
    const ambiguous = Object.assign(new Error("Option '-n' argument is ambiguous.\nDid you forget to specify the option argument for '-n'?\nTo specify an option argument starting with a dash use '--n=-XYZ' or '-n-XYZ'."), {
      code: 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE',
    });
    expect(parseArgsErrorText(ambiguous, ['n'])).toBe('-n needs a value, and the argument after it starts with "-": if that is the value, write -nVALUE (e.g. -n-x)');
  });
});

describe('every program says it the same way', () => {
  beforeAll(() => requireServerCli(), 120_000);
  const run = (file: string, args: string[]) => spawnSync(process.execPath, [file, ...args], { encoding: 'utf8', timeout: 30_000 });

  it.each([
    [CLI, ['agent', 'tail', '5f0c0000-0000-4000-8000-000000000000', '--folow'], 'cortex-server: error[E_USAGE]: unknown option --folow (did you mean --follow?)'],
    [CLI, ['audit', '--jsn'], 'cortex-server: error[E_USAGE]: unknown option --jsn (did you mean --json?)'],
    [CLI, ['serve', '--listn', '127.0.0.1:0'], 'cortex-server: error[E_USAGE]: unknown option --listn (did you mean --listen?)'],
    [CLI, ['agent', 'tail', '5f0c0000-0000-4000-8000-000000000000', '--limit', '3'], 'cortex-server: error[E_USAGE]: unknown option --limit — run the command with --help for its usage'],
    [AGENT_CLI, ['status', '--state-dr', '/tmp'], 'cortex-agent: error[E_USAGE]: unknown option --state-dr (did you mean --state-dir?)'],
    [CLI, ['agent', 'tail', '5f0c0000-0000-4000-8000-000000000000', '-n', '-5'], 'cortex-server: error[E_USAGE]: -n needs a value, and the argument after it starts with "-": if that is the value, write -nVALUE (e.g. -n-x)'],
    [CLI, ['agent', 'list', '--db'], 'cortex-server: error[E_USAGE]: --db needs a value'],
    [join(ROOT, 'dist/fleet/cli.js'), ['--url', 'ws://127.0.0.1:1/ws/agent', '--agnets', '3'], 'cortex-fleet: error[E_USAGE]: unknown option --agnets (did you mean --agents?)'],
  ])('%s %j', (file, args, said) => {
    const r = run(file, args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(said);
    expect(r.stderr).not.toContain('To specify a positional argument');
  });
});

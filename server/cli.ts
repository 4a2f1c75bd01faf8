#!/usr/bin/env node
// cortex-server: `serve` and the agent admin commands (docs/cli.md).
// Results go to stdout, logs and diagnostics to stderr; exit 0 ok, 2 bad usage or
// invalid input (nothing changed), 1 any other failure.
//
// This file only dispatches: each command lives in a module under ./cli/. To add a
// command, write its module and add one line to COMMANDS or AGENT_COMMANDS.
import { UsageError, cliErrorJson, describeCliError, formatCliError, isDiskFullCode, isErrorCode, isUnreachableCode, wantsJson, type ErrorCodeName } from '../common/errors.js';
import { err, out } from './cli/common.js';
import { watchStdout } from '../common/stdout.js';
import { READ_ONLY_DB_HINT } from './db/outage.js';
import { HELP, PROG } from './cli/help.js';

type Command = (args: string[]) => Promise<void>;

/** Top-level commands: `cortex-server NAME …`. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./cli/serve.js')).serve,
  probe: async () => (await import('./cli/probe.js')).probeCmd,
  backup: async () => (await import('./backup.js')).backupCommand,
  audit: async () => (await import('./security/commands.js')).auditCmd,
  version: async () => (await import('./cli/version.js')).versionCmd,
  migrate: async () => async (args: string[]) => {
    const [{ MIGRATE_HELP, migrateCommand }, { parse, out: print }] = await Promise.all([import('./cli-db.js'), import('./cli/common.js')]);
    const { values } = parse(args, { db: { type: 'string' }, json: { type: 'boolean' } }, MIGRATE_HELP);
    print(await migrateCommand(values));
  },
};

/** `cortex-server agent NAME …`. */
const AGENT_COMMANDS: Record<string, () => Promise<Command>> = {
  issue: async () => (await import('./cli/agent.js')).agentIssue,
  list: async () => (await import('./cli/agent.js')).agentList,
  tail: async () => (await import('./cli/agent.js')).agentTail,
  revoke: async () => (await import('./cli/agent.js')).agentRevoke,
  rotate: async () => (await import('./cli/agent.js')).agentRotate,
  decommission: async () => (await import('./cli/agent.js')).agentDecommission,
  config: async () => (await import('./cli/config.js')).agentConfig,
  delete: async () => (await import('./cli/agent.js')).agentDelete,
  group: async () => (await import('./cli/agent.js')).agentGroup,
  'reset-seq': async () => (await import('./security/commands.js')).agentResetSeq,
  tokens: async () => (await import('./security/commands.js')).agentTokens,
  withdraw: async () => (await import('./security/commands.js')).agentWithdraw,
};

async function main(argv: string[]): Promise<void> {
  const [given, ...rest] = argv;
  const cmd = given === '--version' ? 'version' : given;
  if (cmd === undefined || cmd === '--help' || cmd === '-h' || cmd === 'help') {
    out(HELP.main);
    if (cmd === undefined) process.exitCode = 2;
    return;
  }
  if (cmd === 'agent') {
    const [sub, ...args] = rest;
    if (sub === undefined || sub === '--help' || sub === '-h') {
      out(HELP.agent);
      if (sub === undefined) process.exitCode = 2;
      return;
    }
    const load = Object.hasOwn(AGENT_COMMANDS, sub) ? AGENT_COMMANDS[sub] : undefined;
    if (load === undefined) throw new UsageError(`unknown agent command ${JSON.stringify(sub)}\n\n${HELP.agent}`);
    return (await load())(args);
  }
  const load = Object.hasOwn(COMMANDS, cmd) ? COMMANDS[cmd] : undefined;
  if (load === undefined) throw new UsageError(`unknown command ${JSON.stringify(cmd)}\n\n${HELP.main}`);
  return (await load())(rest);
}

watchStdout('cortex-server');
const argv = process.argv.slice(2);

/**
 * Says an error and exits: one line on stderr, and with `--json` also `{"error": {"code",
 * "message", "hint"}}` on stdout, so that a script reading the JSON gets the code and what to do
 * (it had an empty stdout). The exit status is the same either way.
 */
function fail(code: ErrorCodeName, message: string, hint: string | undefined, exit: number): never {
  err(`${PROG}: ${formatCliError(code, message, hint)}`);
  if (wantsJson(argv)) out(cliErrorJson(code, message, hint));
  process.exit(exit);
}

main(argv).catch((error: unknown) => {
  if (error instanceof UsageError) fail(error.code, error.message, error.hint, 2);
  const e = error as NodeJS.ErrnoException & { exitCode?: unknown };
  // an admin API answer other than 2xx (server/cli/remote.ts)
  if (e?.name === 'ApiCallError' && typeof e.exitCode === 'number') fail('E_ADMIN_API', e.message, undefined, e.exitCode);
  // an admin command's write on a read-only PostgreSQL (a standby)
  if (e?.code === '25006') fail('E_DB_OPEN', `the database takes no writes (25006: ${e.message})`, READ_ONLY_DB_HINT, 1);
  if (e?.code === '42501') {
    // a database user with GRANTs that do not cover what this command does (H44; was E_INTERNAL "this is a bug")
    fail(
      'E_DB_OPEN',
      `the database user may not do this: 42501 ${e.message}`,
      'GRANT that user what the command needs on the table named (admin commands read and write agents, enrollment_tokens, agent_groups, audit and probe_requests: e.g. GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO USER), or give --db the user serve runs as',
      1,
    );
  }
  // an error that carries one of the catalogue's codes (the admin API out of reach: E_CONNECT)
  if (isErrorCode(e?.code)) {
    const d = describeCliError(error);
    fail(d.code, d.message, d.hint, 1);
  }
  // errno codes of the file system and the network name what to check
  const code = isDiskFullCode(e?.code)
    ? 'E_DISK_FULL'
    : ['ENOENT', 'EACCES', 'EPERM', 'EISDIR', 'ENOTDIR', 'EROFS'].includes(e?.code ?? '')
      ? 'E_FILE_ACCESS'
      : isUnreachableCode(e?.code)
        ? 'E_CONNECT'
        : 'E_INTERNAL';
  fail(code, `${e?.code ? `${e.code}: ` : ''}${e?.message ?? String(error)}`, undefined, 1);
});

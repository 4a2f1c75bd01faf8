// common/: the few things every program of the toolkit shares that are not protocol (the
// protocol is generated/, from the contract). It imports nothing of ours — only Node
// built-ins — so server, agent, codegen, conformance and fleet may all import it without
// one of them depending on another (.dependency-cruiser.cjs: common-imports-nothing-of-ours).
//
// Errors a user sees from a command line: each has a stable code (docs/error-codes.md, the
// catalogue; test/architecture/error-codes.test.ts keeps it unique and documented), says
// what went wrong and what to do, and is printed as
//
//   error[E_USAGE]: unknown option --frobnicate — see cortex-server serve --help

/** Stable codes of the errors the command lines print. Never reuse or renumber one. */
export const ERROR_CODES = {
  /** Bad usage: an unknown command or option, a missing or malformed argument. Exit 2. */
  E_USAGE: 'run the command with --help for its usage',
  /** A configuration (file, flag or environment value) is invalid. Exit 2. */
  E_CONFIG: 'fix the named setting (docs/configuration.md)',
  /** A database could not be opened, or is missing where it must exist. Exit 2. */
  E_DB_OPEN: 'check the --db path or URL (or CORTEX_DB) and its permissions',
  /** A file that must not exist does (a backup target, ...). Exit 2. */
  E_FILE_EXISTS: 'choose another path or remove the file first',
  /** A file or directory could not be read or written. Exit 2. */
  E_FILE_ACCESS: 'check that the path exists and that this user may read and write it',
  /** The named host is not known. Exit 2. */
  E_UNKNOWN_HOST: 'list the hosts with cortex-server agent list',
  /** The host's state does not allow the command (revoked, connected, ...). Exit 2. */
  E_HOST_STATE: 'see the host with cortex-server agent list; the message says which state is needed',
  /** A token given on the command line or in a file is missing or not usable. Exit 2. */
  E_TOKEN: 'give the token with --token-file (from cortex-server agent issue)',
  /** The contract in contract/ is inconsistent or cannot be read. Exit 2. */
  E_CONTRACT: 'fix contract/ as the message says, then run the command again',
  /** A git ref given to a contract command cannot be read. Exit 2. */
  E_GIT_REF: 'give a ref that exists in this repository (git log --oneline)',
  /** contract:release found a breaking change without the protocol bump: nothing recorded. Exit 1. */
  E_BREAKING_CHANGE: 'see npm run contract:diff; bump protocol_version and subprotocol together, or make the change additive',
  /** The admin API answered with an error. Exit 1 or 2 as the answer says. */
  E_ADMIN_API: 'see the message; check --server and the admin token',
  /** A server or agent could not be reached (enroll: no server took the upgrade; the token was not sent). Exit 1. */
  E_CONNECT: 'check that the server runs and that the URL is right',
  /** The database answered, then stopped answering or lost the connection in the middle of the command. Exit 1. */
  E_DB_LOST: 'check that the database runs and the network path to it (a firewall, a proxy), then run the command again; one that changes something may have done so: check first (cortex-server agent list)',
  /** Enrollment failed after the connection (refused or expired token, unknown host, ...). Exit 1. */
  E_ENROLL: 'see the message; get a new token with cortex-server agent issue if the server refused it',
  /** The state directory holds no enrolled agent. Exit 1. */
  E_NOT_ENROLLED: 'run cortex-agent enroll first',
  /** enroll: the state directory is enrolled as another host. Exit 2. */
  E_STATE_DIR_ENROLLED: "give this enrollment its own --state-dir, or add --replace to start the folder afresh (the other host's buffer, token and positions are moved to DIR/replaced-<host_id>-<time>/, not sent)",
  /** Another agent process runs on this state directory. Exit 1. */
  E_RUN_LOCK: 'stop the other agent first (its pid is in the message)',
  /** The agent could not start (its buffer, sources or settings). Exit 1. */
  E_AGENT_START: 'see the message; cortex-agent status shows the state directory',
  /** The agent stopped in a state it cannot leave by itself (FatalAuth, Revoked). Exit 1. */
  E_AGENT_STOPPED: 'see the message: re-enroll with a new token from cortex-server agent issue --host-id',
  /** The agent's buffer cannot be read. Exit 1. */
  E_BUFFER: 'check it with cortex-agent buffer check',
  /** A disk the command writes to is full (SQLITE_FULL, ENOSPC, the WAL index that could not grow, PostgreSQL 53100). Exit 1. */
  E_DISK_FULL: 'free space on the disk of the database or file the command writes (df shows it), then run the command again; nothing already stored is lost',
  /** A packaged install lacks a file it needs (its native addon missing or unloadable). Exit 1. */
  E_INSTALL_INCOMPLETE: 'unpack the tarball again (packaging/README.md)',
  /** Anything else: a failure the program did not expect. Exit 1. */
  E_INTERNAL: 'this is a bug or an environment problem: please report the line above',
} as const satisfies Record<string, string>;

export type ErrorCodeName = keyof typeof ERROR_CODES;

export interface CliErrorOptions {
  /** The stable code (default E_USAGE). */
  code?: ErrorCodeName;
  /** What to do, when it is more specific than the code's default. */
  hint?: string;
}

/**
 * Bad usage or invalid input: the command line exits 2 with this message and nothing has
 * changed. The one definition for every program of the toolkit.
 */
export class UsageError extends Error {
  readonly code: ErrorCodeName;
  readonly hint: string;
  constructor(message: string, options: CliErrorOptions = {}) {
    super(message);
    this.name = 'UsageError';
    this.code = options.code ?? 'E_USAGE';
    this.hint = options.hint ?? ERROR_CODES[this.code];
  }
}

/**
 * Error codes that mean "no space left": errno's, SQLite's (SHMSIZE: the -shm index of a WAL
 * database could not grow, which on Linux fails only for space) and PostgreSQL's disk_full.
 */
export function isDiskFullCode(code: unknown): boolean {
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL' || code === 'SQLITE_IOERR_SHMSIZE' || code === '53100';
}

/** Errno codes that mean "nothing answered at that address": a peer not running, a wrong host or port. */
export function isUnreachableCode(code: unknown): boolean {
  return code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH';
}

/** Whether `value` is a code of the catalogue. */
export function isErrorCode(value: unknown): value is ErrorCodeName {
  return typeof value === 'string' && Object.hasOwn(ERROR_CODES, value);
}

/**
 * The printed form: `error[CODE]: message — what to do`. A message of several lines (one
 * that ends with a usage text) keeps them: the hint goes after its first line.
 */
export function formatCliError(code: ErrorCodeName, message: string, hint: string = ERROR_CODES[code]): string {
  const [first, ...more] = message.split('\n');
  return [`error[${code}]: ${first}${hint ? ` — ${hint}` : ''}`, ...more].join('\n');
}

/**
 * Whether a command line asks for JSON: `--json` among its arguments (those before a `--`).
 * Such a command prints its error as one JSON value on stdout too (cliErrorJson).
 */
export function wantsJson(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

/**
 * An error as a `--json` command prints it on stdout, one line: `{"error": {"code", "message",
 * "hint"}}` — the code of the catalogue, the message without a usage text after it, and what to
 * do (null when the message says it itself). The human line still goes to stderr; the exit
 * status is the same. `cortex-agent buffer check --json` has the same `error` object.
 */
export function cliErrorJson(code: ErrorCodeName, message: string, hint: string = ERROR_CODES[code]): string {
  const text = message.split('\n\n', 1)[0]!.trimEnd();
  return JSON.stringify({ error: { code, message: text, hint: hint === '' ? null : hint } });
}

/**
 * The message of an incomplete install (the packaged bindings shim's CortexInstallError, code
 * E_INSTALL_INCOMPLETE) in `error` or its chain of causes, whatever wrapped it on the way (a
 * buffer or database open error): that, not the wrapper's hint, is what the user must hear.
 */
export function installProblem(error: unknown): string | undefined {
  for (let e = error as { code?: unknown; message?: unknown; cause?: unknown } | null | undefined, depth = 0; e != null && depth < 8; e = e.cause as typeof e, depth++) {
    if (typeof e === 'object' && e.code === 'E_INSTALL_INCOMPLETE' && typeof e.message === 'string') return e.message;
  }
  return undefined;
}

/** The printed form of any thrown value: its code when it has a catalogued one, E_INTERNAL otherwise. */
export function describeCliError(error: unknown): { code: ErrorCodeName; text: string; message: string; hint: string } {
  const described = (code: ErrorCodeName, message: string, hint: string = ERROR_CODES[code]) => ({ code, text: formatCliError(code, message, hint), message, hint });
  const install = installProblem(error);
  if (install !== undefined) return described('E_INSTALL_INCOMPLETE', install);
  if (error instanceof UsageError) return described(error.code, error.message, error.hint);
  const e = error as { code?: unknown; message?: unknown; hint?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const code = isErrorCode(e?.code) ? e.code : isDiskFullCode(e?.code) ? 'E_DISK_FULL' : 'E_INTERNAL';
  return described(code, message, typeof e?.hint === 'string' ? e.hint : ERROR_CODES[code]);
}

/**
 * OpenSSL's error text (`write EPROTO 80FC…:error:0A00010B:SSL routines:ssl3_get_record:wrong
 * version number:../deps/…:350:` and a line break) as its reason alone, on one line: what
 * `cortex-agent enroll` prints and a running agent's status shows (DECISIONS I17).
 */
export function tidyTlsText(message: string): string {
  return message.replace(/(\w+ )?(EPROTO) [0-9A-F]+:error:[0-9A-F]+:SSL routines:[^:]*:([^:]+):\S*/g, '$2 (TLS: $3)').replace(/\s*\n\s*/g, ' ').trim();
}

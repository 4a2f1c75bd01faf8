// The help texts of every cortex-server command (DESIGN: docs/cli.md).
import { DEFAULT_DB, DEFAULT_LISTEN } from '../settings.js';
import { PACKAGED_HOME } from '../packaged.js';
import { REMOTE_HELP } from './remote.js';

export const PROG = 'cortex-server';

// No npm script in the packaged tarball.
const OR_NPM = PACKAGED_HOME === undefined ? '   (or: npm run server -- <command>)' : '';

export const HELP = {
  main: `Usage: ${PROG} <command> [options]${OR_NPM}

Commands:
  serve                          run the server (WebSocket endpoint /ws/agent, GET /healthz)
  agent issue --host HOSTNAME    register a host and print its one-time enrollment token
  agent issue --host-id HOST_ID  issue a fresh one-time token for an existing host
  agent list                     list the agents
  agent tail HOST_ID             show recent log rows of a host
  agent revoke HOST_ID           revoke a host (its live session is closed 4002)
  agent rotate HOST_ID           rotate a host's token at its next hello (grace window for the old one)
  agent decommission HOST_ID     drain, then revoke a host (rows kept)
  agent config HOST_ID           show (--get), set (--set JSON) or clear (--clear) a host's AgentConfig
  agent config --group NAME      the same for a config group (members without their own config)
  agent group HOST_ID            move a host into a config group (--set NAME) or out of it (--clear)
  agent delete HOST_ID           remove a revoked or never-connected host (rows kept unless --purge)
  agent reset-seq HOST_ID        repair a host whose accepted_seq is beyond max_seq (2^53 - 1)
  agent tokens                   list unused one-time enrollment tokens
  agent withdraw HOST_ID         withdraw a host's unused one-time enrollment token
  audit                          the audit trail of admin actions
  probe HOST_ID PROBE --server URL   run a probe on a connected host through the admin API
  backup --to FILE               consistent copy of the SQLite database, safe while serving
  migrate                        bring the database to this version's schema and exit
  version, --version             print the versions of this server, the protocol and Node

Every agent command and probe works on a database (--db PATH|URL: a SQLite file, or
postgres://USER@HOST:PORT/DATABASE; default $CORTEX_DB, then ${DEFAULT_DB}; a SQLite file is
never created, except by agent issue --host with an explicit --db) or on a running server
through its admin API:
${REMOTE_HELP}With neither --server nor --db, $CORTEX_SERVER is used when set, else the local default.
agent reset-seq, agent tokens, agent withdraw and audit work on the database only (the admin
API has no route for them): they refuse --server and $CORTEX_SERVER; give --db.
Every command takes --help. Documentation: docs/cli.md.
`,
  serve: `Usage: ${PROG} serve [options]

Options:
  --db PATH|URL              SQLite file (created with its folder) or postgres://USER@HOST:PORT/DATABASE
                             (also postgresql://; default $CORTEX_DB, then ${DEFAULT_DB})
  --db-pool N                PostgreSQL connections of this process (default 10; at most half of them
                             commit logs, each commit taking every batch waiting for it)
  --server-id ID             this server's name among several on one database (default hostname:port)
  --lease-secs N             a server not renewing its lease this long counts as dead (default 15)
  --db-wait-secs N           a database out of reach at start (PostgreSQL starting, restarting), or
                             lost during the start-up, is tried again every 2 s for this long before
                             serve gives up (default 90; 0: at once)
  --listen HOST:PORT         address to listen on (default ${DEFAULT_LISTEN}; port 0 picks one)
  --config FILE              JSON server config (docs/configuration.md); flags override it
  --admin-token-file FILE    bearer token for the admin HTTP API, read from FILE (or $CORTEX_ADMIN_TOKEN)
  --admin-token T            the same on the command line (visible to local processes; prefer the file)
  --metrics-public           serve GET /metrics to every client (default: local requests and admin-token holders)
  --allow-origin ORIGIN      accept WebSocket upgrades carrying this Origin (repeatable; default: none)
  --failed-hellos-before-throttle N   failed hellos per address before its upgrades get 429 (default 5; 0 off)
  --tls-cert FILE --tls-key FILE   serve wss:// natively
  --allow-insecure           allow a non-loopback --listen without TLS
  --min-agent-version V      oldest agent_version accepted (semver)
  --max-batch-entries N      server cap on logs.push entries (<= 1000; more is -32008)
  --ingest-queue-batches N   ingest queue capacity in batches of 1000 (>= 16)
  --agent-rate N             per-agent leaky bucket, entries/s (burst: one second of it)
  --upgrades-per-minute N    upgrade attempts per client address per minute (0 disables)
  --trusted-proxy CIDR       trusted reverse proxy (repeatable; default 127.0.0.0/8 and ::1)
  --hello-timeout-ms N       hello timer (default 5000)
  --ping-interval-ms N       WebSocket ping interval (default 20000)
  --missed-pongs N           missed pongs before close 1011 (default 3)
  --rotation-grace-secs N    grace window of the previous token after a rotation (default 300)
  --shutdown-drain-secs N    drain_seconds on server stop (default 10)
  --silent-after-secs N      an agent not seen for N s counts as silent in /metrics (default 300)
  --retention-days N         delete logs/metrics older than N days (default 30; 0 keeps everything)
  --max-db-bytes N           also delete the oldest rows while the database holds more than N bytes
  --help                     show this help

SIGHUP (systemctl reload) reads the TLS certificate and key, --admin-token-file and --config
again: a new admin token takes effect at once; other settings wait for a restart (the log names them).
The terminal of a foreground serve closing stops it as SIGTERM does.
`,
  version: `Usage: ${PROG} --version [--json]   (or: ${PROG} version [--json])

  One line: ${PROG} VERSION (protocol VERSION, node VERSION, PLATFORM-ARCH); exit 0.
  --json   print {"name", "version", "protocol", "node", "platform"} as one JSON object
`,
  agent: `Usage: ${PROG} agent <issue|list|tail|revoke|rotate|decommission|config|group|delete|reset-seq|tokens|withdraw> [options]   (--help on each)
`,
  revoke: `Usage: ${PROG} agent revoke HOST_ID [--db PATH|URL]

  Both token hashes NULL, state Revoked. A running server holding the host's session sends
  agent.shutdown {Revoked, 0} and closes it with 4002 within 2 s. Undo: agent issue --host-id.
${REMOTE_HELP}`,
  rotate: `Usage: ${PROG} agent rotate HOST_ID [--grace-secs N] [--db PATH|URL]

  The host's next hello gets a new token (a connected agent is asked to reconnect within 2 s).
  --grace-secs N   how long the previous token still works after that hello (default: the
                   server's rotation_grace_secs, 300)
${REMOTE_HELP}`,
  decommission: `Usage: ${PROG} agent decommission HOST_ID [--drain-secs N] [--db PATH|URL]

  The server holding the session sends agent.shutdown {Decommission, N}, keeps acking for N
  seconds (default 30), then revokes; at once when the host is not connected. Rows are kept.
${REMOTE_HELP}`,
  config: `Usage: ${PROG} agent config (HOST_ID | --group NAME) (--get | --set JSON | --set-file FILE | --clear) [--apply-after RFC3339] [--db PATH|URL]
       ${PROG} agent config --default [--db PATH|URL]

  --get                    print the config the host runs (its own, else its group's, else the
                           server default) as one JSON object (stderr says which); with --group,
                           the group's; --get --default (or --default alone): the server default
  --set JSON               a complete AgentConfig, checked strictly (every problem listed at once,
                           with its JSON Pointer; unknown source keys are refused); a connected
                           agent gets it as config.update within 2 s; max_batch_entries may not
                           exceed the server's max_batch_entries
  --set-file FILE          the same, read from FILE
  --group NAME             the config of group NAME (created if new): every member without a
                           config of its own runs it; connected members get config.update
  --apply-after RFC3339    staged rollout: the agent applies it from that time on
  --clear                  drop the host's (group's) own config: the group's (server default) applies
${REMOTE_HELP}`,
  group: `Usage: ${PROG} agent group HOST_ID (--set NAME | --clear) [--db PATH|URL]

  Moves a host into config group NAME (created if new) with --set, or out of its group with
  --clear. Its token and session are kept (agent issue --host-id --group reissues the token);
  unless it has a config of its own it runs the group's config (the server default after
  --clear), sent to a connected agent as config.update within 2 s.
  --set NAME   the group to move the host into
  --clear      take the host out of its group
${REMOTE_HELP}`,
  delete: `Usage: ${PROG} agent delete HOST_ID [--purge] [--db PATH|URL]

  Removes a Revoked or NeverConnected host (revoke or decommission a connected one first).
  Its log and metric rows are kept unless --purge.
${REMOTE_HELP}`,
  probe: `Usage: ${PROG} probe HOST_ID PROBE [--args JSON] [--timeout-ms N] --server http://HOST:PORT [--admin-token-file FILE] [--ca FILE]

  Runs PROBE on the connected host through the server's admin API and prints the ProbeOutput
  JSON. On a JSON-RPC error prints {"error": {...}} and exits 1.
  --args JSON        probe arguments (default {})
  --timeout-ms N     probe budget (default 10000)
  --db PATH          optional: first check that HOST_ID is registered in this database (unknown:
                     exit 2, nothing sent); the probe itself always goes through the server
  --url URL          the same as --server (kept for scripts)
  --admin-token T    the admin token on the command line (visible in ps: prefer the file or
                     $CORTEX_ADMIN_TOKEN)
${REMOTE_HELP}`,
  issue: `Usage: ${PROG} agent issue (--host LABEL | --host-id HOST_ID) [--group NAME] [--expires-in DURATION] [--json] [--db PATH|URL]

  --host LABEL       create a NeverConnected host with a new host_id and a one-time token;
                     LABEL is your name for it (the agent's own hostname is shown beside it)
  --host-id HOST_ID  new one-time token for an existing host (re-enrollment); its rows are kept
  --expires-in D     the token stops working after D (90s, 30m, 24h, 7d; default 7d)
  --group NAME       the host joins config group NAME (created if new; a host is in one
                     group; its own config overrides the group's); --group '' leaves it
  --json             print {"host_id", "hostname", "token"} (and "group") as one JSON object
  Creates the database only when --db is given (DECISIONS I1).
${REMOTE_HELP}`,
  list: `Usage: ${PROG} agent list [--group NAME | --groups] [--state STATE[,STATE]] [--json] [--db PATH|URL]

  LABEL is the name given at agent issue, AGENT_HOSTNAME what the agent reports; STATE tells
  Decommissioned from Revoked; LAST_DISCONNECT has its time ("earlier:" for an Active host).
  --group NAME   only the members of group NAME
  --state S      only agents in state S (NeverConnected, Active, Draining, Disconnected, Revoked,
                 Decommissioned; several comma-separated), e.g. --state Disconnected
  --groups       the config groups with their member counts
  --json         print one JSON array (agent rows without token hashes, plus "state")
${REMOTE_HELP}`,
  tail: `Usage: ${PROG} agent tail HOST_ID [-n N] [--follow] [--json] [filters] [--db PATH|URL]

  -n N              how many recent rows (default 20), oldest first
  --follow          keep printing new rows until interrupted
  --json            one JSON array (with --follow: one JSON object per line)
Filters (the last N rows that match; with --follow, the new ones that match):
  --severity LEVEL  that level and the more severe (emerg alert crit err warning notice info debug)
  --source SOURCE   one source, as printed (file:/var/log/syslog, journald, …)
  --grep TEXT       the message contains TEXT (case-insensitive, at most 200 characters)
  --since T         entries at or after T: a time (2026-05-16T20:00:00Z) or a duration before now (30m, 24h, 7d)
  --until T         entries before T (same forms; not with --follow)
${REMOTE_HELP}`,
};

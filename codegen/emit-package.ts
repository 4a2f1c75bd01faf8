/** package.json and README of the generated package. */
import { JSON_HEADER_KEY, JSON_HEADER_VALUE } from './header.js';
import { ERROR_ALIASES_REMOVED_IN, ERROR_ALIASES_SINCE } from './emit-code.js';

/**
 * Node versions the package supports. It is ESM only (contract/DECISIONS.md L-entries):
 * `import` works on every current Node, and from these versions on `require()` loads it too
 * (require(esm) without a flag: 20.19, 22.12), so CommonJS callers need no second build.
 */
export const PACKAGE_ENGINES = '^20.19.0 || >=22.12.0';

/** Subpaths with types; typesVersions repeats them for `moduleResolution: node10`, which ignores `exports`. */
const TYPED_SUBPATHS: Record<string, string> = { validators: './dist/validators.d.ts', runtime: './dist/runtime.d.ts' };

/** "V2" and "cortex.v2": the protocol version and subprotocol the package speaks (limits.json). */
export interface ProtocolNames {
  version: number;
  subprotocol: string;
}
export const protocolNames = (limits: Record<string, { value: number | string }>): ProtocolNames => ({ version: Number(limits['protocol_version']?.value), subprotocol: String(limits['subprotocol']?.value) });

/** The deprecated error-class aliases exist in 1.x only (removed in ERROR_ALIASES_REMOVED_IN). */
export const hasErrorAliases = (p: ProtocolNames) => p.version < Number(ERROR_ALIASES_REMOVED_IN.split('.')[0]);

export function packageJson(name: string, version: string, p: ProtocolNames): string {
  const pkg = {
    [JSON_HEADER_KEY]: JSON_HEADER_VALUE,
    name,
    version,
    description: `Types, precompiled validators, typed JSON-RPC stubs and conformance vectors for the Cortex agent <-> server protocol V${p.version} (JSON-RPC 2.0 over WebSocket, subprotocol ${p.subprotocol}).`,
    type: 'module',
    main: './dist/index.js',
    types: './dist/index.d.ts',
    exports: {
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      ...Object.fromEntries(Object.entries(TYPED_SUBPATHS).map(([k, d]) => [`./${k}`, { types: d, default: d.replace(/\.d\.ts$/, '.js') }])),
      './vectors/*': './vectors/*',
      './schemas/*': './schemas/*',
      './spec/*': './spec/*',
      './package.json': './package.json',
    },
    typesVersions: { '*': Object.fromEntries(Object.entries(TYPED_SUBPATHS).map(([k, d]) => [k, [d]])) },
    files: ['dist', 'schemas', 'spec', 'vectors', 'PROTOCOL.md', 'README.md', 'CHANGELOG.md', 'LICENSE', 'manifest.json'],
    sideEffects: false,
    engines: { node: PACKAGE_ENGINES },
    license: 'MIT',
    keywords: ['cortex', 'json-rpc', 'websocket', 'protocol', 'agent'],
  };
  return JSON.stringify(pkg, null, 2) + '\n';
}

export function packageReadme(name: string, p: ProtocolNames): string {
  return `# ${name}

Everything needed to speak the Cortex agent protocol V${p.version} (JSON-RPC 2.0 over WebSocket,
subprotocol \`${p.subprotocol}\`) from TypeScript or JavaScript: types for every message,
precompiled validators (no schema compilation at run time, no dependencies), a typed
JSON-RPC peer that works over any WebSocket with \`send\`, \`close\` and message/close events,
typed error classes, the limits and close codes, the agent state machine, conformance vectors
and the reference (\`PROTOCOL.md\`). Generated from the protocol contract; do not edit.

The package is not published to the npm registry (\`npm install ${name}\` fails with E404).
Build it from a checkout of the toolkit's repository and install the tarball, with \`ws\` beside
it for Node (a browser has WebSocket built in):

\`\`\`sh
# in the toolkit's checkout: the package is generated/ (npm run codegen rebuilds it)
npm pack ./generated --pack-destination /tmp      # → /tmp/cortex-agent-protocol-<version>.tgz
# in your project
npm install /tmp/cortex-agent-protocol-<version>.tgz ws
\`\`\`

Or depend on the folder itself: \`"${name}": "file:../path/to/checkout/generated"\` in your
\`package.json\` (npm links it; its \`dist/\` is committed, so nothing needs building).

The package has no dependencies. It is ESM only (\`"type": "module"\`): \`import\` it anywhere;
\`require()\` loads it on Node ${PACKAGE_ENGINES} (the \`engines\` range), where Node loads ES
modules from \`require\`. Types resolve under \`moduleResolution\` \`node16\`/\`nodenext\`/\`bundler\`
and, through \`typesVersions\`, \`node10\`.

## A tiny agent

Enrolls (or reconnects) with a token, keeps the rotated token, pushes one entry, waits for its
ack and closes with \`final_seq=<last acked seq>\`; a server's \`agent.shutdown\` closes it the
same way. Build it with \`tsc\` (strict) and run it with \`HOST_ID\` and \`TOKEN\` from the
server's \`agent issue\`.

\`\`\`ts
// file: tiny-agent.ts
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import WebSocket from 'ws';
import { AgentClient, LIMITS, ProbeUnavailableError, SUBPROTOCOL, createAgentPeer, registerAgentHandlers, webSocketTransport } from '${name}';

const url = process.env['SERVER_URL'] ?? 'ws://127.0.0.1:3100/ws/agent';
const hostId = process.env['HOST_ID'];
const tokenFile = process.env['TOKEN_FILE'] ?? 'token';
// the one-time enrollment token first; after that the rotated one this agent saved
let token = process.env['TOKEN'];
try {
  token = readFileSync(tokenFile, 'utf8').trim();
} catch {
  // not enrolled yet
}
if (!hostId || !token) throw new Error('set HOST_ID and TOKEN (from cortex-server agent issue)');

// No compression (PROTOCOL.md: V${p.version} forbids permessage-deflate, which ws offers by default) and
// no incoming frame over the limit (ws closes the connection with 1009 Message Too Big).
const ws = new WebSocket(url, SUBPROTOCOL, { perMessageDeflate: false, maxPayload: LIMITS.max_frame_bytes });
await new Promise((resolve, reject) => {
  ws.once('open', resolve);
  ws.once('error', reject);
});
const peer = createAgentPeer(webSocketTransport(ws));
const agent = new AgentClient(peer);
const closed = new Promise<number>((resolve) => peer.onClose((code) => resolve(code)));
let ackedSeq = 0;
const stop = () => peer.close(1000, \`final_seq=\${ackedSeq}\`);
registerAgentHandlers(peer, {
  'probe.request': ({ probe }) => {
    throw new ProbeUnavailableError({ probe });
  },
  'agent.shutdown': () => stop(),
  'config.update': () => undefined,
});

const hello = await agent.agentHello({
  protocol_version: 1,
  agent_version: '0.1.0',
  hostname: 'tiny-agent',
  host_id: hostId,
  platform: { os: 'linux', arch: 'x86_64', kernel: '6.6.0', distro: null },
  capabilities: { supported_probes: [], sources: ['custom'], max_batch_entries: 100, compression: [] },
  token,
  resume_from_seq: 0,
});
if (hello.rotated_token) {
  // the old token stops working: save the new one atomically before anything else
  writeFileSync(\`\${tokenFile}.tmp\`, hello.rotated_token, { mode: 0o600 });
  renameSync(\`\${tokenFile}.tmp\`, tokenFile);
}
ackedSeq = hello.accepted_seq;

const seq = ackedSeq + 1;
const ack = await agent.logsPush({
  seq_start: seq,
  entries: [{ seq, ts: new Date().toISOString(), severity: 'info', message: 'hello from a tiny agent', source: 'custom:tiny' }],
});
ackedSeq = ack.up_to_seq;
console.log(\`acked up to \${ackedSeq}\`);
stop();
console.log(\`closed with \${await closed}\`);
\`\`\`

A real agent keeps its entries in a durable buffer until they are acked, resumes with
\`resume_from_seq\`, sends \`agent.heartbeat\`, answers probes and follows \`config.update\`
(\`PROTOCOL.md\`; the reference agent does all of it).

## Validators alone

Each validator is its own code in \`dist/validators.js\`: a bundler keeps only the ones you
import (\`validateLogsPushParams\` alone is under 40 KB minified). On failure \`errors\` says
what failed; \`toIssues\` and \`describeIssues\` make it readable.

\`\`\`ts
// file: validate.ts
import { validateLogsPushParams } from '${name}/validators';
import { describeIssues, toIssues, type LogsPushParams } from '${name}';

const params: LogsPushParams = { seq_start: 1, entries: [{ seq: 1, ts: '2026-05-16T19:42:50.123Z', severity: 'info', message: 'ok', source: 'journald' }] };
console.log(validateLogsPushParams(params)); // true
const bad: unknown = { seq_start: 'one', entries: [] };
if (!validateLogsPushParams(bad)) console.log(describeIssues(toIssues(validateLogsPushParams.errors))); // /seq_start must be integer
\`\`\`

\`LogSource\` is \`\` 'journald' | \`file:\${string}\` | \`docker:\${string}\` | \`custom:\${string}\` \`\`: a
source of another kind does not compile.

## From CommonJS

\`\`\`js
// file: from-commonjs.cjs
const { PROTOCOL_VERSION, SUBPROTOCOL, LIMITS } = require('${name}');
console.log(PROTOCOL_VERSION, SUBPROTOCOL, LIMITS.max_frame_bytes);
\`\`\`

## Errors and checks

- An error answer rejects with an \`RpcError\` subclass (\`BackpressureError\`, …): \`code\`, \`data\`,
  and a \`message\` such as \`Backpressure (-32020): retry_after_ms=500\`. Local failures (timeout,
  closed connection, an invalid answer) are \`PeerError\`s with a string \`code\`.
- The peer validates what it sends: request and notification params (an invalid one is not
  sent) and handler results (answered with -32603 and reported as an \`invalid_outgoing_result\`
  event; the agent peer also checks a probe's \`output\` against that probe's schema). On by
  default; off under \`NODE_ENV=production\` unless \`validateOutgoing: true\` is passed.

## What is inside

- \`types\`: one type per schema (\`AgentHelloParams\`, \`LogBatchEntry\`, \`AgentConfig\`, …).
- \`validate<Type>\`: precompiled validators (also at \`${name}/validators\`).
- \`createAgentPeer\` / \`createServerPeer\`, \`AgentClient\` / \`ServerClient\` (typed callers),
  \`AgentHandlers\` / \`ServerHandlers\` (typed handler maps), \`webSocketTransport\`, \`memoryTransportPair\`.
- \`ErrorCode\`, one \`RpcError\` subclass per code (\`BackpressureError\`, \`ParseError\`, \`InternalError\`, …), \`PeerError\` for local failures.${
    hasErrorAliases(p)
      ? `
  \`ParseErrorError\` and \`InternalErrorError\` (the names before ${ERROR_ALIASES_SINCE}) are deprecated aliases: they stay in every 1.x version and are removed in the next major version (${ERROR_ALIASES_REMOVED_IN}).`
      : ''
  }
- \`CloseCode\`, \`LIMITS\`, \`SUBPROTOCOL\`, \`PROTOCOL_VERSION\`, \`AGENT_STATE_MACHINE\`, \`PROBES\`.
- \`vectors/<method>.json\`: valid and invalid messages with the expected outcome.
- \`schemas/\` (probes in \`schemas/probes/\`): the JSON Schemas (draft 2020-12), for other languages.
- \`spec/openrpc.json\` (OpenRPC 1.3.2) and \`spec/asyncapi.json\` (AsyncAPI 3.0): the contract for other ecosystems' generators.
- \`PROTOCOL.md\`: the reference; \`CHANGELOG.md\`: what changed in each version (the major is the protocol major).

Doc comments cite this package's own files: \`PROTOCOL.md#<section>\`, \`schemas/…\`.

## The runtime subpath

\`${name}/runtime\` holds the building blocks under the main entry, for code that builds its own
peer or applies the reference implementation's rules: the \`Peer\` class and its method tables
(\`MethodSpec\`, \`WIRE_METHODS\`, \`ProtocolSide\`, …), \`utf8Length\`, \`summarizeData\`, the log
entry guard (\`metadataProblem\`, \`nestedDeeperThan\`, \`storableText\`) and \`checkProbeOutput\`.
It re-exports the runtime's public names too. Its shape may change in a minor version; the main
entry's does not.

\`\`\`ts
// file: runtime.ts
import { metadataProblem, utf8Length } from '${name}/runtime';
import { LIMITS } from '${name}';

console.log(utf8Length('é'), metadataProblem({ a: 1 }, { maxDepth: LIMITS.metadata_max_depth, maxBytes: LIMITS.metadata_max_bytes })); // 2 undefined
\`\`\`
`;
}

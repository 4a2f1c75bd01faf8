/** package.json and README of the generated package. */
import { JSON_HEADER_KEY, JSON_HEADER_VALUE } from './header.js';

/**
 * Node versions the package supports. It is ESM only (contract/DECISIONS.md L-entries):
 * `import` works on every current Node, and from these versions on `require()` loads it too
 * (require(esm) without a flag: 20.19, 22.12), so CommonJS callers need no second build.
 */
export const PACKAGE_ENGINES = '^20.19.0 || >=22.12.0';

/** Subpaths with types; typesVersions repeats them for `moduleResolution: node10`, which ignores `exports`. */
const TYPED_SUBPATHS: Record<string, string> = { validators: './dist/validators.d.ts' };

export function packageJson(name: string, version: string): string {
  const pkg = {
    [JSON_HEADER_KEY]: JSON_HEADER_VALUE,
    name,
    version,
    description: 'Types, precompiled validators, typed JSON-RPC stubs and conformance vectors for the Cortex agent <-> server protocol V1 (JSON-RPC 2.0 over WebSocket, subprotocol cortex.v1).',
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

export function packageReadme(name: string): string {
  return `# ${name}

Everything needed to speak the Cortex agent protocol V1 (JSON-RPC 2.0 over WebSocket,
subprotocol \`cortex.v1\`) from TypeScript or JavaScript: types for every message,
precompiled validators (no schema compilation at run time, no dependencies), a typed
JSON-RPC peer that works over any WebSocket with \`send\`, \`close\` and message/close events,
typed error classes, the limits and close codes, the agent state machine, conformance vectors
and the reference (\`PROTOCOL.md\`). Generated from the contract; do not edit.

## A tiny agent

\`\`\`ts
import WebSocket from 'ws';
import { AgentClient, SUBPROTOCOL, createAgentPeer, registerAgentHandlers, webSocketTransport, ProbeUnavailableError } from '${name}';

const ws = new WebSocket('ws://127.0.0.1:3100/ws/agent', SUBPROTOCOL);
await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject); });
const peer = createAgentPeer(webSocketTransport(ws));
const agent = new AgentClient(peer);
registerAgentHandlers(peer, {
  'probe.request': ({ probe }) => { throw new ProbeUnavailableError({ probe }); },
  'agent.shutdown': ({ reason }) => ws.close(1000, 'final_seq=1'),
});
const hello = await agent.agentHello({
  protocol_version: 1, agent_version: '0.1.0', hostname: 'web-1', host_id: process.env.HOST_ID!,
  platform: { os: 'linux', arch: 'x86_64', kernel: '6.6.0', distro: null },
  capabilities: { supported_probes: [], sources: ['custom'], max_batch_entries: 100, compression: [] },
  token: process.env.TOKEN!, resume_from_seq: 0,
}); // persist hello.rotated_token atomically before anything else, when it is set
const seq = hello.accepted_seq + 1;
const ack = await agent.logsPush({ seq_start: seq, entries: [{ seq, ts: new Date().toISOString(), severity: 'info', message: 'hello', source: 'custom:demo' }] });
console.log('acked up to', ack.up_to_seq);
\`\`\`

## What is inside

- \`types\`: one type per schema (\`AgentHelloParams\`, \`LogBatchEntry\`, \`AgentConfig\`, …).
- \`validate<Type>\`: precompiled validators (also at \`${name}/validators\`); on failure \`.errors\` says what failed.
- \`createAgentPeer\` / \`createServerPeer\`, \`AgentClient\` / \`ServerClient\` (typed callers),
  \`AgentHandlers\` / \`ServerHandlers\` (typed handler maps), \`webSocketTransport\`, \`memoryTransportPair\`.
- \`ErrorCode\`, one \`RpcError\` subclass per code (\`BackpressureError\`, …), \`PeerError\` for local failures.
- \`CloseCode\`, \`LIMITS\`, \`SUBPROTOCOL\`, \`PROTOCOL_VERSION\`, \`AGENT_STATE_MACHINE\`, \`PROBES\`.
- \`vectors/<method>.json\`: valid and invalid messages with the expected outcome.
- \`schemas/\`: the contract's JSON Schemas (draft 2020-12), for other languages.
- \`spec/openrpc.json\` (OpenRPC 1.3.2) and \`spec/asyncapi.json\` (AsyncAPI 3.0): the contract for other ecosystems' generators.
`;
}

/**
 * The package's two code entries.
 *
 * - `@cortex/agent-protocol` (src/index.ts): what a protocol user needs — types, validators,
 *   the catalog, error classes, constants, the state machine, probes, the typed peer
 *   factories and callers, the transports and the public types of the peer (options,
 *   events, handler signatures).
 * - `@cortex/agent-protocol/runtime` (src/runtime.ts): the building blocks under them, for
 *   people writing their own peer or sharing the reference implementation's rules: the
 *   `Peer` class and its method tables (`MethodSpec`, `WIRE_METHODS`, `ProtocolSide`, …),
 *   `utf8Length`, `summarizeData`, the entry guard (`metadataProblem`, `storableText`, …)
 *   and `checkProbeOutput`. It re-exports the runtime's public names too, so one import
 *   serves such code. Not covered by the same stability promise as the main entry (see the
 *   package README).
 */

/** Runtime names the main entry re-exports (values, then types), by runtime module. */
export const MAIN_RUNTIME_EXPORTS: Record<string, { values: string[]; types: string[] }> = {
  'runtime/errors': {
    values: ['RpcError', 'PeerError', 'toIssues', 'describeIssues'],
    types: ['RpcErrorObject', 'PeerErrorCode', 'ValidationIssue', 'SchemaErrorLike'],
  },
  'runtime/peer': {
    values: [],
    types: ['Validator', 'Direction', 'RpcId', 'CallContext', 'RequestHandler', 'NotificationHandler', 'PeerEvent', 'IncomingCall', 'PeerOptions', 'AbortSignalLike', 'RequestOptions'],
  },
  'runtime/transport': { values: ['webSocketTransport', 'memoryTransportPair'], types: ['Frame', 'Transport', 'WebSocketLike'] },
};

/** Generated modules the main entry exports whole. */
const MAIN_MODULES = ['types', 'validators', 'errors', 'constants', 'state-machine', 'client'];

/** Generated modules the main entry exports in part (the rest is runtime). */
const MAIN_PARTS: Record<string, { values: string[]; types: string[] }> = {
  catalog: { values: ['METHOD_CATALOG'], types: ['MethodName', 'MethodInfo', 'AgentToServer', 'ServerToAgent'] },
  probes: { values: ['PROBES'], types: ['ProbeTypes', 'ProbeName', 'ProbeInfo', 'ProbeSchema'] },
};

/** What only the runtime subpath exports from the generated (non-runtime) modules. */
const RUNTIME_PARTS: Record<string, string[]> = { catalog: ['WIRE_METHODS'], probes: ['checkProbeOutput'] };

const named = (mod: string, p: { values: string[]; types: string[] }) =>
  `export { ${[...p.values, ...p.types.map((t) => `type ${t}`)].join(', ')} } from './${mod}.js';`;

export function emitMainEntry(protocolVersion: number): string {
  const doc = `/**
 * @cortex/agent-protocol: the Cortex agent protocol V${protocolVersion} for TypeScript and JavaScript
 * (README.md). Lower-level building blocks are in @cortex/agent-protocol/runtime.
 */
`;
  return (
    doc +
    [
      ...MAIN_MODULES.map((m) => `export * from './${m}.js';`),
      ...Object.entries(MAIN_PARTS).map(([m, p]) => named(m, p)),
      ...Object.entries(MAIN_RUNTIME_EXPORTS).map(([m, p]) => named(m, p)),
    ].join('\n') +
    '\n'
  );
}

export function emitRuntimeEntry(): string {
  const doc = `/**
 * @cortex/agent-protocol/runtime: the peer runtime and the shared rules under the main
 * entry, for code that builds its own peer (README.md, "The runtime subpath").
 */
`;
  return (
    doc +
    [
      ...['peer', 'errors', 'transport', 'entry-guard', 'frame-json'].map((m) => `export * from './runtime/${m}.js';`),
      ...Object.entries(RUNTIME_PARTS).map(([m, names]) => `export { ${names.join(', ')} } from './${m}.js';`),
    ].join('\n') +
    '\n'
  );
}

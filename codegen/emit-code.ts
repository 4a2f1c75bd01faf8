/** Catalog, error classes, constants, state machine and probe registry as TypeScript. */
import { camel, pascal, type Contract, type MethodEntry } from './contract.js';
import type { NamedSchema } from './bundle.js';

const lit = (v: unknown) => JSON.stringify(v);
const doc = (...lines: string[]) => `/**\n${lines.flatMap((l) => l.split('\n')).map((l) => (l ? ` * ${l}` : ' *')).join('\n')}\n */\n`;
const typeOfSchemaFile = (named: NamedSchema[], file: string) => {
  const n = named.find((x) => x.origin === `contract/schemas/${file}`);
  if (!n) throw new Error(`no named schema for ${file}`);
  return n.name;
};

export function wireMethods(contract: Contract): MethodEntry[] {
  return contract.methods.filter((m) => m.kind !== 'response');
}

export function emitCatalog(contract: Contract, named: NamedSchema[]): string {
  const methods = wireMethods(contract);
  const side = (dir: MethodEntry['direction'], name: string) => {
    const req = methods.filter((m) => m.direction === dir && m.kind === 'request');
    const notes = methods.filter((m) => m.direction === dir && m.kind === 'notification');
    return (
      doc(`Methods sent ${dir === 'agent_to_server' ? 'by the agent to the server' : 'by the server to the agent'}: requests (params and result) and notifications (params).`) +
      `export interface ${name} {\n  requests: {\n${req
        .map((m) => `    ${lit(m.name)}: { params: T.${typeOfSchemaFile(named, m.params!)}; result: T.${typeOfSchemaFile(named, m.result!)} };`)
        .join('\n')}\n  };\n  notifications: {\n${notes.map((m) => `    ${lit(m.name)}: T.${typeOfSchemaFile(named, m.params!)};`).join('\n')}\n  };\n}\n`
    );
  };
  const entries = contract.methods.map((m) => {
    const v = (f: string | undefined) => (f ? `V.validate${typeOfSchemaFile(named, f)}` : 'undefined');
    return `  {\n    name: ${lit(m.name)},\n    section: ${lit(m.section)},\n    direction: ${lit(m.direction)},\n    kind: ${lit(m.kind)},\n${m.response_to ? `    responseTo: ${lit(m.response_to)},\n` : ''}    summary: ${lit(m.summary)},\n    errors: ${lit(m.errors)},\n    paramsSchema: ${lit(m.params ?? null)},\n    resultSchema: ${lit(m.result ?? null)},\n    validateParams: ${v(m.params)},\n    validateResult: ${v(m.result)},\n  },`;
  });
  return `import type * as T from './types.js';
import * as V from './validators.js';
import type { Direction, MethodSpec, Validator } from './runtime/peer.js';

export type MethodName = ${contract.methods.map((m) => lit(m.name)).join(' | ')};

${doc('One entry of the method catalog (PROTOCOL.md, "Methods").')}export interface MethodInfo {
  readonly name: MethodName;
  /** The method's section number in the V1 protocol specification (PROTOCOL.md describes it under its name). */
  readonly section: string;
  readonly direction: Direction;
  /** "response" is probe.response: a JSON-RPC response envelope, not a method on the wire. */
  readonly kind: 'request' | 'notification' | 'response';
  readonly responseTo?: MethodName;
  readonly summary: string;
  /** Error codes the receiver may answer with. */
  readonly errors: readonly number[];
  readonly paramsSchema: string | null;
  readonly resultSchema: string | null;
  readonly validateParams: Validator | undefined;
  readonly validateResult: Validator | undefined;
}

${doc('The method catalog, in contract order.')}export const METHOD_CATALOG: readonly MethodInfo[] = [
${entries.join('\n')}
];

${doc('The methods that travel on the wire with a name, as the peer runtime needs them.')}export const WIRE_METHODS: readonly MethodSpec[] = /* @__PURE__ */ METHOD_CATALOG.flatMap((m) =>
  m.kind === 'response' || !m.validateParams ? [] : [{ name: m.name, direction: m.direction, kind: m.kind, validateParams: m.validateParams, ...(m.validateResult ? { validateResult: m.validateResult } : {}) }],
);

${side('agent_to_server', 'AgentToServer')}
${side('server_to_agent', 'ServerToAgent')}`;
}

/**
 * The class of an error code: its name with an `Error` suffix, unless the name already ends
 * in `Error` (ParseError, InternalError: not ParseErrorError).
 */
export const errorClassName = (name: string): string => (name.endsWith('Error') ? name : `${name}Error`);

/**
 * Names the error classes had before errorClassName (the doubled suffix), exported as
 * deprecated aliases since ERROR_ALIASES_SINCE. Removing an export breaks its importers, so
 * they stay for the rest of this major version and go in ERROR_ALIASES_REMOVED_IN (1.3.0 said
 * "the next minor version"; corrected in 1.6.0, DECISIONS F14).
 */
export const ERROR_ALIASES_SINCE = '1.3.0';
export const ERROR_ALIASES_REMOVED_IN = '2.0';

export function emitErrors(contract: Contract): string {
  const data = (d: string | undefined) => (d ? `T.${d}` : 'unknown');
  // The aliases are promised for 1.x only: a package of protocol major 2 or later has none.
  const aliases = (Number(contract.limits['protocol_version']?.value) < Number(ERROR_ALIASES_REMOVED_IN.split('.')[0]) ? contract.errors : [])
    .filter((e) => errorClassName(e.name) !== `${e.name}Error`)
    .map(
      (e) =>
        `${doc(`@deprecated Renamed to {@link ${errorClassName(e.name)}} in ${ERROR_ALIASES_SINCE}; this alias stays in every 1.x version and is removed in the next major version (${ERROR_ALIASES_REMOVED_IN}).`)}export const ${e.name}Error = ${errorClassName(e.name)};
${doc(`@deprecated Renamed to {@link ${errorClassName(e.name)}}; removed in the next major version (${ERROR_ALIASES_REMOVED_IN}).`)}export type ${e.name}Error = ${errorClassName(e.name)};
`,
    );
  const classes = contract.errors.map((e) => {
    const cls = errorClassName(e.name);
    const defs = (contract.schemas.get('error-data.json')?.['$defs'] ?? {}) as Record<string, { required?: string[] }>;
    const dataRequired = e.data !== undefined && (defs[e.data]?.required?.length ?? 0) > 0;
    return `${doc(`${e.code} ${e.name} (${e.direction === 'either' ? 'either side' : e.direction === 'server' ? 'server replies' : 'agent replies'}): ${e.meaning}${e.close_code ? `\nThe connection is then closed with ${e.close_code}.` : ''}`)}export class ${cls} extends RpcError<${data(e.data)}> {
  static readonly code = ${e.code};
  constructor(data${dataRequired ? '' : '?'}: ${data(e.data)}, message = ${lit(e.name)}) {
    super(${e.code}, message, data);
    this.name = ${lit(cls)};
  }
}
`;
  });
  return `import { RpcError, type RpcErrorObject } from './runtime/errors.js';
import type * as T from './types.js';

${doc('Error codes of the protocol (PROTOCOL.md, "Error codes").')}export const ErrorCode = {
${contract.errors.map((e) => `  ${e.name}: ${e.code},`).join('\n')}
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

${doc('One row of the error table.')}export interface ErrorInfo {
  readonly code: ErrorCode;
  readonly name: keyof typeof ErrorCode;
  readonly direction: 'server' | 'agent' | 'either';
  readonly meaning: string;
  /** WebSocket close code that follows this error, when it ends the connection. */
  readonly closeCode?: number;
  /** Name of the error.data type, when the contract defines one. */
  readonly dataType?: string;
}

export const ERROR_TABLE: readonly ErrorInfo[] = [
${contract.errors.map((e) => `  { code: ${e.code}, name: ${lit(e.name)}, direction: ${lit(e.direction)}, meaning: ${lit(e.meaning)}${e.close_code ? `, closeCode: ${e.close_code}` : ''}${e.data ? `, dataType: ${lit(e.data)}` : ''} },`).join('\n')}
];

${classes.join('\n')}
${aliases.join('\n')}
const CLASSES: Record<number, new (data: never, message?: string) => RpcError> = {
${contract.errors.map((e) => `  [${e.code}]: ${errorClassName(e.name)},`).join('\n')}
};

${doc('Build the typed error instance for a wire error object (unknown codes give a plain RpcError).')}export function errorFromWire(error: RpcErrorObject): RpcError {
  const Cls = CLASSES[error.code];
  return Cls ? new Cls(error.data as never, error.message) : new RpcError(error.code, error.message, error.data);
}

${doc('The error-table row of a code, if the contract defines it.')}export function errorInfo(code: number): ErrorInfo | undefined {
  return ERROR_TABLE.find((e) => e.code === code);
}
`;
}

export function emitConstants(contract: Contract, secrets: readonly string[]): string {
  const limits = Object.entries(contract.limits);
  const cc = contract.closeCodes;
  return `${doc('WebSocket close codes (PROTOCOL.md, "WebSocket close codes").')}export const CloseCode = {
${cc.map((c) => `  ${c.name}: ${c.code},`).join('\n')}
} as const;
export type CloseCode = (typeof CloseCode)[keyof typeof CloseCode];

export interface CloseCodeInfo {
  readonly code: number;
  readonly name: keyof typeof CloseCode;
  readonly meaning: string;
  /** "seed": a code of the base V1 protocol; "design": added by this toolkit (PROTOCOL.md, "WebSocket close codes"). */
  readonly source: string;
}

export const CLOSE_CODE_TABLE: readonly CloseCodeInfo[] = [
${cc.map((c) => `  { code: ${c.code}, name: ${lit(c.name)}, meaning: ${lit(c.meaning)}, source: ${lit(c.source)} },`).join('\n')}
];

${doc('Limits and timings (PROTOCOL.md, "Limits and timings"). Units are in each name or its doc comment.')}export const LIMITS = {
${limits.map(([k, l]) => `  /** ${l.description}${l.unit ? ` Unit: ${l.unit}.` : ''} See ${l.source}. */\n  ${k}: ${lit(l.value)},`).join('\n')}
} as const;

${doc(
    'Fields the contract marks secret ("Secret: never logged." in their description), in every',
    "schema, the reference server's settings included: a logger redacts these keys wherever they",
    'appear, and a token is never put into a message string.',
  )}export const SECRET_FIELDS: readonly string[] = ${lit(secrets)};

${doc(`The WebSocket subprotocol of V${String(contract.limits['protocol_version']?.value)}.`)}export const SUBPROTOCOL = ${lit(contract.limits['subprotocol']?.value)};
${doc(`agent.hello protocol_version of V${String(contract.limits['protocol_version']?.value)}.`)}export const PROTOCOL_VERSION = ${lit(contract.limits['protocol_version']?.value)};
`;
}

export function emitStateMachine(contract: Contract): string {
  const sm = contract.stateMachine;
  const events = [...new Set(sm.transitions.map((t) => t.event))];
  return `${doc(sm.description)}export type AgentState = ${sm.states.map((s) => lit(s.name)).join(' | ')};

export type AgentEvent = ${events.map((e) => lit(e)).join(' | ')};

export interface AgentTransition {
  readonly from: AgentState;
  readonly to: AgentState;
  readonly event: AgentEvent;
  readonly description: string;
  /** Error codes that cause this transition, where the contract names them. */
  readonly errors?: readonly number[];
}

export const AGENT_STATE_MACHINE = {
  initial: ${lit(sm.initial)} as AgentState,
  states: [
${sm.states.map((s) => `    { name: ${lit(s.name)} as AgentState, description: ${lit(s.description)}, terminal: ${s.terminal === true} },`).join('\n')}
  ],
  transitions: [
${sm.transitions.map((t) => `    { from: ${lit(t.from)}, to: ${lit(t.to)}, event: ${lit(t.event)}, description: ${lit(t.description)}${t.errors ? `, errors: ${lit(t.errors)}` : ''} },`).join('\n')}
  ] as readonly AgentTransition[],
} as const;

${doc('The state an event leads to, or undefined when the contract has no such transition.')}export function nextAgentState(from: AgentState, event: AgentEvent): AgentState | undefined {
  return AGENT_STATE_MACHINE.transitions.find((t) => t.from === from && t.event === event)?.to;
}

${doc('True for FatalAuth and Revoked: no way out but operator intervention.')}export function isTerminalState(state: AgentState): boolean {
  return AGENT_STATE_MACHINE.states.some((s) => s.name === state && s.terminal);
}
`;
}

export function emitProbes(contract: Contract, named: NamedSchema[]): string {
  const typeOf = (p: string, kind: 'args' | 'output') => named.find((n) => n.origin === `contract/probes/${p}.${kind}.json`)!.name;
  return `import type * as T from './types.js';
import * as V from './validators.js';
import type { Validator } from './runtime/peer.js';
import { toIssues, type ValidationIssue } from './runtime/errors.js';

${doc('Probes of the reference registry (schemas/probes/): args and output types by probe name.')}export interface ProbeTypes {
${contract.probes.map((p) => `  ${lit(p.name)}: { args: T.${typeOf(p.name, 'args')}; output: T.${typeOf(p.name, 'output')} };`).join('\n')}
}

export type ProbeName = keyof ProbeTypes;

${doc('A JSON Schema (draft 2020-12) of the contract, as data.')}export type ProbeSchema = { readonly [keyword: string]: unknown };

export interface ProbeInfo {
  readonly name: ProbeName;
  readonly summary: string;
  readonly validateArgs: Validator;
  readonly validateOutput: Validator;
  /** The args schema (the same as schemas/probes/<name>.args.json): for a form or a catalog, without reading the package's files. */
  readonly argsSchema: ProbeSchema;
  /** The output schema (schemas/probes/<name>.output.json). */
  readonly outputSchema: ProbeSchema;
}

export const PROBES: readonly ProbeInfo[] = [
${contract.probes.map((p) => `  { name: ${lit(p.name)}, summary: ${lit(p.summary)}, validateArgs: V.validate${typeOf(p.name, 'args')}, validateOutput: V.validate${typeOf(p.name, 'output')}, argsSchema: ${JSON.stringify(p.args)}, outputSchema: ${JSON.stringify(p.output)} },`).join('\n')}
];

${doc(
    "The agent peer's outgoing check of a probe.request result (PeerOptions.checkOutgoingResult):",
    "its `output` against the output schema of the probe named in the request's params, so an",
    'invalid probe output fails at the agent. Probes outside this registry pass unchecked.',
  )}export function checkProbeOutput(method: string, params: unknown, result: unknown): ValidationIssue[] | undefined {
  if (method !== 'probe.request') return undefined;
  const name = (params as { probe?: unknown } | null)?.probe;
  const probe = PROBES.find((p) => p.name === name);
  if (!probe) return undefined;
  const output = (result as { output?: unknown } | null)?.output;
  if (probe.validateOutput(output)) return undefined;
  return toIssues(probe.validateOutput.errors).map((i) => ({ ...i, path: \`/output\${i.path}\` }));
}
`;
}

export { camel, pascal };

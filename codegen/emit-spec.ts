/**
 * Exports of the contract for other ecosystems: one OpenRPC document (every method) and one
 * AsyncAPI 3.0 document (the WebSocket channel, its messages and operations), so generators in
 * other languages can consume the contract. Both reference the same component schemas.
 */
import type { Contract, JsonSchema, MethodEntry } from './contract.js';
import type { NamedSchema } from './bundle.js';

const OPENRPC_VERSION = '1.3.2';

/** The named schemas with references pointing at `#/components/schemas/<Name>`. */
function componentSchemas(named: NamedSchema[]): Record<string, JsonSchema> {
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== 'object') return node;
    const o: JsonSchema = {};
    for (const [k, v] of Object.entries(node as JsonSchema)) {
      o[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/$defs/', '#/components/schemas/') : rewrite(v);
    }
    return o;
  };
  return Object.fromEntries(named.map((n) => [n.name, { title: n.name, ...(rewrite(n.schema) as JsonSchema) }]));
}

const typeName = (named: NamedSchema[], file: string) => named.find((n) => n.origin === `contract/schemas/${file}`)!.name;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const directionText = (m: MethodEntry) => (m.direction === 'agent_to_server' ? 'agent → server' : 'server → agent');

export function emitOpenRpc(contract: Contract, named: NamedSchema[]): Record<string, unknown> {
  const schemas = componentSchemas(named);
  const errors = new Map(contract.errors.map((e) => [e.code, e]));
  const methods = contract.methods
    .filter((m) => m.kind !== 'response')
    .map((m) => {
      const paramsName = typeName(named, m.params!);
      const params = schemas[paramsName]!;
      const required = new Set((params['required'] ?? []) as string[]);
      const props = (params['properties'] ?? {}) as Record<string, JsonSchema>;
      const method: Record<string, unknown> = {
        name: m.name,
        summary: m.summary,
        description: `Seed section ${m.section}. Direction: ${directionText(m)}. Kind: ${m.kind}${m.kind === 'notification' ? ' (no id, never answered)' : ''}. Params are by name and are exactly ${paramsName}.`,
        paramStructure: 'by-name',
        params: Object.entries(props).map(([name, schema]) => ({ name, required: required.has(name), schema })),
        'x-direction': m.direction,
        'x-kind': m.kind,
        'x-params-schema': ref(paramsName),
      };
      if (m.result) method['result'] = { name: 'result', schema: ref(typeName(named, m.result)) };
      if (m.errors.length) method['errors'] = m.errors.map((c) => ({ code: c, message: errors.get(c)!.name, ...(errors.get(c)!.data ? { data: ref(errors.get(c)!.data!) } : {}) }));
      const examples = m.examples.filter((e) => e.message === 'request' || e.message === 'notification');
      const response = m.examples.find((e) => e.message === 'response');
      if (examples.length) {
        method['examples'] = examples.map((e) => {
          const msg = contract.examples.get(e.file) as { params: Record<string, unknown> };
          const pairing: Record<string, unknown> = { name: e.file.replace(/\.json$/, ''), params: Object.entries(msg.params).map(([name, value]) => ({ name, value })) };
          if (response) pairing['result'] = { name: 'result', value: (contract.examples.get(response.file) as { result: unknown }).result };
          return pairing;
        });
      }
      return method;
    });
  return {
    openrpc: OPENRPC_VERSION,
    info: {
      title: 'Cortex agent protocol',
      version: '1.0.0',
      description: `JSON-RPC 2.0 over WebSocket (subprotocol ${String(contract.limits['subprotocol']?.value)}): one message per text frame, no batching, frames of at most ${String(contract.limits['max_frame_bytes']?.value)} bytes. Methods are bidirectional: see x-direction. probe.response is the JSON-RPC response to probe.request, not a method.`,
    },
    servers: [{ name: 'reference server (loopback)', url: `ws://127.0.0.1:3100${String(contract.limits['ws_path']?.value)}` }],
    methods,
    components: { schemas },
  };
}

export function emitAsyncApi(contract: Contract, named: NamedSchema[]): Record<string, unknown> {
  const schemas = componentSchemas(named);
  const messages: Record<string, unknown> = {};
  const channelMessages: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  const envelope = (extra: JsonSchema, required: string[]): JsonSchema => ({
    type: 'object',
    required: ['jsonrpc', ...required],
    additionalProperties: false,
    properties: { jsonrpc: { const: '2.0' }, ...extra },
  });
  const addMessage = (name: string, summary: string, payload: JsonSchema, exampleFiles: string[]) => {
    messages[name] = {
      name,
      title: name,
      summary,
      contentType: 'application/json',
      payload,
      ...(exampleFiles.length ? { examples: exampleFiles.map((f) => ({ name: f.replace(/\.json$/, '').replace(/[^A-Za-z0-9_.-]/g, '_'), payload: contract.examples.get(f) })) } : {}),
    };
    channelMessages[name] = { $ref: `#/components/messages/${name}` };
  };
  for (const m of contract.methods.filter((x) => x.kind !== 'response')) {
    const base = m.name.split('.').map((p) => p[0]!.toUpperCase() + p.slice(1).replace(/_(.)/g, (_, c: string) => c.toUpperCase())).join('');
    const exFiles = (kind: string) => m.examples.filter((e) => e.message === kind).map((e) => e.file);
    const paramsName = typeName(named, m.params!);
    if (m.kind === 'request') {
      addMessage(`${base}Request`, `${m.name} request (${directionText(m)})`, envelope({ id: ref('JsonRpcId'), method: { const: m.name }, params: ref(paramsName) }, ['id', 'method', 'params']), exFiles('request'));
      addMessage(`${base}Response`, `${m.name} response (${m.direction === 'agent_to_server' ? 'server → agent' : 'agent → server'})`, {
        oneOf: [envelope({ id: ref('JsonRpcId'), result: ref(typeName(named, m.result!)) }, ['id', 'result']), ref('JsonRpcErrorResponse')],
      }, [...exFiles('response'), ...exFiles('error')]);
    } else {
      addMessage(`${base}Notification`, `${m.name} notification (${directionText(m)})`, envelope({ method: { const: m.name }, params: ref(paramsName) }, ['method', 'params']), exFiles('notification'));
    }
    // Operations are described from the agent's point of view.
    const action = m.direction === 'agent_to_server' ? 'send' : 'receive';
    const op: Record<string, unknown> = {
      action,
      channel: { $ref: '#/channels/agent' },
      summary: m.summary,
      description: `Seed section ${m.section}; ${directionText(m)}; ${m.kind}.${m.errors.length ? ` Errors: ${m.errors.join(', ')}.` : ''}`,
      messages: [{ $ref: `#/channels/agent/messages/${base}${m.kind === 'request' ? 'Request' : 'Notification'}` }],
    };
    if (m.kind === 'request') op['reply'] = { channel: { $ref: '#/channels/agent' }, messages: [{ $ref: `#/channels/agent/messages/${base}Response` }] };
    operations[`${action}${base}`] = op;
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Cortex agent protocol',
      version: '1.0.0',
      description: `The agent ↔ server channel: JSON-RPC 2.0 over one WebSocket (subprotocol ${String(contract.limits['subprotocol']?.value)}), one message per text frame. Operations are described from the agent's side: send = agent → server, receive = server → agent.`,
    },
    defaultContentType: 'application/json',
    servers: {
      local: { host: '127.0.0.1:3100', protocol: 'ws', pathname: String(contract.limits['ws_path']?.value), description: 'The reference server on loopback (production: wss behind a TLS-terminating proxy).' },
    },
    channels: {
      agent: {
        address: String(contract.limits['ws_path']?.value),
        title: 'Agent connection',
        description: 'One WebSocket per agent. The first frame is agent.hello.',
        messages: channelMessages,
      },
    },
    operations,
    components: { schemas, messages },
  };
}

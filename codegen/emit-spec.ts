/**
 * Exports of the contract for other ecosystems: OpenRPC documents (every method in
 * openrpc.json; one document per direction: the methods the server serves and the methods
 * the agent serves) and one AsyncAPI 3.0 document (the WebSocket channel with its
 * subprotocol binding, its messages and operations), so generators in other languages can
 * consume the contract. All reference the same component schemas.
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
  return Object.fromEntries(named.map((n) => [n.name, titleInline({ title: n.name, ...(rewrite(n.schema) as JsonSchema) }, n.name)]));
}

const pascalCase = (s: string) => s.replace(/(^|[_.\-\s]+)([a-zA-Z0-9])/g, (_m, _sep: string, c: string) => c.toUpperCase());

/**
 * Titles for the inline enums and objects of a schema (`<Parent><Property>`, `<Parent>Item`,
 * `<Parent>Variant<N>`), so model generators name them instead of AnonymousSchemaN.
 */
function titleInline(schema: JsonSchema, name: string): JsonSchema {
  const visit = (node: unknown, title: string, top: boolean): unknown => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
    const o = { ...(node as JsonSchema) };
    if (!top && typeof o['$ref'] !== 'string' && o['title'] === undefined && (Array.isArray(o['enum']) || (o['type'] === 'object' && o['properties']))) o['title'] = title;
    const base = typeof o['title'] === 'string' ? (o['title'] as string) : title;
    if (o['properties'] && typeof o['properties'] === 'object') {
      o['properties'] = Object.fromEntries(Object.entries(o['properties'] as Record<string, unknown>).map(([k, v]) => [k, visit(v, `${base}${pascalCase(k)}`, false)]));
    }
    if (o['items'] && typeof o['items'] === 'object') o['items'] = visit(o['items'], `${base}Item`, false);
    for (const key of ['oneOf', 'anyOf']) {
      if (Array.isArray(o[key])) o[key] = (o[key] as unknown[]).map((b, i) => visit(b, `${base}Variant${i + 1}`, false));
    }
    return o;
  };
  return visit(schema, name, true) as JsonSchema;
}

/** Every JSON type: the same values as `{}` for JSON, but a missing value (undefined) fails it. */
const ANY_JSON: JsonSchema = { type: ['object', 'array', 'string', 'number', 'boolean', 'null'] };

/** A property schema for an OpenRPC param: `{}` (any JSON value) made explicit, so a required param that is absent fails validators that validate `undefined`. */
function paramSchema(schema: JsonSchema): JsonSchema {
  return Object.keys(schema).filter((k) => !['description', 'title', '$comment'].includes(k)).length === 0 ? { ...schema, ...ANY_JSON } : schema;
}

export type OpenRpcView = 'all' | 'agent_to_server' | 'server_to_agent';

const typeName = (named: NamedSchema[], file: string) => named.find((n) => n.origin === `contract/schemas/${file}`)!.name;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const directionText = (m: MethodEntry) => (m.direction === 'agent_to_server' ? 'agent → server' : 'server → agent');

/**
 * An OpenRPC document. `view` 'agent_to_server' holds the methods the server serves (the
 * agent calls them; the document's server is the reference server), 'server_to_agent' the
 * methods the agent serves over the same connection, 'all' both (with x-direction).
 */
export function emitOpenRpc(contract: Contract, named: NamedSchema[], view: OpenRpcView = 'all'): Record<string, unknown> {
  const schemas = componentSchemas(named);
  const errors = new Map(contract.errors.map((e) => [e.code, e]));
  const methods = contract.methods
    .filter((m) => m.kind !== 'response' && (view === 'all' || m.direction === view))
    .map((m) => {
      const paramsName = typeName(named, m.params!);
      const params = schemas[paramsName]!;
      const required = new Set((params['required'] ?? []) as string[]);
      const props = (params['properties'] ?? {}) as Record<string, JsonSchema>;
      const method: Record<string, unknown> = {
        name: m.name,
        summary: m.summary,
        description: `PROTOCOL.md#${m.name.replace(/\./g, '')}. Direction: ${directionText(m)}. Kind: ${m.kind}${m.kind === 'notification' ? ' (no id, never answered)' : ''}. Params are by name and are exactly ${paramsName}: no other names (x-params-schema, additionalProperties false).`,
        paramStructure: 'by-name',
        params: Object.entries(props).map(([name, schema]) => ({ name, required: required.has(name), schema: paramSchema(schema) })),
        'x-direction': m.direction,
        'x-kind': m.kind,
        'x-params-schema': ref(paramsName),
      };
      if (m.result) method['result'] = { name: 'result', schema: ref(typeName(named, m.result)) };
      // OpenRPC's error `data` is a value (and error objects take no extensions): the schemas
      // of the data go to the method's x-error-data-schemas, by code.
      if (m.errors.length) {
        method['errors'] = m.errors.map((c) => ({ code: c, message: errors.get(c)!.name }));
        const withData = m.errors.filter((c) => errors.get(c)!.data);
        if (withData.length) method['x-error-data-schemas'] = Object.fromEntries(withData.map((c) => [String(c), ref(errors.get(c)!.data!)]));
      }
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
  const wire = `JSON-RPC 2.0 over WebSocket (subprotocol ${String(contract.limits['subprotocol']?.value)}): one message per text frame, no batching, frames of at most ${String(contract.limits['max_frame_bytes']?.value)} bytes.`;
  const who =
    view === 'agent_to_server'
      ? 'The methods the server serves: the agent calls them (openrpc.server-to-agent.json has the other direction).'
      : view === 'server_to_agent'
        ? 'The methods the agent serves: the server calls them over the connection the agent opened (openrpc.agent-to-server.json has the other direction). probe.response is the JSON-RPC response to probe.request, not a method.'
        : 'Methods are bidirectional: see x-direction (openrpc.agent-to-server.json and openrpc.server-to-agent.json hold one direction each). probe.response is the JSON-RPC response to probe.request, not a method.';
  return {
    openrpc: OPENRPC_VERSION,
    info: {
      title: view === 'all' ? 'Cortex agent protocol' : `Cortex agent protocol: ${view === 'agent_to_server' ? 'server' : 'agent'} methods`,
      version: protocolVersionOf(contract),
      description: `${wire} ${who}`,
    },
    // The agent reaches the server at this URL; the server reaches the agent only over that connection.
    ...(view === 'server_to_agent' ? {} : { servers: [{ name: 'reference server (loopback)', url: `ws://127.0.0.1:3100${String(contract.limits['ws_path']?.value)}` }] }),
    methods,
    components: { schemas },
  };
}

/** The documents' info.version: the protocol version (the package version is in package.json). */
function protocolVersionOf(contract: Contract): string {
  return `${String(contract.limits['protocol_version']?.value ?? 1)}.0.0`;
}

export function emitAsyncApi(contract: Contract, named: NamedSchema[]): Record<string, unknown> {
  const schemas = componentSchemas(named);
  const messages: Record<string, unknown> = {};
  const channelMessages: Record<string, unknown> = {};
  const operations: Record<string, unknown> = {};
  // Titled payloads: generators (Modelina) name their models after them, not AnonymousSchemaN.
  const envelope = (title: string, extra: JsonSchema, required: string[]): JsonSchema => ({
    title,
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
      addMessage(`${base}Request`, `${m.name} request (${directionText(m)})`, envelope(`${base}Request`, { id: ref('JsonRpcId'), method: { const: m.name }, params: ref(paramsName) }, ['id', 'method', 'params']), exFiles('request'));
      addMessage(`${base}Response`, `${m.name} response (${m.direction === 'agent_to_server' ? 'server → agent' : 'agent → server'})`, {
        title: `${base}Response`,
        oneOf: [envelope(`${base}Success`, { id: ref('JsonRpcId'), result: ref(typeName(named, m.result!)) }, ['id', 'result']), ref('JsonRpcErrorResponse')],
      }, [...exFiles('response'), ...exFiles('error')]);
    } else {
      addMessage(`${base}Notification`, `${m.name} notification (${directionText(m)})`, envelope(`${base}Notification`, { method: { const: m.name }, params: ref(paramsName) }, ['method', 'params']), exFiles('notification'));
    }
    // Operations are described from the agent's point of view.
    const action = m.direction === 'agent_to_server' ? 'send' : 'receive';
    const op: Record<string, unknown> = {
      action,
      channel: { $ref: '#/channels/agent' },
      summary: m.summary,
      description: `PROTOCOL.md#${m.name.replace(/\./g, '')}; ${directionText(m)}; ${m.kind}.${m.errors.length ? ` Errors: ${m.errors.join(', ')}.` : ''}`,
      messages: [{ $ref: `#/channels/agent/messages/${base}${m.kind === 'request' ? 'Request' : 'Notification'}` }],
    };
    if (m.kind === 'request') op['reply'] = { channel: { $ref: '#/channels/agent' }, messages: [{ $ref: `#/channels/agent/messages/${base}Response` }] };
    operations[`${action}${base}`] = op;
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Cortex agent protocol',
      version: protocolVersionOf(contract),
      description: `The agent ↔ server channel: JSON-RPC 2.0 over one WebSocket (subprotocol ${String(contract.limits['subprotocol']?.value)}), one message per text frame. Operations are described from the agent's side: send = agent → server, receive = server → agent.`,
    },
    defaultContentType: 'application/json',
    servers: {
      // No pathname: the channel address is the path (AsyncAPI 3 joins them, so both would double it).
      local: { host: '127.0.0.1:3100', protocol: 'ws', description: 'The reference server on loopback (production: wss behind a TLS-terminating proxy).' },
    },
    channels: {
      agent: {
        address: String(contract.limits['ws_path']?.value),
        title: 'Agent connection',
        description: `One WebSocket per agent, opened with the subprotocol ${String(contract.limits['subprotocol']?.value)} (Sec-WebSocket-Protocol). The first frame is agent.hello.`,
        messages: channelMessages,
        bindings: {
          ws: {
            method: 'GET',
            headers: {
              type: 'object',
              required: ['Sec-WebSocket-Protocol'],
              properties: { 'Sec-WebSocket-Protocol': { type: 'string', const: String(contract.limits['subprotocol']?.value), description: 'The subprotocol the server requires (it answers with the same).' } },
            },
            bindingVersion: '0.1.0',
          },
        },
      },
    },
    operations,
    components: { schemas, messages },
  };
}

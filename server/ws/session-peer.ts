// The generated server peer of one connection, with one difference: agent.hello's params reach
// its handler unvalidated. The handshake checks them itself, in the seed's order (protocol
// version, agent version, token, revoked/rotation, and only then the schema: ./handshake.ts),
// so a schema check in front of it would answer -32602 where the seed wants -32001/-32002/
// -32003/-32005. Everything else (envelope, ids in flight, -32601, the intercept hook, the
// answer and its outgoing check) is the generated runtime's, unchanged; the hello is answered
// by the peer like any other request.
// The envelope check has a fast path (DECISIONS P7): a frame that is certainly a valid
// JSON-RPC request is passed without the generated oneOf validator; anything else goes to it.
import {
  errorFromWire,
  validateJsonRpcMessage,
  type AgentToServer,
  type PeerSettings,
  type ServerPeer,
  type ServerToAgent,
  type Transport,
  type Validator,
} from '@cortex/agent-protocol';
import { Peer, WIRE_METHODS, type MethodSpec } from '@cortex/agent-protocol/runtime';

/** Passes anything: the handshake validates agent.hello params (in its order). */
const checkedByHandshake = ((value: unknown): value is unknown => (void value, true)) as Validator;

const METHODS: readonly MethodSpec[] = WIRE_METHODS.map((m) => (m.name === 'agent.hello' ? { ...m, validateParams: checkedByHandshake } : m));

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * True only when `msg` is certainly a JsonRpcRequest of contract/schemas/jsonrpc.json
 * (jsonrpc "2.0", an integer or string id, a non-empty method, params an object or array or
 * absent, no other member), so that validateJsonRpcMessage accepts it too (a request matches
 * none of the other three branches of its oneOf). False means "not sure": ask the validator.
 */
export function isPlainRequest(msg: unknown): boolean {
  if (msg === null || typeof msg !== 'object' || Array.isArray(msg)) return false;
  const m = msg as Record<string, unknown>;
  let keys = 0;
  for (const k in m) {
    if (!Object.prototype.hasOwnProperty.call(m, k) || !REQUEST_KEYS.has(k)) return false;
    keys++;
  }
  if (m['jsonrpc'] !== '2.0') return false;
  const id = m['id'];
  if (!(typeof id === 'string' || Number.isSafeInteger(id))) return false;
  const method = m['method'];
  if (typeof method !== 'string' || method.length === 0) return false;
  const params = m['params'];
  if (params === undefined) return keys === 3;
  return params !== null && typeof params === 'object';
}

/** validateJsonRpcMessage with the fast path of isPlainRequest; its errors when it was asked. */
const validateEnvelope = ((msg: unknown): boolean => {
  if (isPlainRequest(msg)) return true;
  const ok = validateJsonRpcMessage(msg);
  validateEnvelope.errors = validateJsonRpcMessage.errors;
  return ok;
}) as Validator;

/** createServerPeer with agent.hello params left to the handshake. */
export function createSessionPeer(transport: Transport, settings: PeerSettings): ServerPeer {
  return new Peer<ServerToAgent, AgentToServer>(transport, { errorFactory: errorFromWire, ...settings, methods: METHODS, side: 'server', validateEnvelope });
}

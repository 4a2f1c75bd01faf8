// The generated server peer of one connection, with one difference: agent.hello's params reach
// its handler unvalidated. The handshake checks them itself, in the seed's order (protocol
// version, agent version, token, revoked/rotation, and only then the schema: ./handshake.ts),
// so a schema check in front of it would answer -32602 where the seed wants -32001/-32002/
// -32003/-32005. Everything else (envelope, ids in flight, -32601, the intercept hook, the
// answer and its outgoing check) is the generated runtime's, unchanged; the hello is answered
// by the peer like any other request.
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

/** createServerPeer with agent.hello params left to the handshake. */
export function createSessionPeer(transport: Transport, settings: PeerSettings): ServerPeer {
  return new Peer<ServerToAgent, AgentToServer>(transport, { errorFactory: errorFromWire, ...settings, methods: METHODS, side: 'server', validateEnvelope: validateJsonRpcMessage });
}

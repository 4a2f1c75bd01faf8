/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import { Peer, type PeerOptions, type RequestOptions, type RequestHandler, type NotificationHandler } from "./runtime/peer.js";
import { type Transport } from "./runtime/transport.js";
import type * as T from "./types.js";
import { WIRE_METHODS, type AgentToServer, type ServerToAgent } from "./catalog.js";
import { errorFromWire } from "./errors.js";
import { validateJsonRpcMessage } from "./validators.js";
import { checkProbeOutput } from "./probes.js";

/** A peer on the agent side: sends agent→server methods, receives server→agent methods. */
export type AgentPeer = Peer<AgentToServer, ServerToAgent>;
/** A peer on the server side: sends server→agent methods, receives agent→server methods. */
export type ServerPeer = Peer<ServerToAgent, AgentToServer>;
/** Options of a typed peer; the catalog, envelope validator and typed error factory are filled in. */
export type PeerSettings = Omit<PeerOptions, 'methods' | 'side' | 'validateEnvelope' | 'errorFactory'> & Partial<Pick<PeerOptions, 'errorFactory'>>;

/** A typed JSON-RPC peer for the agent side over any text-frame transport. */
export function createAgentPeer(transport: Transport, settings: PeerSettings = {}): AgentPeer {
  return new Peer(transport, { errorFactory: errorFromWire, checkOutgoingResult: checkProbeOutput, ...settings, methods: WIRE_METHODS, side: 'agent', validateEnvelope: validateJsonRpcMessage });
}

/** Typed caller for the agent side: one method per method the agent sends. Requests resolve to the typed result or reject with an RpcError subclass (the other side's answer) or a PeerError (local: timeout, closed, invalid result); notifications return nothing to await. */
export class AgentClient {
  constructor(public readonly peer: AgentPeer) {
  }

  /**
   * agent.hello (request; PROTOCOL.md#agenthello): Handshake, identity, capability declaration, replay coordination. The first frame on every connection.
   *
   * Errors: -32001, -32002, -32003, -32005, -32600, -32602.
   */
  agentHello(params: T.AgentHelloParams, options?: RequestOptions): Promise<T.AgentHelloResult> {
    return this.peer.request("agent.hello", params, options);
  }

  /** agent.heartbeat (notification; PROTOCOL.md#agentheartbeat): Application-level liveness; updates agents.last_seen and exposes buffer/push pressure. Malformed payloads are logged server-side and dropped. */
  agentHeartbeat(params: T.AgentHeartbeatParams): void {
    this.peer.notify("agent.heartbeat", params);
  }

  /**
   * logs.push (request; PROTOCOL.md#logspush): Ship a contiguous batch of parsed log entries with monotonic seq ordering; the result is the ack (up_to_seq).
   *
   * Errors: -32004, -32007, -32008, -32020, -32030, -32602.
   */
  logsPush(params: T.LogsPushParams, options?: RequestOptions): Promise<T.LogsPushResult> {
    return this.peer.request("logs.push", params, options);
  }

  /**
   * metrics.push (request; PROTOCOL.md#metricspush): Ship per-host metric samples.
   *
   * Errors: -32004, -32008, -32020, -32602.
   */
  metricsPush(params: T.MetricsPushParams, options?: RequestOptions): Promise<T.MetricsPushResult> {
    return this.peer.request("metrics.push", params, options);
  }
}

/** Handlers the agent implements for the methods it receives. Request handlers return the result (or a promise of it) or throw an RpcError subclass; anything else thrown becomes -32603. */
export interface AgentHandlers {
  /** agent.shutdown (notification; PROTOCOL.md#agentshutdown): Planned disconnect (reload, revocation, decommission) so the agent can drain its buffer. On Revoked the agent deletes its token and stops for good. */
  "agent.shutdown": NotificationHandler<T.AgentShutdownParams>;
  /**
   * probe.request (request; PROTOCOL.md#proberequest): Server-initiated probe invocation against the agent's compiled-in registry.
   *
   * Errors: -32010, -32011, -32012, -32602.
   */
  "probe.request": RequestHandler<T.ProbeRequestParams, T.ProbeRequestResult>;
  /** config.update (notification; PROTOCOL.md#configupdate): Hot-reload AgentConfig; the agent validates, diffs and applies (at apply_after if given). Malformed payload: logged and ignored. */
  "config.update": NotificationHandler<T.ConfigUpdateParams>;
}

/** Register the given handlers on a agent peer (methods without a handler answer -32601). */
export function registerAgentHandlers(peer: AgentPeer, handlers: Partial<AgentHandlers>): void {
  if (handlers["agent.shutdown"]) peer.onNotification("agent.shutdown", handlers["agent.shutdown"]);
  if (handlers["probe.request"]) peer.onRequest("probe.request", handlers["probe.request"]);
  if (handlers["config.update"]) peer.onNotification("config.update", handlers["config.update"]);
}

/** A typed JSON-RPC peer for the server side over any text-frame transport. */
export function createServerPeer(transport: Transport, settings: PeerSettings = {}): ServerPeer {
  return new Peer(transport, { errorFactory: errorFromWire, ...settings, methods: WIRE_METHODS, side: 'server', validateEnvelope: validateJsonRpcMessage });
}

/** Typed caller for the server side: one method per method the server sends. Requests resolve to the typed result or reject with an RpcError subclass (the other side's answer) or a PeerError (local: timeout, closed, invalid result); notifications return nothing to await. */
export class ServerClient {
  constructor(public readonly peer: ServerPeer) {
  }

  /** agent.shutdown (notification; PROTOCOL.md#agentshutdown): Planned disconnect (reload, revocation, decommission) so the agent can drain its buffer. On Revoked the agent deletes its token and stops for good. */
  agentShutdown(params: T.AgentShutdownParams): void {
    this.peer.notify("agent.shutdown", params);
  }

  /**
   * probe.request (request; PROTOCOL.md#proberequest): Server-initiated probe invocation against the agent's compiled-in registry.
   *
   * Errors: -32010, -32011, -32012, -32602.
   */
  probeRequest(params: T.ProbeRequestParams, options?: RequestOptions): Promise<T.ProbeRequestResult> {
    return this.peer.request("probe.request", params, options);
  }

  /** config.update (notification; PROTOCOL.md#configupdate): Hot-reload AgentConfig; the agent validates, diffs and applies (at apply_after if given). Malformed payload: logged and ignored. */
  configUpdate(params: T.ConfigUpdateParams): void {
    this.peer.notify("config.update", params);
  }
}

/** Handlers the server implements for the methods it receives. Request handlers return the result (or a promise of it) or throw an RpcError subclass; anything else thrown becomes -32603. */
export interface ServerHandlers {
  /**
   * agent.hello (request; PROTOCOL.md#agenthello): Handshake, identity, capability declaration, replay coordination. The first frame on every connection.
   *
   * Errors: -32001, -32002, -32003, -32005, -32600, -32602.
   */
  "agent.hello": RequestHandler<T.AgentHelloParams, T.AgentHelloResult>;
  /** agent.heartbeat (notification; PROTOCOL.md#agentheartbeat): Application-level liveness; updates agents.last_seen and exposes buffer/push pressure. Malformed payloads are logged server-side and dropped. */
  "agent.heartbeat": NotificationHandler<T.AgentHeartbeatParams>;
  /**
   * logs.push (request; PROTOCOL.md#logspush): Ship a contiguous batch of parsed log entries with monotonic seq ordering; the result is the ack (up_to_seq).
   *
   * Errors: -32004, -32007, -32008, -32020, -32030, -32602.
   */
  "logs.push": RequestHandler<T.LogsPushParams, T.LogsPushResult>;
  /**
   * metrics.push (request; PROTOCOL.md#metricspush): Ship per-host metric samples.
   *
   * Errors: -32004, -32008, -32020, -32602.
   */
  "metrics.push": RequestHandler<T.MetricsPushParams, T.MetricsPushResult>;
}

/** Register the given handlers on a server peer (methods without a handler answer -32601). */
export function registerServerHandlers(peer: ServerPeer, handlers: Partial<ServerHandlers>): void {
  if (handlers["agent.hello"]) peer.onRequest("agent.hello", handlers["agent.hello"]);
  if (handlers["agent.heartbeat"]) peer.onNotification("agent.heartbeat", handlers["agent.heartbeat"]);
  if (handlers["logs.push"]) peer.onRequest("logs.push", handlers["logs.push"]);
  if (handlers["metrics.push"]) peer.onRequest("metrics.push", handlers["metrics.push"]);
}

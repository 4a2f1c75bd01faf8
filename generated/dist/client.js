/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import { Peer } from "./runtime/peer.js";
import { WIRE_METHODS } from "./catalog.js";
import { errorFromWire } from "./errors.js";
import { validateJsonRpcMessage } from "./validators.js";
import { checkProbeOutput } from "./probes.js";
/** A typed JSON-RPC peer for the agent side over any text-frame transport. */
export function createAgentPeer(transport, settings = {}) {
    return new Peer(transport, { errorFactory: errorFromWire, checkOutgoingResult: checkProbeOutput, ...settings, methods: WIRE_METHODS, side: 'agent', validateEnvelope: validateJsonRpcMessage });
}
/** Typed caller for the agent side: one method per method the agent sends. Requests resolve to the typed result or reject with an RpcError subclass (the other side's answer) or a PeerError (local: timeout, closed, invalid result); notifications return nothing to await. */
export class AgentClient {
    peer;
    constructor(peer) {
        this.peer = peer;
    }
    /**
     * agent.hello (request; PROTOCOL.md#agenthello): Handshake, identity, capability declaration, replay coordination. The first frame on every connection.
     *
     * Errors: -32001, -32002, -32003, -32005, -32600, -32602.
     */
    agentHello(params, options) {
        return this.peer.request("agent.hello", params, options);
    }
    /** agent.heartbeat (notification; PROTOCOL.md#agentheartbeat): Application-level liveness; updates agents.last_seen and exposes buffer/push pressure. Malformed payloads are logged server-side and dropped. */
    agentHeartbeat(params) {
        this.peer.notify("agent.heartbeat", params);
    }
    /**
     * logs.push (request; PROTOCOL.md#logspush): Ship a contiguous batch of parsed log entries with monotonic seq ordering; the result is the ack (up_to_seq).
     *
     * Errors: -32004, -32007, -32008, -32020, -32030, -32602.
     */
    logsPush(params, options) {
        return this.peer.request("logs.push", params, options);
    }
    /**
     * metrics.push (request; PROTOCOL.md#metricspush): Ship per-host metric samples.
     *
     * Errors: -32004, -32008, -32020, -32602.
     */
    metricsPush(params, options) {
        return this.peer.request("metrics.push", params, options);
    }
}
/** Register the given handlers on a agent peer (methods without a handler answer -32601). */
export function registerAgentHandlers(peer, handlers) {
    if (handlers["agent.shutdown"])
        peer.onNotification("agent.shutdown", handlers["agent.shutdown"]);
    if (handlers["probe.request"])
        peer.onRequest("probe.request", handlers["probe.request"]);
    if (handlers["config.update"])
        peer.onNotification("config.update", handlers["config.update"]);
}
/** A typed JSON-RPC peer for the server side over any text-frame transport. */
export function createServerPeer(transport, settings = {}) {
    return new Peer(transport, { errorFactory: errorFromWire, ...settings, methods: WIRE_METHODS, side: 'server', validateEnvelope: validateJsonRpcMessage });
}
/** Typed caller for the server side: one method per method the server sends. Requests resolve to the typed result or reject with an RpcError subclass (the other side's answer) or a PeerError (local: timeout, closed, invalid result); notifications return nothing to await. */
export class ServerClient {
    peer;
    constructor(peer) {
        this.peer = peer;
    }
    /** agent.shutdown (notification; PROTOCOL.md#agentshutdown): Planned disconnect (reload, revocation, decommission) so the agent can drain its buffer. On Revoked the agent deletes its token and stops for good. */
    agentShutdown(params) {
        this.peer.notify("agent.shutdown", params);
    }
    /**
     * probe.request (request; PROTOCOL.md#proberequest): Server-initiated probe invocation against the agent's compiled-in registry.
     *
     * Errors: -32010, -32011, -32012, -32602.
     */
    probeRequest(params, options) {
        return this.peer.request("probe.request", params, options);
    }
    /** config.update (notification; PROTOCOL.md#configupdate): Hot-reload AgentConfig; the agent validates, diffs and applies (at apply_after if given). Malformed payload: logged and ignored. */
    configUpdate(params) {
        this.peer.notify("config.update", params);
    }
}
/** Register the given handlers on a server peer (methods without a handler answer -32601). */
export function registerServerHandlers(peer, handlers) {
    if (handlers["agent.hello"])
        peer.onRequest("agent.hello", handlers["agent.hello"]);
    if (handlers["agent.heartbeat"])
        peer.onNotification("agent.heartbeat", handlers["agent.heartbeat"]);
    if (handlers["logs.push"])
        peer.onRequest("logs.push", handlers["logs.push"]);
    if (handlers["metrics.push"])
        peer.onRequest("metrics.push", handlers["metrics.push"]);
}

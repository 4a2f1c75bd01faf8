/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import * as V from './validators.js';
/**
 * The method catalog, in contract order.
 */
export const METHOD_CATALOG = [
    {
        name: "agent.hello",
        section: "4.1",
        direction: "agent_to_server",
        kind: "request",
        summary: "Handshake, identity, capability declaration, replay coordination. The first frame on every connection.",
        errors: [-32001, -32002, -32003, -32005, -32600, -32602],
        paramsSchema: "agent.hello.params.json",
        resultSchema: "agent.hello.result.json",
        validateParams: V.validateAgentHelloParams,
        validateResult: V.validateAgentHelloResult,
    },
    {
        name: "agent.heartbeat",
        section: "4.2",
        direction: "agent_to_server",
        kind: "notification",
        summary: "Application-level liveness; updates agents.last_seen and exposes buffer/push pressure. Malformed payloads are logged server-side and dropped.",
        errors: [],
        paramsSchema: "agent.heartbeat.params.json",
        resultSchema: null,
        validateParams: V.validateAgentHeartbeatParams,
        validateResult: undefined,
    },
    {
        name: "agent.shutdown",
        section: "4.3",
        direction: "server_to_agent",
        kind: "notification",
        summary: "Planned disconnect (reload, revocation, decommission) so the agent can drain its buffer. On Revoked the agent deletes its token and stops for good.",
        errors: [],
        paramsSchema: "agent.shutdown.params.json",
        resultSchema: null,
        validateParams: V.validateAgentShutdownParams,
        validateResult: undefined,
    },
    {
        name: "logs.push",
        section: "4.4",
        direction: "agent_to_server",
        kind: "request",
        summary: "Ship a contiguous batch of parsed log entries with monotonic seq ordering; the result is the ack (up_to_seq).",
        errors: [-32004, -32007, -32008, -32020, -32030, -32602],
        paramsSchema: "logs.push.params.json",
        resultSchema: "logs.push.result.json",
        validateParams: V.validateLogsPushParams,
        validateResult: V.validateLogsPushResult,
    },
    {
        name: "metrics.push",
        section: "4.5",
        direction: "agent_to_server",
        kind: "request",
        summary: "Ship per-host metric samples.",
        errors: [-32004, -32008, -32020, -32602],
        paramsSchema: "metrics.push.params.json",
        resultSchema: "metrics.push.result.json",
        validateParams: V.validateMetricsPushParams,
        validateResult: V.validateMetricsPushResult,
    },
    {
        name: "probe.request",
        section: "4.6",
        direction: "server_to_agent",
        kind: "request",
        summary: "Server-initiated probe invocation against the agent's compiled-in registry.",
        errors: [-32010, -32011, -32012, -32602],
        paramsSchema: "probe.request.params.json",
        resultSchema: "probe.request.result.json",
        validateParams: V.validateProbeRequestParams,
        validateResult: V.validateProbeRequestResult,
    },
    {
        name: "probe.response",
        section: "4.7",
        direction: "agent_to_server",
        kind: "response",
        responseTo: "probe.request",
        summary: "The JSON-RPC response to a probe.request, correlated by id. Not a method on the wire.",
        errors: [-32010, -32011, -32012, -32602],
        paramsSchema: null,
        resultSchema: "probe.request.result.json",
        validateParams: undefined,
        validateResult: V.validateProbeRequestResult,
    },
    {
        name: "config.update",
        section: "4.8",
        direction: "server_to_agent",
        kind: "notification",
        summary: "Hot-reload AgentConfig; the agent validates, diffs and applies (at apply_after if given). Malformed payload: logged and ignored.",
        errors: [],
        paramsSchema: "config.update.params.json",
        resultSchema: null,
        validateParams: V.validateConfigUpdateParams,
        validateResult: undefined,
    },
];
/**
 * The methods that travel on the wire with a name, as the peer runtime needs them.
 */
export const WIRE_METHODS = /* @__PURE__ */ METHOD_CATALOG.flatMap((m) => m.kind === 'response' || !m.validateParams ? [] : [{ name: m.name, direction: m.direction, kind: m.kind, validateParams: m.validateParams, ...(m.validateResult ? { validateResult: m.validateResult } : {}) }]);

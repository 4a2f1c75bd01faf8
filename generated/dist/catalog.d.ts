/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
import type * as T from './types.js';
import type { Direction, MethodSpec, Validator } from './runtime/peer.js';
export type MethodName = "agent.hello" | "agent.heartbeat" | "agent.shutdown" | "logs.push" | "metrics.push" | "probe.request" | "probe.response" | "config.update";
/**
 * One entry of the method catalog (PROTOCOL.md, "Methods").
 */
export interface MethodInfo {
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
/**
 * The method catalog, in contract order.
 */
export declare const METHOD_CATALOG: readonly MethodInfo[];
/**
 * The methods that travel on the wire with a name, as the peer runtime needs them.
 */
export declare const WIRE_METHODS: readonly MethodSpec[];
/**
 * Methods sent by the agent to the server: requests (params and result) and notifications (params).
 */
export interface AgentToServer {
    requests: {
        "agent.hello": {
            params: T.AgentHelloParams;
            result: T.AgentHelloResult;
        };
        "logs.push": {
            params: T.LogsPushParams;
            result: T.LogsPushResult;
        };
        "metrics.push": {
            params: T.MetricsPushParams;
            result: T.MetricsPushResult;
        };
    };
    notifications: {
        "agent.heartbeat": T.AgentHeartbeatParams;
    };
}
/**
 * Methods sent by the server to the agent: requests (params and result) and notifications (params).
 */
export interface ServerToAgent {
    requests: {
        "probe.request": {
            params: T.ProbeRequestParams;
            result: T.ProbeRequestResult;
        };
    };
    notifications: {
        "agent.shutdown": T.AgentShutdownParams;
        "config.update": T.ConfigUpdateParams;
    };
}

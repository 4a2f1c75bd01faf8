/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * Agent-side connection state machine (PROTOCOL.md#agent-connection-state-machine). -32005 TokenRotationRequired leads to FatalAuth like -32001 and -32003.
 */
export type AgentState = "Disconnected" | "Connecting" | "Authenticating" | "Active" | "Draining" | "Reconnecting" | "FatalAuth" | "Revoked";
export type AgentEvent = "start" | "upgrade_ok" | "upgrade_failed" | "hello_accepted" | "auth_fatal" | "token_revoked" | "handshake_failed" | "shutdown" | "shutdown_revoked" | "connection_lost" | "drained" | "backoff_elapsed";
export interface AgentTransition {
    readonly from: AgentState;
    readonly to: AgentState;
    readonly event: AgentEvent;
    readonly description: string;
    /** Error codes that cause this transition, where the contract names them. */
    readonly errors?: readonly number[];
}
export declare const AGENT_STATE_MACHINE: {
    readonly initial: AgentState;
    readonly states: readonly [{
        readonly name: AgentState;
        readonly description: "Not connected; nothing in flight.";
        readonly terminal: false;
    }, {
        readonly name: AgentState;
        readonly description: "Opening the WebSocket with subprotocol cortex.v1.";
        readonly terminal: false;
    }, {
        readonly name: AgentState;
        readonly description: "Upgrade done; agent.hello sent, waiting for HelloResult.";
        readonly terminal: false;
    }, {
        readonly name: AgentState;
        readonly description: "Hello accepted: streaming logs, heartbeats, metrics; answering probes.";
        readonly terminal: false;
    }, {
        readonly name: AgentState;
        readonly description: "agent.shutdown received (not Revoked): flushing the buffer within drain_seconds.";
        readonly terminal: false;
    }, {
        readonly name: AgentState;
        readonly description: "Waiting for the full-jitter backoff delay.";
        readonly terminal: false;
    }, {
        readonly name: AgentState;
        readonly description: "Authentication failed for good; operator intervention needed.";
        readonly terminal: true;
    }, {
        readonly name: AgentState;
        readonly description: "Token revoked; token file deleted; never reconnects.";
        readonly terminal: true;
    }];
    readonly transitions: readonly AgentTransition[];
};
/**
 * The state an event leads to, or undefined when the contract has no such transition.
 */
export declare function nextAgentState(from: AgentState, event: AgentEvent): AgentState | undefined;
/**
 * True for FatalAuth and Revoked: no way out but operator intervention.
 */
export declare function isTerminalState(state: AgentState): boolean;

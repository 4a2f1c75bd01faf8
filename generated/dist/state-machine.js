/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
export const AGENT_STATE_MACHINE = {
    initial: "Disconnected",
    states: [
        { name: "Disconnected", description: "Not connected; nothing in flight.", terminal: false },
        { name: "Connecting", description: "Opening the WebSocket with subprotocol cortex.v1.", terminal: false },
        { name: "Authenticating", description: "Upgrade done; agent.hello sent, waiting for HelloResult.", terminal: false },
        { name: "Active", description: "Hello accepted: streaming logs, heartbeats, metrics; answering probes.", terminal: false },
        { name: "Draining", description: "agent.shutdown received (not Revoked): flushing the buffer within drain_seconds.", terminal: false },
        { name: "Reconnecting", description: "Waiting for the full-jitter backoff delay.", terminal: false },
        { name: "FatalAuth", description: "Authentication failed for good; operator intervention needed.", terminal: true },
        { name: "Revoked", description: "Token revoked; token file deleted; never reconnects.", terminal: true },
    ],
    transitions: [
        { from: "Disconnected", to: "Connecting", event: "start", description: "start / reconnect timer fired" },
        { from: "Connecting", to: "Authenticating", event: "upgrade_ok", description: "WS upgrade ok (subprotocol confirmed)" },
        { from: "Connecting", to: "Reconnecting", event: "upgrade_failed", description: "upgrade failed (HTTP error, TLS error, DNS)" },
        { from: "Authenticating", to: "Active", event: "hello_accepted", description: "agent.hello accepted (HelloResult received)" },
        { from: "Authenticating", to: "FatalAuth", event: "auth_fatal", description: "-32001 / -32003 (no retry; alert); -32005: re-enroll", errors: [-32001, -32003, -32005] },
        { from: "Authenticating", to: "Revoked", event: "token_revoked", description: "-32002 (delete token; terminal)", errors: [-32002] },
        { from: "Authenticating", to: "Reconnecting", event: "handshake_failed", description: "handshake timeout / io error pre-hello" },
        { from: "Active", to: "Draining", event: "shutdown", description: "agent.shutdown received (reason != Revoked)" },
        { from: "Active", to: "Revoked", event: "shutdown_revoked", description: "agent.shutdown { reason: Revoked }" },
        { from: "Active", to: "Reconnecting", event: "connection_lost", description: "WS close / io error / missed pongs" },
        { from: "Draining", to: "Reconnecting", event: "drained", description: "drain_seconds elapsed or buffer empty" },
        { from: "Reconnecting", to: "Connecting", event: "backoff_elapsed", description: "backoff delay elapsed" },
    ],
};
/**
 * The state an event leads to, or undefined when the contract has no such transition.
 */
export function nextAgentState(from, event) {
    return AGENT_STATE_MACHINE.transitions.find((t) => t.from === from && t.event === event)?.to;
}
/**
 * True for FatalAuth and Revoked: no way out but operator intervention.
 */
export function isTerminalState(state) {
    return AGENT_STATE_MACHINE.states.some((s) => s.name === state && s.terminal);
}

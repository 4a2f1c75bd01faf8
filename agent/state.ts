// The connection state machine, driven only by the contract's data (seed 6 as
// generated in AGENT_STATE_MACHINE): a transition the contract does not list is
// refused (returns null and changes nothing), never improvised.
//
// Where session.ts fires each event:
//   Disconnected -start-> Connecting -upgrade_ok-> Authenticating -hello_accepted-> Active
//   Connecting -upgrade_failed-> Reconnecting          (HTTP error, TLS/DNS, no cortex.v1)
//   Authenticating -auth_fatal-> FatalAuth              (error codes from the data: -32001/-32003/-32005)
//   Authenticating -token_revoked-> Revoked             (-32002: token file deleted)
//   Authenticating -handshake_failed-> Reconnecting     (timeout, io error, close)
//   Active -shutdown-> Draining -drained-> Reconnecting (ServerReload/Decommission)
//   Active -shutdown_revoked-> Revoked                  (token file deleted)
//   Active -connection_lost-> Reconnecting              (close, io error, ping watchdog)
//   Reconnecting -backoff_elapsed-> Connecting          (full-jitter backoff)

import { AGENT_STATE_MACHINE, isTerminalState, nextAgentState, type AgentEvent, type AgentState } from '@cortex/agent-protocol';

export interface Transition {
  from: AgentState;
  to: AgentState;
  event: AgentEvent;
  at: number;
}

export class StateMachine {
  private current: AgentState = AGENT_STATE_MACHINE.initial;
  readonly history: Transition[] = [];

  constructor(
    private readonly onTransition: (t: Transition) => void = () => undefined,
    private readonly onRefused: (from: AgentState, event: AgentEvent) => void = () => undefined,
  ) {}

  get state(): AgentState {
    return this.current;
  }

  get terminal(): boolean {
    return isTerminalState(this.current);
  }

  /** Can `event` happen in the current state? */
  can(event: AgentEvent): boolean {
    return nextAgentState(this.current, event) !== undefined;
  }

  /** Applies `event`; returns the transition, or null when the contract has none. */
  fire(event: AgentEvent): Transition | null {
    const to = nextAgentState(this.current, event);
    if (to === undefined) {
      this.onRefused(this.current, event);
      return null;
    }
    const t: Transition = { from: this.current, to, event, at: Date.now() };
    this.current = to;
    this.history.push(t);
    if (this.history.length > 200) this.history.splice(0, this.history.length - 200);
    this.onTransition(t);
    return t;
  }
}

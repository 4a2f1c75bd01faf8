/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * @cortex/agent-protocol: the Cortex agent protocol V1 for TypeScript and JavaScript
 * (README.md). Lower-level building blocks are in @cortex/agent-protocol/runtime.
 */
export * from './types.js';
export * from './validators.js';
export * from './errors.js';
export * from './constants.js';
export * from './state-machine.js';
export * from './client.js';
export { METHOD_CATALOG, type MethodName, type MethodInfo, type AgentToServer, type ServerToAgent } from './catalog.js';
export { PROBES, type ProbeTypes, type ProbeName, type ProbeInfo, type ProbeSchema } from './probes.js';
export { RpcError, PeerError, toIssues, describeIssues, type RpcErrorObject, type PeerErrorCode, type ValidationIssue, type SchemaErrorLike } from './runtime/errors.js';
export { type Validator, type Direction, type RpcId, type CallContext, type RequestHandler, type NotificationHandler, type PeerEvent, type IncomingCall, type PeerOptions, type AbortSignalLike, type RequestOptions } from './runtime/peer.js';
export { webSocketTransport, memoryTransportPair, type Frame, type Transport, type WebSocketLike } from './runtime/transport.js';

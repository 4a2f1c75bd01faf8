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
export { METHOD_CATALOG } from './catalog.js';
export { PROBES } from './probes.js';
export { RpcError, PeerError, toIssues, describeIssues } from './runtime/errors.js';
export { webSocketTransport, memoryTransportPair } from './runtime/transport.js';

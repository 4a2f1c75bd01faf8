/*
 * @generated
 * Generated from contract/ by codegen; do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
/**
 * @cortex/agent-protocol/runtime: the peer runtime and the shared rules under the main
 * entry, for code that builds its own peer (README.md, "The runtime subpath").
 */
export * from './runtime/peer.js';
export * from './runtime/errors.js';
export * from './runtime/transport.js';
export * from './runtime/entry-guard.js';
export * from './runtime/frame-json.js';
export { WIRE_METHODS } from './catalog.js';
export { checkProbeOutput } from './probes.js';

/*
 * Generated from contract/ by codegen — do not edit.
 * Change the contract (or codegen/) and run `npm run codegen` instead.
 */
export * from './types.js';
export * from './validators.js';
export * from './catalog.js';
export * from './errors.js';
export * from './constants.js';
export * from './state-machine.js';
export * from './probes.js';
export * from './client.js';
export * from './runtime/peer.js';
export * from './runtime/errors.js';
export * from './runtime/transport.js';
export * from './runtime/entry-guard.js';

// What the contract diff reports (contract-diff.ts). Imports nothing.

export type ChangeKind = 'breaking' | 'additive';

export interface Change {
  kind: ChangeKind;
  /** Short rule name, e.g. "method-removed", "type-narrowed". */
  rule: string;
  /** Location: "methods.json:agent.hello", "schemas/defs.json#/$defs/LogBatchEntry/properties/seq", "limits.json:max_frame_bytes". */
  where: string;
  detail: string;
}

export interface DiffResult {
  changes: Change[];
  breaking: number;
  additive: number;
  /** Breaking changes are allowed: protocol_version and subprotocol were bumped together. */
  allowed: boolean;
  exit_code: 0 | 1;
}

// Syslog severities, most severe first: the contract's Severity enum (from the generated
// package's schemas, bundled at build time).
import type { Severity } from '@cortex/agent-protocol';
import defs from '@cortex/agent-protocol/schemas/defs.json';

export const SEVERITIES: readonly Severity[] = defs.$defs.Severity.enum as Severity[];

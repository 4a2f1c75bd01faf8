#!/usr/bin/env node
// Placeholder until the conformance runner lands (issue 7).
process.stderr.write('cortex-conformance: not implemented yet\n');
process.exitCode = 1;

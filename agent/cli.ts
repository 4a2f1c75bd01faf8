#!/usr/bin/env node
// Placeholder until the reference agent lands (issue 5).
process.stderr.write('cortex-agent: the reference agent is not implemented yet (see the open issues).\n');
process.exitCode = 1;

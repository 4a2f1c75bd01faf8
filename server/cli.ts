#!/usr/bin/env node
// Placeholder until the reference server lands (issue 3).
process.stderr.write('cortex-server: the reference server is not implemented yet (see the open issues).\n');
process.exitCode = 1;

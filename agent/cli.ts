#!/usr/bin/env node
// The cortex-agent executable (bin/cortex-agent.js, packaging/package.mjs): the commands are
// in cli-main.ts, whose runCli a site-specific build calls with its own probes instead of this file.
import { runCli } from './cli-main.js';

runCli();

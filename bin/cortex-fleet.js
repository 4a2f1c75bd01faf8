#!/usr/bin/env node
import '../dist/fleet/cli.js';

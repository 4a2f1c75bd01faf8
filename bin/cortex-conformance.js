#!/usr/bin/env node
import '../dist/conformance/cli.js';

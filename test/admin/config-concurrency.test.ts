// Optimistic concurrency of config edits on SQLite (DECISIONS J13): see ./config-concurrency-suite.ts.
import { configConcurrencySuite } from './config-concurrency-suite.js';

configConcurrencySuite('sqlite');

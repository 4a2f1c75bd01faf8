// Optimistic concurrency of config edits on PostgreSQL, two servers on one database
// (DECISIONS J13): see ./config-concurrency-suite.ts.
import { configConcurrencySuite } from './config-concurrency-suite.js';

configConcurrencySuite('postgres');

// Sign-out ends a console session on the server, on PostgreSQL with two servers on one
// database (DECISIONS J14): see ./sign-out-suite.ts.
import { signOutSuite } from './sign-out-suite.js';

signOutSuite('postgres');

// Sign-out ends a console session on the server, on SQLite (DECISIONS J14): see ./sign-out-suite.ts.
import { signOutSuite } from './sign-out-suite.js';

signOutSuite('sqlite');

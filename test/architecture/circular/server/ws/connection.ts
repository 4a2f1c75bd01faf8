// Fixture: a connection that needs its context's type…
import type { ServerContext } from './context.js';
export class Connection {
  constructor(readonly ctx: ServerContext) {}
}

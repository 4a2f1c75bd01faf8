// …and a context that names the connection back: an import circle (type-only imports count), no-circular.
import type { Connection } from './connection.js';
export interface ServerContext {
  register(conn: Connection): void;
}

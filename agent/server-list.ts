// The servers an agent may connect to (agent.json `server_urls`, `enroll --server` repeated),
// as Elastic Agent's list of Fleet Server hosts: several servers on one database, no load
// balancer needed. One URL behind a load balancer is the list of one.
//
// Each connection attempt takes the next URL of a shuffled order (a fleet spreads over the
// servers instead of all trying the first); when the order is used up a new one is drawn.
// When a session that reached Active ends, a fresh order is drawn with the server just left
// moved to its end: a server that died or is draining (SIGTERM sends agent.shutdown
// ServerReload) is tried last, so its agents move to the others. The full-jitter backoff
// between attempts is the caller's (backoff.ts); this module only says where to go.
//
// A server that refuses the host for good (-32001, -32003, -32005: DECISIONS F12) is left out
// of the next attempts while another has not refused it too: one server on another database,
// or behind the others' upgrade, does not stop an agent the others take. Refusals are
// forgotten once a hello is accepted.
//
// Imports nothing: a pure module, tested directly (test/agent/server-list.test.ts).

export class ServerList {
  readonly urls: readonly string[];
  private readonly random: () => number;
  private order: string[] = [];
  private current: string | null = null;
  /** Servers that refused the host for good since the last accepted hello. */
  private readonly refusing = new Set<string>();

  /** `urls`: at least one; duplicates are dropped (first occurrence kept). */
  constructor(urls: readonly string[], random: () => number = Math.random) {
    const unique = [...new Set(urls)];
    if (unique.length === 0) throw new RangeError('ServerList needs at least one server URL');
    this.urls = unique;
    this.random = random;
  }

  /** The URL of the latest attempt (the server held while a session is open); null before the first. */
  get held(): string | null {
    return this.current;
  }

  /** The URL for the next connection attempt: one that has not refused the host, while there is one. */
  next(): string {
    if (this.order.length === 0 || this.order.every((u) => this.refusing.has(u))) this.order = this.shuffled(null);
    const i = Math.max(0, this.order.findIndex((u) => !this.refusing.has(u)));
    const url = this.order.splice(i, 1)[0]!;
    this.current = url;
    return url;
  }

  /**
   * `held` refused the host for good. Returns how many of the servers have since the last
   * accepted hello: when that is all of them, the refusal is the agent's answer.
   */
  refusedByHeld(): number {
    if (this.current !== null) this.refusing.add(this.current);
    return this.refusing.size;
  }

  /** A hello was accepted: a server that refused before is worth trying again. */
  accepted(): void {
    this.refusing.clear();
  }

  /**
   * A session that reached Active on `held` ended (closed, drained, server gone): the next
   * attempts follow a fresh shuffled order that tries that server last.
   */
  sessionEnded(): void {
    this.order = this.shuffled(this.current);
  }

  /** Fisher-Yates over the URLs; `last`, when given and one of several, goes to the end. */
  private shuffled(last: string | null): string[] {
    const rest = this.urls.filter((u) => this.urls.length === 1 || u !== last);
    for (let i = rest.length - 1; i > 0; i--) {
      const j = Math.min(i, Math.floor(this.random() * (i + 1)));
      [rest[i], rest[j]] = [rest[j]!, rest[i]!];
    }
    if (last !== null && this.urls.length > 1 && this.urls.includes(last)) rest.push(last);
    return rest;
  }
}

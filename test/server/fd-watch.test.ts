// The descriptor watch (DECISIONS H10, G14): logs near the limit, and lists /proc/self/fd
// rarely enough that a server with most of its descriptors in use is not busy listing them.
import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FdWatch } from '../../server/security/fd-watch.js';

interface Logged {
  obj: object;
  msg: string;
}

let logged: Logged[];
const logger = { error: (obj: object, msg: string) => void logged.push({ obj, msg }) };
beforeEach(() => {
  logged = [];
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A watch whose listing returns `base` + the sockets open; counts its listings. */
function watch(limit: number, base: number) {
  const sockets: EventEmitter[] = [];
  let listings = 0;
  const open = () => base + sockets.length;
  const w = new FdWatch(logger, {
    limit,
    countOpen: () => {
      listings++;
      return open();
    },
  });
  return {
    w,
    listings: () => listings,
    connect(n: number) {
      for (let i = 0; i < n; i++) {
        const s = new EventEmitter();
        sockets.push(s);
        w.connection(s);
      }
    },
    closeAll() {
      for (const s of sockets.splice(0)) s.emit('close');
    },
  };
}

describe('FdWatch', () => {
  it('near the limit, a burst of connections lists the descriptors once a second, not once per connection', () => {
    const t = watch(20_000, 15_000); // 75 % in use (15,000 agents connected)
    t.connect(2_000);
    expect(t.listings()).toBe(1);
    vi.advanceTimersByTime(999);
    t.connect(500);
    expect(t.listings()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(t.listings()).toBe(2); // the listing put off during the burst
    t.connect(100);
    expect(t.listings()).toBe(2);
    expect(logged).toHaveLength(0); // 17,600 open < 90 %
  });

  it('far from the limit it lists at most every 10 s', () => {
    const t = watch(20_000, 50);
    t.connect(5_000);
    expect(t.listings()).toBe(1);
    vi.advanceTimersByTime(9_999);
    t.connect(1);
    expect(t.listings()).toBe(1);
    vi.advanceTimersByTime(1);
    t.connect(1);
    expect(t.listings()).toBe(2);
  });

  it('a burst that reaches the limit is logged within a second though no connection comes after it (libuv drops them unseen)', () => {
    const t = watch(256, 30);
    t.connect(226); // 256 open: at the limit
    expect(logged).toHaveLength(0); // the first listing saw 31
    vi.advanceTimersByTime(1_000);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.msg).toContain('file-descriptor limit is reached');
    expect(logged[0]!.msg).toContain('LimitNOFILE');
    expect(logged[0]!.obj).toMatchObject({ open_fds: 256, fd_limit: 256, sockets: 226 });
    // at most one line every 10 s
    vi.advanceTimersByTime(1_000);
    t.connect(1);
    vi.advanceTimersByTime(1_000);
    expect(logged).toHaveLength(1);
  });

  it('sockets that close lower the estimate: back below 75 %, the listings space out again', () => {
    const t = watch(1_000, 100);
    t.connect(700); // estimate 801
    vi.advanceTimersByTime(1_000);
    expect(t.listings()).toBe(2);
    expect(t.w.estimate()).toBe(800);
    t.closeAll();
    expect(t.w.estimate()).toBe(100);
    vi.advanceTimersByTime(2_000);
    t.connect(1);
    expect(t.listings()).toBe(2); // 3 s after the last listing, far from the limit: none
  });

  it('a listing that fails for want of a descriptor (EMFILE) is the limit itself, and is logged', () => {
    let full = false;
    const w = new FdWatch(logger, {
      limit: 100,
      countOpen: () => {
        if (full) throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
        return 10;
      },
    });
    w.connection(new EventEmitter());
    full = true;
    for (let i = 0; i < 90; i++) w.connection(new EventEmitter());
    vi.advanceTimersByTime(1_000);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.obj).toMatchObject({ open_fds: 100, fd_limit: 100 });
  });

  it('does nothing without a limit (not Linux)', () => {
    const w = new FdWatch(logger, { limit: undefined, countOpen: () => expect.unreachable() as never });
    w.connection(new EventEmitter());
    vi.advanceTimersByTime(20_000);
    expect(logged).toHaveLength(0);
  });
});

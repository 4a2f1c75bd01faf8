// A raw WebSocket client on a plain TCP socket, for frames a well-behaved library will
// not send: invalid UTF-8, unmasked frames, reserved opcodes, lying length headers,
// trickled bytes. Parses the server's frames (text, close) for assertions.
import net from 'node:net';
import { randomBytes } from 'node:crypto';

export interface RawFrame {
  opcode: number;
  fin: boolean;
  payload: Buffer;
}

export interface UpgradeOptions {
  path?: string;
  protocol?: string | null;
  headers?: Record<string, string>;
  /** Answer the server's pings (default true, like any client; false = a peer that never pongs). */
  autoPong?: boolean;
  /** Write the request this many bytes at a time, every `trickleMs`. */
  trickleBytes?: number;
  trickleMs?: number;
}

export interface FrameOptions {
  fin?: boolean;
  mask?: boolean;
  rsv?: number;
  /** Length to declare in the header instead of the payload's (a lying header). */
  declaredLength?: number;
}

export function encodeFrame(opcode: number, payload: Buffer, o: FrameOptions = {}): Buffer {
  const fin = o.fin ?? true;
  const mask = o.mask ?? true;
  const len = o.declaredLength ?? payload.length;
  const head: number[] = [(fin ? 0x80 : 0) | ((o.rsv ?? 0) << 4) | (opcode & 0x0f)];
  const m = mask ? 0x80 : 0;
  if (len < 126) head.push(m | len);
  else if (len < 65536) head.push(m | 126, (len >> 8) & 0xff, len & 0xff);
  else {
    head.push(m | 127);
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(len));
    head.push(...b);
  }
  if (!mask) return Buffer.concat([Buffer.from(head), payload]);
  const key = randomBytes(4);
  const body = Buffer.alloc(payload.length);
  for (let i = 0; i < payload.length; i++) body[i] = payload[i]! ^ key[i % 4]!;
  return Buffer.concat([Buffer.from(head), key, body]);
}

export class RawWs {
  readonly frames: RawFrame[] = [];
  status = 0;
  responseHead = '';
  closeCode: number | null = null;
  closeReason = '';
  /** Resolves when the TCP connection is gone. */
  readonly ended: Promise<void>;
  private buf = Buffer.alloc(0);
  private upgraded = false;
  private waiters: (() => void)[] = [];
  autoPong = true;

  private constructor(readonly socket: net.Socket) {
    this.ended = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', () => undefined);
    socket.on('close', () => this.wake());
  }

  /** Opens TCP and performs the upgrade; resolves once the HTTP response head is in (any status). */
  static async connect(port: number, o: UpgradeOptions = {}): Promise<RawWs> {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('error', reject);
    });
    const ws = new RawWs(socket);
    ws.autoPong = o.autoPong ?? true;
    const protocol = o.protocol === undefined ? 'cortex.v1' : o.protocol;
    const lines = [
      `GET ${o.path ?? '/ws/agent'} HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      ...(protocol !== null ? [`Sec-WebSocket-Protocol: ${protocol}`] : []),
      ...Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}`),
      '',
      '',
    ];
    const req = Buffer.from(lines.join('\r\n'));
    if (o.trickleBytes) {
      for (let i = 0; i < req.length && !socket.destroyed; i += o.trickleBytes) {
        socket.write(req.subarray(i, i + o.trickleBytes));
        await new Promise((r) => setTimeout(r, o.trickleMs ?? 100));
      }
    } else socket.write(req);
    await ws.until(() => ws.status !== 0 || socket.destroyed, 10_000);
    return ws;
  }

  get open(): boolean {
    return this.upgraded && !this.socket.destroyed;
  }

  send(opcode: number, payload: Buffer | string, o: FrameOptions = {}): void {
    if (this.socket.destroyed) return;
    this.socket.write(encodeFrame(opcode, typeof payload === 'string' ? Buffer.from(payload) : payload, o));
  }

  text(s: string | Buffer): void {
    this.send(1, s);
  }

  writeRaw(b: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(b);
  }

  /** Text messages received, parsed as JSON when they parse. */
  messages(): unknown[] {
    return this.frames
      .filter((f) => f.opcode === 1)
      .map((f) => {
        try {
          return JSON.parse(f.payload.toString()) as unknown;
        } catch {
          return f.payload.toString();
        }
      });
  }

  /** Waits (bounded) for cond to hold; re-checked on every frame and on close. */
  async until(cond: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return true;
  }

  /** Waits for the server's close frame or the TCP end; returns the close code (null if none). */
  async closed(timeoutMs: number): Promise<number | null> {
    await this.until(() => this.closeCode !== null || this.socket.destroyed, timeoutMs);
    return this.closeCode;
  }

  destroy(): void {
    this.socket.destroy();
  }

  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private onData(d: Buffer): void {
    this.buf = Buffer.concat([this.buf, d]);
    if (!this.upgraded && this.status === 0) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      this.responseHead = this.buf.subarray(0, end).toString();
      this.status = Number(/^HTTP\/1\.1 (\d+)/.exec(this.responseHead)?.[1] ?? 0);
      this.buf = this.buf.subarray(end + 4);
      this.upgraded = this.status === 101;
      if (!this.upgraded) {
        this.wake();
        return;
      }
    }
    for (;;) {
      if (this.buf.length < 2) break;
      const b0 = this.buf[0]!;
      const b1 = this.buf[1]!;
      let len = b1 & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) break;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) break;
        len = Number(this.buf.readBigUInt64BE(2));
        off = 10;
      }
      if (this.buf.length < off + len) break;
      const frame = { opcode: b0 & 0x0f, fin: (b0 & 0x80) !== 0, payload: Buffer.from(this.buf.subarray(off, off + len)) };
      this.buf = this.buf.subarray(off + len);
      this.frames.push(frame);
      if (frame.opcode === 9 && this.autoPong) this.send(10, frame.payload);
      if (frame.opcode === 8) {
        this.closeCode = frame.payload.length >= 2 ? frame.payload.readUInt16BE(0) : 1005;
        this.closeReason = frame.payload.subarray(2).toString();
      }
    }
    this.wake();
  }
}

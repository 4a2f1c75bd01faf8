// The TLS certificate of a running server (DECISIONS H19). Certificates are renewed while
// the server runs (Let's Encrypt's last 90 days, renewed every 60); before, the new files were
// read only at start, so a renewal needed a restart that reconnected every agent, and a
// forgotten restart left the server presenting an expired certificate: every agent that
// reconnected after that failed its TLS handshake.
//
// Now the pair is read again on SIGHUP (`systemctl reload`, a certbot deploy hook) and when
// either file changes (checked every minute), checked (a certificate that does not match its
// key, or a file cut short mid-write, is refused and the previous pair kept, with one error
// line), and set for new handshakes; sessions already connected keep theirs. A change is taken
// once the files held still for one check, so that a renewal writing the certificate and then
// the key is not caught half done. The expiry of
// the certificate served is logged, warned about within 14 days, and exported as
// cortex_tls_certificate_expiry_timestamp_seconds.
import { readFileSync, statSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import type https from 'node:https';
import { createSecureContext } from 'node:tls';
import { UsageError } from '../../common/errors.js';
import type { Logger } from '../log.js';

/** A certificate expiring within this is warned about at each load and once a day (ms). */
export const TLS_EXPIRY_WARN_MS = 14 * 86_400_000;
/** How often the files are checked for a change (ms). */
export const TLS_CHECK_MS = 60_000;

export interface TlsPair {
  cert: Buffer;
  key: Buffer;
}

export interface CertificateInfo {
  subject: string;
  not_after: string;
  fingerprint256: string;
}

/** Reads and checks a certificate and key; throws an Error that says which file and what is wrong. */
export function readTlsPair(certPath: string, keyPath: string): { pair: TlsPair; info: CertificateInfo; expiresAt: number } {
  const cert = readFileSync(certPath);
  const key = readFileSync(keyPath);
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (error) {
    throw new Error(`${certPath} holds no PEM certificate (${(error as Error).message})`);
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    throw new Error(`${keyPath} is not the private key of ${certPath}, or not a key (${(error as Error).message})`);
  }
  return {
    pair: { cert, key },
    info: { subject: x509.subject.replace(/\n/g, ', '), not_after: new Date(x509.validTo).toISOString(), fingerprint256: x509.fingerprint256 },
    expiresAt: Date.parse(x509.validTo),
  };
}

const stamp = (path: string): string => {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}`;
  } catch (error) {
    return `missing:${(error as NodeJS.ErrnoException).code ?? ''}`;
  }
};

export class TlsCertificate {
  private server: https.Server | undefined;
  private stamps: string;
  /** Files seen changed at the last check, not reloaded yet: a renewal writes two files (or swaps links), so a change is taken once it held still for one check. */
  private pending: string | undefined;
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastWarned = 0;
  /** Expiry of the certificate served (ms since the epoch). */
  expiresAt: number;
  readonly pair: TlsPair;

  constructor(
    private readonly certPath: string,
    private readonly keyPath: string,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    let loaded: ReturnType<typeof readTlsPair>;
    try {
      loaded = readTlsPair(certPath, keyPath);
    } catch (error) {
      // a missing or unreadable file keeps its errno (E_FILE_ACCESS); a wrong one is the operator's to fix
      if (typeof (error as NodeJS.ErrnoException).code === 'string') throw error;
      throw new UsageError(`--tls-cert/--tls-key: ${(error as Error).message}`, { code: 'E_CONFIG', hint: 'give the certificate (PEM, the chain after it) and its own private key' });
    }
    this.pair = loaded.pair;
    this.expiresAt = loaded.expiresAt;
    this.stamps = this.currentStamps();
    this.tellExpiry(loaded.info, 'TLS certificate loaded');
  }

  /** Serves the pair on `server` and checks the files every `checkMs` from now on. */
  attach(server: https.Server, checkMs = TLS_CHECK_MS): void {
    this.server = server;
    this.timer = setInterval(() => {
      const seen = this.currentStamps();
      if (seen === this.stamps) {
        this.pending = undefined;
        if (this.expiresAt - this.now() < TLS_EXPIRY_WARN_MS && this.now() - this.lastWarned >= 86_400_000) this.warnExpiry();
      } else if (seen !== this.pending) {
        this.pending = seen; // changed: taken at the next check if it holds still
      } else {
        this.reload('the certificate or key file changed');
      }
    }, Math.max(50, checkMs));
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Reads the pair again and serves it to new handshakes; false (and one error line) when it is refused. */
  reload(why: string): boolean {
    const stamps = this.currentStamps();
    this.pending = undefined;
    let loaded: ReturnType<typeof readTlsPair>;
    try {
      loaded = readTlsPair(this.certPath, this.keyPath);
      this.server?.setSecureContext({ cert: loaded.pair.cert, key: loaded.pair.key });
    } catch (error) {
      // Not tried again until a file changes once more (or the next SIGHUP).
      this.stamps = stamps;
      this.logger.error(
        { why, tls_cert: this.certPath, tls_key: this.keyPath, err: (error as Error).message, serving_not_after: new Date(this.expiresAt).toISOString() },
        'TLS certificate not reloaded: the new files were refused; the previous certificate is still served — fix the files, then send SIGHUP (systemctl reload) or write them again',
      );
      return false;
    }
    this.stamps = stamps;
    this.expiresAt = loaded.expiresAt;
    this.lastWarned = 0;
    this.tellExpiry(loaded.info, `TLS certificate reloaded (${why}): new connections get it, connected agents keep theirs`);
    return true;
  }

  private currentStamps(): string {
    return `${stamp(this.certPath)}|${stamp(this.keyPath)}`;
  }

  private tellExpiry(info: CertificateInfo, msg: string): void {
    this.logger.info({ tls_cert: this.certPath, ...info }, msg);
    if (this.expiresAt - this.now() < TLS_EXPIRY_WARN_MS) this.warnExpiry();
  }

  private warnExpiry(): void {
    this.lastWarned = this.now();
    const left = this.expiresAt - this.now();
    const not_after = new Date(this.expiresAt).toISOString();
    if (left <= 0) {
      this.logger.error({ tls_cert: this.certPath, not_after }, 'the TLS certificate served has expired: agents cannot connect (their TLS handshake fails); renew it — the server picks the new files up within a minute, or at once on SIGHUP');
    } else {
      this.logger.warn({ tls_cert: this.certPath, not_after, days_left: Math.floor(left / 86_400_000) }, 'the TLS certificate served expires soon; renew it — the server picks the new files up within a minute, or at once on SIGHUP');
    }
  }
}

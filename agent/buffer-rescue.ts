// buffer.db deleted or replaced under the running agent (DECISIONS H25). SQLite keeps the
// deleted file open and goes on: every line read was committed into a file no one can see,
// the stored positions with it, and at the next start the agent read every file again from
// its beginning (each line stored twice at the server) — with no line in the log. The path is
// looked at every few seconds (common/file-watch.ts). Once buffer.db is gone or is another
// file, the agent stops (sources first, so nothing more is appended), and before the buffer
// closes its open database is copied back to the path with SQLite's backup API — or beside
// it, `buffer.db.rescued-<time>`, when another file is there now. When the folder's other
// files went with it (`rm -rf DIR/*`), the identity the agent holds is written back: host_id
// and agent.json as they were at start, the token it holds now, the config last in force.
// `cortex-agent run` then starts again on the copy (deleted) or stops naming both files
// (replaced: the operator chooses).

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rescueTarget, watchDbFile, type FileGone } from '../common/file-watch.js';
import { writeFileAtomic } from './atomic-file.js';
import type { DurableBuffer } from './buffer/buffer.js';
import type { Logger } from './log.js';
import { AGENT_JSON_FILE, HOST_ID_FILE, ensureStateDir } from './state-dir.js';

export interface BufferRescueOutcome {
  how: FileGone;
  /** Where the copy went: buffer.db itself, or buffer.db.rescued-<time> beside another file. */
  target: string;
  /** Whether the copy was made (false: what the agent held since is lost). */
  copied: boolean;
  /** The files of the state folder written back (host_id, agent.json, token, config.json). */
  restored: string[];
  /** What happened, for the log and `run`'s exit message. */
  message: string;
}

export interface BufferRescueDeps {
  stateDir: string;
  buffer: DurableBuffer;
  log: Logger;
  /** Writes the token the agent holds back when DIR/token is gone; true when it wrote it. */
  restoreToken: () => Promise<boolean>;
  /** Writes the config last in force back when DIR/config.json is gone; true when it wrote it. */
  restoreConfig: () => Promise<boolean>;
}

export class BufferRescue {
  private gone: FileGone | null = null;
  private stopWatch: () => void = () => undefined;
  /** host_id and agent.json as they were at start (they change only by `enroll`). */
  private readonly identity = new Map<string, string>();
  outcome: BufferRescueOutcome | null = null;

  constructor(private readonly deps: BufferRescueDeps) {}

  /** Watches buffer.db every `everyMs` (0: not at all); `onGone` runs once when it is gone or replaced. */
  start(everyMs: number, onGone: () => void): void {
    if (everyMs <= 0) return;
    for (const name of [HOST_ID_FILE, AGENT_JSON_FILE]) {
      try {
        this.identity.set(name, readFileSync(join(this.deps.stateDir, name), 'utf8'));
      } catch {
        // not there: nothing to write back
      }
    }
    const path = this.deps.buffer.path;
    this.stopWatch = watchDbFile(
      path,
      (how) => {
        this.gone = how;
        this.deps.log.error(
          { buffer: path, how },
          `buffer.db was ${how} while the agent ran: stopping, and copying what the agent holds (unsent entries, source positions) back before it starts again`,
        );
        onGone();
      },
      everyMs,
    );
  }

  stop(): void {
    this.stopWatch();
  }

  /** Copies the open buffer (the sources stopped, before it closes) and writes back what went with it. */
  async rescue(): Promise<BufferRescueOutcome | null> {
    const how = this.gone;
    if (how === null) return null;
    const { buffer, stateDir, log } = this.deps;
    const target = rescueTarget(buffer.path, how);
    const restored: string[] = [];
    let copied = false;
    let message: string;
    try {
      // `rm -rf DIR` took the folder itself: make it again (0700) if this user may.
      await ensureStateDir(stateDir);
      await buffer.copyTo(target);
      copied = true;
      if (how === 'deleted') {
        for (const [name, text] of this.identity) {
          if (await writeIfMissing(join(stateDir, name), text)) restored.push(name);
        }
        if (await this.deps.restoreToken()) restored.push('token');
        if (await this.deps.restoreConfig()) restored.push('config.json');
      }
      const also = restored.length > 0 ? `; ${restored.join(', ')} ${restored.length === 1 ? 'was' : 'were'} gone too and written back` : '';
      message =
        how === 'deleted'
          ? `buffer.db was deleted while the agent ran; what the agent held (unsent entries, source positions) was copied back to ${target}${also}`
          : `buffer.db was replaced while the agent ran (another file is there now); what the agent held was copied to ${target}: keep the file you want at ${buffer.path} (the copy has every unsent entry and the source positions), then start the agent again`;
      log.error({ buffer: buffer.path, rescued_to: target, restored }, message);
    } catch (err) {
      message = `buffer.db was ${how} while the agent ran, and copying what the agent held to ${target} failed (${(err as Error).message}): what it held and had not sent is lost, and at its next start it reads its log files again from the positions stored in what is at ${buffer.path} then (from their beginning when nothing is)`;
      log.fatal({ buffer: buffer.path, err: (err as Error).message }, message);
    }
    this.outcome = { how, target, copied, restored, message };
    return this.outcome;
  }
}

async function writeIfMissing(path: string, text: string): Promise<boolean> {
  if (existsSync(path)) return false;
  await writeFileAtomic(path, text, { mode: 0o600 });
  return true;
}

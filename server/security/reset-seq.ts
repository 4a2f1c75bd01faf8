// `agent reset-seq`: repairs a host whose accepted_seq left the range of exact integers
// (max_seq = 2^53 - 1; possible before DECISIONS H1, or by a hand edit). Rows stored above
// max_seq cannot be addressed by any later push and are deleted; accepted_seq becomes the
// given value, by default the highest stored seq at or below max_seq (0 when none).
import { LIMITS } from '@cortex/agent-protocol';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { UnknownHostError } from '../db/storage.js';

export class ResetSeqError extends Error {
  override readonly name = 'ResetSeqError';
}

export interface ResetSeqResult {
  host_id: string;
  previous_accepted_seq: number;
  accepted_seq: number;
  /** Rows deleted because their seq was above max_seq. */
  deleted_rows: number;
}

/**
 * @throws UnknownHostError, ResetSeqError (a target below a stored seq — later pushes would
 * be dropped as duplicates —, above the host's accepted_seq — seqs acked that were never
 * stored — or above max_seq). Nothing changes when it throws.
 */
export async function resetSeq(db: Kysely<Database>, host_id: string, to?: number): Promise<ResetSeqResult> {
  const id = host_id.toLowerCase();
  return db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('agents').select('accepted_seq').where('host_id', '=', id).executeTakeFirst();
    if (row === undefined) throw new UnknownHostError(id);
    const top = await trx
      .selectFrom('logs')
      .select((eb) => eb.fn.max('seq').as('top'))
      .where('host_id', '=', id)
      .where('seq', '<=', LIMITS.max_seq)
      .executeTakeFirst();
    const highest = top?.top == null ? 0 : Number(top.top);
    const target = to ?? highest;
    if (!Number.isSafeInteger(target) || target < 0 || target > LIMITS.max_seq) {
      throw new ResetSeqError(`--to must be an integer from 0 to max_seq = ${LIMITS.max_seq}`);
    }
    const previous = Number(row.accepted_seq);
    if (target > previous) {
      // Raising it would make the server ack seqs previous+1..target that it never stored: the
      // agent deletes them from its buffer (on a healthy, connected host ten lines vanished).
      throw new ResetSeqError(
        `--to ${target} is above this host's accepted_seq ${previous}: the server would ack seqs ${previous + 1} to ${target} without storing them, and the agent would drop them from its buffer — reset-seq only lowers accepted_seq (to repair a host beyond max_seq); give --to ${previous} or less`,
      );
    }
    if (target < highest) {
      throw new ResetSeqError(`--to ${target} is below seq ${highest}, which is stored for this host: entries the agent sends from ${target + 1} would be dropped as duplicates; give --to ${highest} or more`);
    }
    const del = await trx.deleteFrom('logs').where('host_id', '=', id).where('seq', '>', LIMITS.max_seq).executeTakeFirst();
    await trx.updateTable('agents').set({ accepted_seq: target }).where('host_id', '=', id).execute();
    return { host_id: id, previous_accepted_seq: previous, accepted_seq: target, deleted_rows: Number(del.numDeletedRows) };
  });
}

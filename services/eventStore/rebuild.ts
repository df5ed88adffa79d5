// `tandem projector rebuild`: empties the read models and projects them again from the events
// table alone, in global order, with each event's own recorded time; the result is the same
// content the live projector produced. The event table and stream heads are left as they are.
import { asc, gt, sql } from 'drizzle-orm';
import type { NodePgDatabase } from 'drizzle-orm/node-postgres';
import { readEvent } from '../../domain/upcast.js';
import { events } from '../../infra/db/schema.js';
import { project } from './project.js';

/** The read models, as `TRUNCATE` names them. */
export const READ_MODEL_TABLES = ['runs', 'episodes', 'turn_groups', 'samples', 'updates', 'checkpoints', 'iterations', 'evaluations'] as const;

const PAGE = 500;

export async function rebuildReadModels(db: NodePgDatabase): Promise<{ events: number }> {
  return db.transaction(async (tx) => {
    // Appends wait until the rebuild commits (SHARE blocks inserts, not reads); then they project as usual.
    await tx.execute(sql`LOCK TABLE events IN SHARE MODE`);
    await tx.execute(sql.raw(`TRUNCATE ${READ_MODEL_TABLES.join(', ')}`));
    let after = 0;
    let count = 0;
    for (;;) {
      const page = await tx.select().from(events).where(gt(events.globalPosition, after)).orderBy(asc(events.globalPosition)).limit(PAGE);
      for (const row of page) await project(tx, readEvent(row.data), { at: row.recordedAt, position: row.position });
      count += page.length;
      if (page.length < PAGE) return { events: count };
      after = page[page.length - 1].globalPosition;
    }
  });
}

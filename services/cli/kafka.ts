// `tandem kafka groups|release [--json]`: what holds records in Tandem's topics, and letting go of
// what runs that no longer run still hold. A record stays until every consumer group reading its
// topic has read past it (infra/kafka/retention.ts); a run's update groups are deleted at its end,
// but not when it failed, was terminated, or ended before Tandem deleted them (runs started before
// that), and such groups hold their runs' last iterations for good.
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Command } from 'commander';
import type { Kafka } from 'kafkajs';
import { updateGroupRunIds } from '../../domain/ids.js';
import { makeKafka } from '../../infra/kafka/client.js';
import { deleteGroups, holdings, trimTopics, type Holding } from '../../infra/kafka/retention.js';
import { PROJECTOR_GROUP, stackSettings, TOPICS } from '../../infra/settings.js';
import { printJson, type Act } from './args.js';
import { temporalClient } from '../client/temporal.js';

export function registerKafka(program: Command, act: Act): void {
  const kafka = program.command('kafka').description("what holds records in Tandem's Kafka topics");
  kafka
    .command('groups')
    .description("the consumer groups holding records of Tandem's topics, with their runs' state")
    .option('--json', 'print the groups as JSON')
    .action(act(groups));
  kafka
    .command('release')
    .description('delete the update groups of runs that are not running, then the records no group holds')
    .option('--json', 'print the groups deleted and the records deleted as JSON')
    .action(act(release));
}

interface GroupRow extends Holding {
  /** For an update group: its run's Temporal status ('not found' for none), per run id its name can mean. */
  runs?: Record<string, string>;
}

/** Groups listed per topic in the text output, those holding the most first. */
const SHOWN = 10;

const cliKafka = () => makeKafka(stackSettings().kafkaBrokers, 'tandem-cli');

/** Its run is running (also paused: a paused run is a running workflow) under any reading of its name. */
const live = (row: GroupRow) => row.runs === undefined || Object.values(row.runs).some((s) => s === 'RUNNING');

async function survey(kafka: Kafka, client: Client): Promise<{ rows: GroupRow[]; records: Record<string, number> }> {
  const { holdings: held, records } = await holdings(kafka, Object.values(TOPICS));
  const status = new Map<string, string>();
  const statusOf = async (runId: string) => {
    if (!status.has(runId)) {
      status.set(
        runId,
        await client.workflow
          .getHandle(runId)
          .describe()
          .then((d) => d.status.name as string)
          .catch((err) => {
            if (err instanceof WorkflowNotFoundError) return 'not found';
            throw err;
          }),
      );
    }
    return status.get(runId)!;
  };
  const rows: GroupRow[] = [];
  for (const h of held) {
    const ids = updateGroupRunIds(h.groupId);
    if (ids.length === 0) rows.push(h);
    else rows.push({ ...h, runs: Object.fromEntries(await Promise.all(ids.map(async (id) => [id, await statusOf(id)]))) });
  }
  return { rows, records };
}

async function groups(opts: { json?: boolean }): Promise<number> {
  const client = await temporalClient();
  try {
    const { rows, records } = await survey(cliKafka(), client);
    if (opts.json) {
      printJson({ topics: records, groups: rows });
      return 0;
    }
    for (const topic of Object.values(TOPICS)) {
      console.log(`${topic}: ${records[topic]} records`);
      // The group holding the most is the one the topic is trimmed to.
      const holders = rows.filter((x) => x.topic === topic).sort((a, b) => b.records - a.records);
      for (const r of holders.slice(0, SHOWN)) {
        const run = r.runs ? `  run ${Object.entries(r.runs).map(([id, s]) => `${id}: ${s.toLowerCase()}`).join(', ')}` : r.groupId === PROJECTOR_GROUP ? '  (the projector)' : '';
        console.log(`  ${r.groupId}  holds ${r.records}${run}`);
      }
      if (holders.length > SHOWN) console.log(`  … and ${holders.length - SHOWN} more groups holding fewer (--json lists all)`);
    }
    const stale = new Set(rows.filter((r) => !live(r)).map((r) => r.groupId));
    if (stale.size > 0) console.log(`${stale.size} update group(s) of runs that are not running: \`tandem kafka release\` deletes them`);
    return 0;
  } finally {
    await client.connection.close();
  }
}

async function release(opts: { json?: boolean }): Promise<number> {
  const client = await temporalClient();
  try {
    const kafka = cliKafka();
    const { rows } = await survey(kafka, client);
    const stale = [...new Set(rows.filter((r) => !live(r)).map((r) => r.groupId))].sort();
    await deleteGroups(kafka, stale);
    const trimmed = await trimTopics(kafka, Object.values(TOPICS), { [TOPICS.events]: PROJECTOR_GROUP });
    if (opts.json) printJson({ deleted: stale, trimmed });
    else {
      console.log(`deleted ${stale.length} update group(s) of runs that are not running`);
      for (const [topic, n] of Object.entries(trimmed)) console.log(`${topic}: ${n} records deleted`);
    }
    return 0;
  } finally {
    await client.connection.close();
  }
}

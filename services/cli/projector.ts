// `tandem projector rebuild [--json]`: the read models again, from the events table alone.
import type { Command } from 'commander';
import { rebuildReadModels, READ_MODEL_TABLES } from '../eventStore/rebuild.js';
import { printJson, type Act } from './args.js';
import { withDatabase } from '../client/database.js';

export function registerProjector(program: Command, act: Act): void {
  const projector = program.command('projector').description('the read models the projector keeps in Postgres');
  projector
    .command('rebuild')
    .description('empty the read models and project them again from the events table alone')
    .option('--json', 'print the tables rebuilt and the events read as JSON')
    .action(act(rebuild));
}

async function rebuild(opts: { json?: boolean }): Promise<number> {
  const { events } = await withDatabase((db) => rebuildReadModels(db));
  if (opts.json) printJson({ tables: READ_MODEL_TABLES, events });
  else console.log(`rebuilt ${READ_MODEL_TABLES.join(', ')} from ${events} events`);
  return 0;
}

// `tandem projector rebuild`: the read models again, from the events table alone.
import { rebuildReadModels, READ_MODEL_TABLES } from '../projector/rebuild.js';
import { withDatabase } from './database.js';

export async function projectorCommand(args: string[]): Promise<number> {
  if (args.length !== 1 || args[0] !== 'rebuild') {
    console.error('usage: tandem projector rebuild');
    return 2;
  }
  const { events } = await withDatabase((db) => rebuildReadModels(db));
  console.log(`rebuilt ${READ_MODEL_TABLES.join(', ')} from ${events} events`);
  return 0;
}

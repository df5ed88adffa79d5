// `tandem config check FILE [key=value ...]`
import { loadRunConfig } from '../../configs/load.js';
import { formatIssues } from '../../configs/schema.js';
import { stringify } from 'yaml';

export function configCommand(args: string[]): number {
  const [action, file, ...overrides] = args;
  if (action !== 'check' || !file) {
    console.error('usage: tandem config check FILE [key.path=value ...]');
    return 2;
  }
  const result = loadRunConfig(file, overrides);
  if (!result.ok) {
    console.error(`${file}: ${result.issues.length} error(s)\n${formatIssues(result.issues)}`);
    return 1;
  }
  process.stdout.write(stringify(result.config));
  return 0;
}

// `tandem config check FILE [key=value ...] [--json]`
import { stringify } from 'yaml';
import { loadRunConfig } from '../../configs/load.js';
import { formatIssues } from '../../configs/schema.js';

export function configCommand(args: string[]): number {
  const json = args.includes('--json');
  const [action, file, ...overrides] = args.filter((a) => a !== '--json');
  if (action !== 'check' || !file) {
    console.error('usage: tandem config check FILE [key.path=value ...] [--json]');
    return 2;
  }
  const result = loadRunConfig(file, overrides);
  if (!result.ok) {
    console.error(`${file}: ${result.issues.length} error(s)\n${formatIssues(result.issues)}`);
    return 1;
  }
  // --json prints the trainingRun workflow input, ready for `temporal workflow start --input-file`.
  process.stdout.write(json ? `${JSON.stringify({ config: result.config })}\n` : stringify(result.config));
  return 0;
}

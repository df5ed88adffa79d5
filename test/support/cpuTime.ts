// How long a piece of work took the CPU, for the tests that bound a parser's time: the process's own
// CPU time (process.cpuUsage), which other processes' load does not stretch as it stretches wall time.
export type CpuMark = NodeJS.CpuUsage;

export const cpuMark = (): CpuMark => process.cpuUsage();

/** CPU milliseconds this process has used since `mark`. */
export function cpuMsSince(mark: CpuMark): number {
  const { user, system } = process.cpuUsage(mark);
  return (user + system) / 1000;
}

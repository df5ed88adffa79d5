// The workflows the CPU worker registers.
export { episode } from './episode.js';
export { trainingRun } from './trainingRun.js';
export { evaluate } from './evaluate.js';

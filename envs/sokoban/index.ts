// Public API of the Sokoban environment.
export { sokoban } from './definition.js';
export { SOKOBAN_DEFAULTS, generate, type SokobanOptions } from './generate.js';
export { SOKOBAN_TEXT, render, sokobanPuzzle } from './puzzle.js';
export {
  DEFAULT_MAX_STEPS,
  SOKOBAN_REWARDS,
  applyMoves,
  deadSquares,
  initialState,
  isDeadlocked,
  parseLevel,
  renderRoom,
  targetsOf,
  type Coord,
  type DeadlockRule,
  type SokobanMoveResult,
  type SokobanRewards,
  type SokobanState,
} from './room.js';
export { solve } from './solver.js';

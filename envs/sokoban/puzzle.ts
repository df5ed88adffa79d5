// Sokoban as a Puzzle for the two PettingLLMs roles (envs/puzzle/roles.ts): the task text,
// and the move-list puzzle shared with Plan-Path (envs/puzzle/moves.ts) around the room reducer. Pure.
import { countMoves, moveListPuzzle } from '../puzzle/moves.js';
import type { Puzzle, PuzzleText } from '../puzzle/types.js';
import { applyMoves, renderRoom, targetsOf, type Coord, type SokobanMoveResult, type SokobanState } from './room.js';
import { solve } from './solver.js';

export const SOKOBAN_TEXT: Readonly<PuzzleText> = Object.freeze({
  subject: 'Sokoban room',
  target: 'the sequence of moves that pushes every box onto a target',
  answer: 'move sequence',
  toolRules: [
    "Moves are the strings 'U', 'D', 'L', 'R' (Up, Down, Left, Right). Walking into a box pushes it one cell further if that cell is free; boxes cannot be pulled.",
    'Search over positions (player cell, box cells), e.g. with BFS, and never push a box into a corner that is not a target.',
    'You may print the complete sequence, or a partial sequence if you are uncertain.',
    "If your algorithm produces numbers, convert them with action_map = {0: 'U', 1: 'D', 2: 'L', 3: 'R'}.",
  ],
  example: '["U", "R", "D", "L"]',
  listName: 'move list',
  check:
    'replay the moves on the room, push by push. If they are correct and put every box on a target, adopt them; otherwise improve or override them with your own reasoning.',
  solve: 'work out a sequence of moves that pushes every box onto a target without pushing a box into a corner',
  justify: 'the final moves are correct',
  finalName: 'the final list of moves',
});

export const sokobanPuzzle: Puzzle<SokobanState, string[]> = moveListPuzzle({
  text: () => SOKOBAN_TEXT,
  describe: describeTask,
  applyMoves,
  summarise: describeMoves,
  solution(state: SokobanState) {
    const moves = solve(state);
    return moves === null ? null : JSON.stringify(moves);
  },
});

/** The room drawn with its symbols, then the coordinates of the player, boxes and targets. */
export function render(state: SokobanState): string {
  const [pr, pc] = state.player;
  return [
    ...renderRoom(state),
    `Player (row, col): (${pr}, ${pc}); boxes: ${coords(state.boxes)}; targets: ${coords(targetsOf(state.room))}`,
  ].join('\n');
}

function describeTask(state: SokobanState, turn: number): string {
  const lines = [
    "You are a Sokoban player. Room ('#' wall, '_' floor, '.' target, '$' box, '*' box on a target, '@' you, '+' you on a target):",
    render(state),
    `Room rows as a Python list (row 0 first): ${JSON.stringify(renderRoom(state))}`,
    'Rules: moves are U (row - 1), D (row + 1), L (col - 1), R (col + 1). Walking into a box pushes it one cell in the same direction ' +
      'if that cell is floor or a target; you cannot pull a box, push two boxes at once, or walk into a wall. An invalid move is penalised ' +
      'and leaves you in place. A box pushed into a corner that is not a target can never be moved again, which loses the game. ' +
      `You win when every box is on a target; the game is lost after ${state.maxSteps} moves in total.`,
  ];
  if (turn > 0) {
    lines.push(
      `This is turn ${turn + 1}. Moves made so far: ${state.steps}; boxes on targets: ${state.boxesOnTargets} of ${state.boxes.length}; plan from the current position.`,
    );
  }
  return lines.join('\n');
}

// E.g. "12 moves (2 invalid), 1 of 1 boxes on targets, solved".
function describeMoves(count: number, result: SokobanMoveResult): string {
  const s = result.state;
  const [r, c] = s.player;
  const end = s.solved
    ? 'solved'
    : s.failure === 'deadlock'
      ? 'deadlock'
      : s.failure === 'step limit'
        ? 'step limit reached'
        : `ended at (${r}, ${c})`;
  return `${countMoves(count, result.invalidMoves)}, ${s.boxesOnTargets} of ${s.boxes.length} boxes on targets, ${end}`;
}

function coords(list: readonly Coord[]): string {
  return `[${list.map(([r, c]) => `(${r}, ${c})`).join(', ')}]`;
}

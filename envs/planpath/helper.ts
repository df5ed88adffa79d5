// A miniature of the paper's mechanism for Plan-Path (env.tool_helper: true), not the reference's
// setting. In the paper the tool agent learns to write code (BFS) that solves the grid; a tiny
// model cannot write BFS, so here its program runs with a BFS helper defined before its code and
// what is left to learn is the use of a tool: pass it the grid, the current position and the goal
// read from the prompt, and print its result in the answer format. The helper's moves are those
// of bfsShortestPath (grid.ts): the same search, neighbours in the order U, D, L, R
// (test/unit/planpath.unit.test.ts runs both on the same grids). Under env.helper_grid named the
// program also finds the grid rows defined as `rows`, so the call copies only the position and
// the goal from the prompt (a tiny model copies a grid garbled at temperature 1). Pure: text only;
// the sandbox runs the program as any other.
import type { PlanPathState } from './grid.js';

/** The Python defined before the tool agent's code when the helper is on. */
export const TOOL_HELPER_PRELUDE = `def shortest_path(rows, start, goal):
    """A shortest list of moves ('U', 'D', 'L', 'R') from start to goal, both (row, col), over
    rows of '.' (free) and '#' (blocked) strings, any other cell (e.g. 'S', 'G') free;
    [] when start is goal, None when either is not a free cell or the goal cannot be reached."""
    from collections import deque

    def free(r, c):
        return 0 <= r < len(rows) and 0 <= c < len(rows[r]) and rows[r][c] != '#'

    start, goal = tuple(start), tuple(goal)
    if not free(*start) or not free(*goal):
        return None
    came_from = {start: None}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            moves = []
            while came_from[cell] is not None:
                cell, move = came_from[cell]
                moves.append(move)
            return moves[::-1]
        for move, dr, dc in (('U', -1, 0), ('D', 1, 0), ('L', 0, -1), ('R', 0, 1)):
            nxt = (cell[0] + dr, cell[1] + dc)
            if free(*nxt) and nxt not in came_from:
                came_from[nxt] = (cell, move)
                queue.append(nxt)
    return None
`;

/** The start of the tool agent's rule about the helper, under either helper_grid. */
const HELPER_SIGNATURE =
  "A helper is already defined before your code: shortest_path(rows, start, goal) returns a shortest list of moves such as ['R', 'D'] from start to goal, where ";
const HELPER_RETURNS = 'start and goal are (row, col) tuples; it returns None when the goal cannot be reached. ';

/** The tool agent's rule about the helper, shown only when it is on. */
export const TOOL_HELPER_RULE =
  `${HELPER_SIGNATURE}rows is the list of grid rows and ${HELPER_RETURNS}` + 'Call it with the grid rows, your current position and the goal, and print its result.';

/** The rule under env.helper_grid named: the grid rows are defined, the call copies position and goal. */
export const TOOL_HELPER_NAMED_RULE =
  `${HELPER_SIGNATURE}${HELPER_RETURNS}` + 'The grid rows are already defined as rows. Call it with rows, your current position and the goal, and print its result.';

/**
 * The program run for the tool agent's code: the helper, under helper_grid named the grid rows as
 * `rows` (a Python list of strings, written as JSON), then the code.
 */
export function withToolHelper(code: string, state: Pick<PlanPathState, 'rows' | 'helperGrid'>): string {
  const rows = state.helperGrid === 'named' ? `rows = ${JSON.stringify(state.rows)}\n` : '';
  return `${TOOL_HELPER_PRELUDE}\n${rows}\n${code}`;
}

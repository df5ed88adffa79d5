// Public API of the Hanabi environment.
export { HANABI_AGENTS, HANABI_REWARDS, hanabi, scoreHanabi, seatOf, type HanabiAgent } from './definition.js';
export { formatAction, parseAction, type ParseResult } from './parse.js';
export { MAX_RECENT_ACTIONS, buildPrompt, knowledgeText } from './prompt.js';
export {
  COLOR_LETTERS,
  COLOR_NAMES,
  HANABI_PRESETS,
  MAX_PLAYERS,
  MIN_PLAYERS,
  cardOf,
  colorOf,
  deckComposition,
  deckSize,
  fireworksTotal,
  forfeit,
  hanabiOptionIssues,
  illegalReason,
  invariantIssues,
  legalActions,
  maxScore,
  newGame,
  rankOf,
  resolveRules,
  step,
  type Card,
  type EndReason,
  type HandCard,
  type HanabiAction,
  type HanabiOptions,
  type HanabiPreset,
  type HanabiRules,
  type HanabiState,
  type LogEntry,
  type StepResult,
} from './rules.js';
export { scriptedAction, scriptedAnswer } from './scripted.js';

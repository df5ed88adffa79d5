// Types shared by every Tandem environment.

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

// A grid move: U = row - 1, D = row + 1, L = col - 1, R = col + 1.
export type Move = 'U' | 'D' | 'L' | 'R';

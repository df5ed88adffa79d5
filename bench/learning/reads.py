"""Does a warm-started model read its prompt? Plan-Path's roles, sampled on held-out demonstrations.

    node --import tsx services/engine/corpus/demos.ts planpath-helper 200 7 > /tmp/heldout.jsonl
    .venv/bin/python bench/learning/reads.py --model .tools/models/tandem-tiny-helper \
        --corpus /tmp/heldout.jsonl [--problems 100] [--temperature 1.0] [--seed 0] [--roles tool,...]

The corpus is the warm start's own kind of transcripts (services/engine/corpus/demos.ts) from a
seed the warm start did not see (setup uses 1). For the first --problems prompts of each role it
samples one answer (transformers' generate, the model's chat template) and reports:
- tool agent: the share of programs that call shortest_path (the miniature's helper), the share
  whose call passes the prompt's exact arguments (grid rows, position, goal; with
  --sandbox-names, `rows` for the grid), and the share that print a literal move list that
  reaches the goal without an invalid move;
- plan agent after the tool agent: the share that reach the goal without an invalid move, and of
  the prompts that show the tool agent's move list, the share of answers that repeat it;
- plan agent alone: the share that reach the goal without an invalid move.
A model that reads its prompt copies what the prompt hands it; one that only learned the answers'
format scores about what random move lists do (bench/learning/chance.ts). Programs are not run.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

STEPS = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


def task(prompt: str):
    """The grid rows, position and goal that a Plan-Path prompt shows."""
    pos = tuple(map(int, re.search(r"Current position \(row, col\): \((\d+), (\d+)\)", prompt).groups()))
    goal = tuple(map(int, re.search(r"goal: \((\d+), (\d+)\)", prompt).groups()))
    rows = json.loads(re.search(r"Grid rows as a Python list \(row 0 first\): (\[.*\])", prompt).group(1))
    return rows, pos, goal


def reaches(rows, pos, goal, moves) -> bool:
    """Whether the moves reach the goal with no invalid move before it (env.invalid_move: end)."""
    r, c = pos
    for move in moves:
        if move not in STEPS:
            return False
        r, c = r + STEPS[move][0], c + STEPS[move][1]
        if not (0 <= r < len(rows) and 0 <= c < len(rows[r])) or rows[r][c] == "#":
            return False
        if (r, c) == goal:
            return True
    return (r, c) == goal


def move_list(text: str, pattern: str):
    """The move list after `pattern` in text, or None."""
    m = re.search(pattern + r"\s*(\[[^\]]*\])", text)
    if not m:
        return None
    try:
        moves = ast.literal_eval(m.group(1))
    except (ValueError, SyntaxError):
        return None
    return moves if isinstance(moves, list) else None


def role(messages) -> str:
    system = messages[0]["content"]
    if "code generation" in system:
        return "tool"
    return "plan after tool" if "code agent" in system else "plan alone"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--problems", type=int, default=100, help="prompts per role")
    ap.add_argument("--temperature", type=float, default=1.0)
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sandbox-names", action="store_true", help="the right call names the grid `rows`")
    ap.add_argument("--roles", default="tool,plan after tool,plan alone", help="the roles to sample, comma-separated")
    args = ap.parse_args(argv)
    torch.manual_seed(args.seed)
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model).eval()

    counts = {r: {"n": 0} for r in args.roles.split(",")}
    with open(args.corpus) as f:
        transcripts = [json.loads(line)["messages"][:-1] for line in f if line.strip()]
    for messages in transcripts:
        kind = role(messages)
        c = counts.get(kind)
        if c is None or c["n"] >= args.problems:
            continue
        prompt = messages[-1]["content"]
        rows, pos, goal = task(prompt)
        ids = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt")
        ids = ids if torch.is_tensor(ids) else ids["input_ids"]
        with torch.no_grad():
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True, temperature=args.temperature,
                                 top_p=1.0, top_k=0, max_new_tokens=args.max_new_tokens)
        text = tok.decode(out[0, ids.shape[1]:], skip_special_tokens=True)
        c["n"] += 1
        if kind == "tool":
            grid = "rows" if args.sandbox_names else json.dumps(rows, separators=(",", ":"))
            right = f"shortest_path({grid}, ({pos[0]}, {pos[1]}), ({goal[0]}, {goal[1]}))"
            literal = move_list(text, r"moves =")
            c["calls helper"] = c.get("calls helper", 0) + ("shortest_path" in text)
            c["right call"] = c.get("right call", 0) + (right in text)
            c["literal list reaches"] = c.get("literal list reaches", 0) + (literal is not None and reaches(rows, pos, goal, literal))
        else:
            answer = move_list(text, "####")
            ok = answer is not None and reaches(rows, pos, goal, answer)
            c["reaches"] = c.get("reaches", 0) + ok
            if kind == "plan after tool":
                shown = move_list(prompt, "Code agent's action list:")
                if shown is not None:
                    c["shown"] = c.get("shown", 0) + 1
                    c["repeats"] = c.get("repeats", 0) + (answer == shown)
    print(f"{args.model}, temperature {args.temperature}, {args.corpus}")
    for name, c in counts.items():
        n, shown, repeats = c.pop("n"), c.pop("shown", 0), c.pop("repeats", None)
        parts = [f"{k} {v / max(n, 1):.0%}" for k, v in c.items()]
        if repeats is not None:
            parts.append(f"repeats the tool agent's list {repeats / max(shown, 1):.0%} (of {shown} shown one)")
        print(f"  {name} ({n}): " + ", ".join(parts))


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# `table.sh SUITE STAMP TEMPERATURE...`: issue 53's table on SUITE, its sampling chosen before any
# RL row runs (the plans in this folder call it with their task and the temperatures they try).
#
# 1. The choice: for each TEMPERATURE T (top_p 0.9, top_k 20, 128-token responses), a probe of the
#    untrained team (`multi`) on 64 validation problems, each played twice sampled and once
#    greedily (`--eval-on validation`, stamp STAMP-probe-tNN, NN the temperature's digits: 1.0 ->
#    t10). Probes whose results file exists but holds no team line and runs in no process are
#    (re)started here; they re-attach to their workflows. The rule (issue 53 item 2): the first T,
#    in the order given, at which the team succeeds 10-50% of the time sampled and at most 50%
#    greedily; none: nothing starts (another task is needed, chosen again on validation problems).
#    The decision and its evidence go to bench/learning/results/STAMP.choice.
# 2. The runs (stamp STAMP): every row of --suite SUITE (bench/learning/rows.ts), 3 seeds, 30
#    iterations of 4 problems (K = 4), LoRA at lr 5e-4, the chosen sampling for training and for the
#    sampled evaluation, in float32 (`--dtype float32`: the table spans machines with and without
#    bf16 units, and its first rows and probes ran float32 on a CPU without them, 2026-11-29, whose
#    results files' settings lines say so since 2026-12-01); two engines, one per core: the stack's policy worker runs single, multi,
#    single-grpo and multi-grpo, a second one (task queue tandem-policy-1, metrics 9466) the two
#    AT-GRPO rows; two runs at a time on each. Logs: .data/logs/STAMP-{a,b}.log.
# Re-running re-attaches: the benches skip what the results files hold and attach to running workflows.
# As rows land: `node --import tsx bench/learning/answers.ts --stamp STAMP --save` keeps their read-back
# in results/STAMP.answers.md, which outlives the stack holding their transcripts.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
export PATH="$PWD/node_modules/.bin:$PATH"
[ $# -ge 3 ] || { echo "usage: $0 SUITE STAMP TEMPERATURE..." >&2; exit 2; }
suite="$1" stamp="$2"
shift 2
temperatures=("$@")
results=bench/learning/results
choice=$results/$stamp.choice
probe_stamp() { echo "$stamp-probe-t${1//./}"; }

sampling() { # sampling T -> the --set list of that sampling, for training and evaluation
  local s="training.max_response_length=128" which
  for which in train val; do
    s+=",agent_policy_configs.agent_configs.*.${which}_llm_config.temperature=$1"
    s+=",agent_policy_configs.agent_configs.*.${which}_llm_config.top_p=0.9,agent_policy_configs.agent_configs.*.${which}_llm_config.top_k=20"
  done
  echo "$s"
}

team() { # team STAMP -> "sampled greedy" of the multi row, once the probe has written it
  node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
    const r = lines.find((l) => l.row === "multi" && l.greedy);
    if (r) console.log(r.success, r.greedy.success);' "$results/$1.jsonl" 2>/dev/null || true
}

if [ ! -f "$choice" ]; then
  for t in "${temperatures[@]}"; do
    p="$(probe_stamp "$t")"
    if [ -z "$(team "$p")" ] && ! pgrep -f -- "--stamp $p " >/dev/null; then
      setsid nohup node --import tsx bench/learning/run.ts --stamp "$p" --suite "$suite" --eval-on validation --rows multi --seeds 1 --dtype float32 \
        --lr lora=5e-4 --iterations 30 --batch 4 --test-problems 64 --test-samples 2 --curve-every 10 --curve-problems 32 \
        --set "$(sampling "$t")" >> ".data/logs/$p.log" 2>&1 < /dev/null &
      echo "probe $p started (.data/logs/$p.log)"
    fi
  done
  evidence=""
  for t in "${temperatures[@]}"; do
    until [ -n "$(team "$(probe_stamp "$t")")" ]; do sleep 60; done
    read -r s g <<<"$(team "$(probe_stamp "$t")")"
    evidence+="; at $t: $s sampled, $g greedy"
  done
  in_window() { node -e 'const [s, g] = process.argv.slice(1).map(Number); process.exit(s >= 0.1 && s <= 0.5 && g <= 0.5 ? 0 : 1)' "$1" "$2"; }
  temperature=none
  for t in "${temperatures[@]}"; do
    read -r s g <<<"$(team "$(probe_stamp "$t")")"
    if in_window "$s" "$g"; then temperature=$t; break; fi
  done
  printf 'temperature %s\n%s the untrained team on %s%s (window: 0.1-0.5 sampled, <= 0.5 greedy)\n' "$temperature" "$(date -u +%FT%TZ)" "$suite" "$evidence" > "$choice"
fi
cat "$choice"
temperature="$(awk 'NR == 1 {print $2}' "$choice")"
[ "$temperature" != none ] || { echo "no runs: $choice"; exit 1; }

# Re-attaching: refuse while this stamp's benches still run (two would both write its results), and
# bring back whatever of the stack is gone (the stack's policy worker serves the first bench).
if pgrep -f "bench/learning/run.ts --stamp $stamp " >/dev/null; then
  echo "the $stamp benches are running already (pgrep -af 'run.ts --stamp $stamp '): nothing started"; exit 1
fi
# The two engines train one at a time (the host's update lock, services/engine/PROTOCOL.md): two SmolLM2
# updates at once reached 11-13 GB each and thrashed this 24 GB machine. A policy worker already running
# keeps the environment it was started with: restart it (kill it; `stack up` starts it again) to change it.
export TANDEM_UPDATE_LOCK="$PWD/.data/run/update.lock"
node bin/tandem.js stack up
common=(--stamp "$stamp" --suite "$suite" --seeds 3 --parallel 2 --iterations 30 --batch 4 --test-problems 64
  --test-samples 2 --curve-every 10 --curve-problems 32 --lr lora=5e-4 --dtype float32 --set "$(sampling "$temperature")")
if ! curl -sf http://127.0.0.1:9466/metrics >/dev/null; then
  setsid nohup node --import tsx services/policy-worker.ts --task-queue tandem-policy-1 --device cpu --metrics-port 9466 \
    >> .data/logs/policy-worker-1.log 2>&1 < /dev/null &
  until curl -sf http://127.0.0.1:9466/metrics >/dev/null; do sleep 5; done
fi
setsid nohup node --import tsx bench/learning/run.ts "${common[@]}" --rows single,multi,single-grpo,multi-grpo \
  >> ".data/logs/$stamp-a.log" 2>&1 < /dev/null &
setsid nohup node --import tsx bench/learning/run.ts "${common[@]}" --rows at-grpo-l1,at-grpo-l2 --queue tandem-policy-1 \
  --engine-metrics 9466 >> ".data/logs/$stamp-b.log" 2>&1 < /dev/null &
echo "started: .data/logs/$stamp-a.log, .data/logs/$stamp-b.log"

#!/usr/bin/env bash
# Issue 53's table, as decided before any of its RL rows ran (2026-11-29): choose the primary
# sampling from the untrained rows on validation problems, then run every row on the test problems.
#
# 1. The choice (probes on 64 validation problems, each played twice sampled and once greedily,
#    the untrained team `multi` and single agent `single`; `--eval-on validation`):
#      stamp arith2-probe-t10: temperature 1.0, top_p 0.9, top_k 20 (the one-step bench's sampling)
#      stamp arith2-probe-t07: temperature 0.7, top_p 0.9, top_k 20
#    The rule (issue 53 item 2): the untrained team must succeed 10-50% of the time at the primary
#    sampling and at most 50% greedily. Temperature 1.0 if its team success is in [10%, 50%], else
#    0.7 if its is; none in the window, or greedy above 50%: nothing starts (a harder or easier
#    task is needed, chosen again on validation problems).
# 2. The runs (stamp arith2): every row of --suite smollm2-arith2 (bench/learning/rows.ts), 3 seeds,
#    30 iterations of 4 problems (K = 4), LoRA at lr 5e-4, the chosen sampling for training and
#    for the sampled evaluation, 128-token responses; two engines, one per core: the stack's
#    policy worker runs single, multi, single-grpo and multi-grpo, a second one (task queue
#    tandem-policy-1, metrics 9466) the two AT-GRPO rows; two runs at a time on each.
# Waits for the probes' results, decides, records the decision in bench/learning/results/arith2.choice,
# and starts the runs in the background (their logs in .data/logs/arith2-*.log). Re-running it
# re-attaches: the benches skip what the results file holds and attach to running workflows.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
export PATH="$PWD/node_modules/.bin:$PATH"
results=bench/learning/results
choice=$results/arith2.choice

team() { # team STAMP -> "sampled greedy" of the multi row, once the probe has written it
  node -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map(JSON.parse);
    const r = lines.find((l) => l.row === "multi" && l.greedy);
    if (r) console.log(r.success, r.greedy.success);' "$results/$1.jsonl" 2>/dev/null || true
}

if [ ! -f "$choice" ]; then
  until [ -n "$(team arith2-probe-t10)" ] && [ -n "$(team arith2-probe-t07)" ]; do sleep 60; done
  read -r t10 g10 <<<"$(team arith2-probe-t10)"
  read -r t07 g07 <<<"$(team arith2-probe-t07)"
  in_window() { node -e 'const [s, g] = process.argv.slice(1).map(Number); process.exit(s >= 0.1 && s <= 0.5 && g <= 0.5 ? 0 : 1)' "$1" "$2"; }
  if in_window "$t10" "$g10"; then temperature=1.0
  elif in_window "$t07" "$g07"; then temperature=0.7
  else
    printf 'temperature none\n%s the untrained team at temperature 1.0: %s sampled, %s greedy; at 0.7: %s, %s (window: 0.1-0.5 sampled, <= 0.5 greedy)\n' "$(date -u +%FT%TZ)" "$t10" "$g10" "$t07" "$g07" > "$choice"
    cat "$choice"; exit 1
  fi
  printf 'temperature %s\n%s the untrained team at temperature 1.0: %s sampled, %s greedy; at 0.7: %s, %s (window: 0.1-0.5 sampled, <= 0.5 greedy)\n' "$temperature" "$(date -u +%FT%TZ)" "$t10" "$g10" "$t07" "$g07" > "$choice"
fi
cat "$choice"
temperature="$(awk 'NR == 1 {print $2}' "$choice")"
[ "$temperature" = 1.0 ] || [ "$temperature" = 0.7 ] || { echo "no runs: $choice"; exit 1; }

set_="training.max_response_length=128"
for which in train val; do
  set_+=",agent_policy_configs.agent_configs.*.${which}_llm_config.temperature=$temperature"
  set_+=",agent_policy_configs.agent_configs.*.${which}_llm_config.top_p=0.9,agent_policy_configs.agent_configs.*.${which}_llm_config.top_k=20"
done
common=(--stamp arith2 --suite smollm2-arith2 --seeds 3 --parallel 2 --iterations 30 --batch 4 --test-problems 64
  --test-samples 2 --curve-every 10 --curve-problems 32 --lr lora=5e-4 --set "$set_")

if ! curl -sf http://127.0.0.1:9466/metrics >/dev/null; then
  setsid nohup node --import tsx services/policy-worker.ts --task-queue tandem-policy-1 --device cpu --metrics-port 9466 \
    >> .data/logs/policy-worker-1.log 2>&1 < /dev/null &
  until curl -sf http://127.0.0.1:9466/metrics >/dev/null; do sleep 5; done
fi
setsid nohup node --import tsx bench/learning/run.ts "${common[@]}" --rows single,multi,single-grpo,multi-grpo \
  >> .data/logs/arith2-a.log 2>&1 < /dev/null &
setsid nohup node --import tsx bench/learning/run.ts "${common[@]}" --rows at-grpo-l1,at-grpo-l2 --queue tandem-policy-1 \
  --engine-metrics 9466 >> .data/logs/arith2-b.log 2>&1 < /dev/null &
echo "started: .data/logs/arith2-a.log, .data/logs/arith2-b.log"

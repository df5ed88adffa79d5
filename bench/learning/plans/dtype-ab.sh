#!/usr/bin/env bash
# Issue 52 item 3: the learning bench's SmolLM2 iteration time, float32 against bf16, alternating,
# alone on a machine with bf16 units. dtype.sh's run (the one-step arithmetic's AT-GRPO L2, seed 0)
# cut to 3 iterations with 4 validation and 4 test problems, on the stack's policy worker, one run
# at a time: pair 1 float32 then bf16 (stamps dtype-ab-float32, dtype-ab-bfloat16), pair 2 bf16
# then float32 (dtype-ab2-*), pair 3 float32 then bf16 (dtype-ab3-*), so drift over the hour falls
# on both dtypes alike. Then prints each run's decoding, updating and training time per token.
# Nothing else should run on the machine.
#   bash bench/learning/plans/dtype-ab.sh [PAIRS]   (default 3; about 11 minutes a run on 2 cores)
# Re-running skips the runs whose results files hold them (run.ts's rule) and prints the table.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
export PATH="$PWD/node_modules/.bin:$PATH"
grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo || { echo "this CPU has no bf16 units (avx512_bf16, amx_bf16): nothing to compare" >&2; exit 1; }
node bin/tandem.js stack up
pairs="${1:-3}"
a=agent_policy_configs.agent_configs.*
set_list="env.max_turns=1,training.max_response_length=128,$a.train_llm_config.top_p=0.9,$a.train_llm_config.top_k=20"
set_list+=",$a.val_llm_config.temperature=1.0,$a.val_llm_config.top_p=0.9,$a.val_llm_config.top_k=20"
common=(--suite smollm2-arith --rows at-grpo-l2 --seeds 1 --iterations 3 --batch 4 --lr lora=5e-4 --test-problems 4
  --test-samples 1 --curve-every 100 --curve-problems 4 --set "$set_list")
stamp() { if [ "$1" = 1 ]; then echo dtype-ab; else echo "dtype-ab$1"; fi; }
for p in $(seq 1 "$pairs"); do
  if [ $((p % 2)) = 1 ]; then order="float32 bfloat16"; else order="bfloat16 float32"; fi
  for d in $order; do
    echo "pair $p: $d ($(date -u +%H:%M:%S))"
    node --import tsx bench/learning/run.ts --stamp "$(stamp "$p")-$d" --dtype "$d" "${common[@]}"
  done
done
# Per generated token: decoding (the engine's busy time outside updates) and the run's training wall;
# per trained token: updating. Tokens differ between runs (sampling), so the ratios are per token.
echo "pair  dtype     decoding ms/token  updating ms/trained token  training ms/token"
for p in $(seq 1 "$pairs"); do
  for d in float32 bfloat16; do
    jq -r --arg p "$p" --arg d "$d" 'select(.kind == "final") |
      [$p, $d, (1000 * .engine.busyS / .engine.tokens), (1000 * .engine.updateS / .tokens), (1000 * .engine.seconds / .engine.tokens)]
      | map(if type == "number" then (. * 10 | round / 10 | tostring) else . end) | join("  ")' \
      "bench/learning/results/$(stamp "$p")-$d.jsonl"
  done
done

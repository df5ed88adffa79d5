#!/usr/bin/env bash
# Issue 52 item 4: does learning suffer in bf16? The one-step arithmetic's AT-GRPO L2 (--suite
# smollm2-arith, seed 0, 30 iterations of 4 problems, LoRA at lr 5e-4, issue 39's settings as
# bench/learning/results/smollm2-arith-p.jsonl's first line holds them) trained twice at once on
# one machine with bf16 units: float32 (stamp dtype-float32) on the stack's policy worker, bfloat16
# (stamp dtype-bfloat16: a bf16 frozen base under float32 LoRA adapters) on a second one (task queue
# tandem-policy-1, metrics 9466), one engine (one torch thread) per core. Both draw the same
# problems with the same sampling seeds; only the dtype differs. Each validates on 32 problems at
# iterations 0, 10, 20 and 30, then plays the 64 test problems twice sampled and once greedily; the
# results files record each run's engine time (decoding, updating) beside its curve.
# Logs: .data/logs/dtype-{float32,bfloat16}.log. Re-running re-attaches (the benches skip what
# their results files hold and attach to running workflows).
#   bash bench/learning/plans/dtype.sh [FIRST_SEED [SEEDS]]: seeds FIRST_SEED .. SEEDS-1 (default 0 1:
# seed 0), one after another in each process (about 2 hours a seed on a 2-core machine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../../.."
export PATH="$PWD/node_modules/.bin:$PATH"
grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo || { echo "this CPU has no bf16 units (avx512_bf16, amx_bf16): its bf16 would be emulated, about 10x slower (bench/RESULTS.md, engine_dtype)" >&2; exit 1; }
if pgrep -f "bench/learning/run.ts --stamp dtype-" >/dev/null; then
  echo "the dtype benches are running already (pgrep -af 'run.ts --stamp dtype-'): nothing started"; exit 1
fi
node bin/tandem.js stack up
mkdir -p .data/logs
a=agent_policy_configs.agent_configs.*
set_list="env.max_turns=1,training.max_response_length=128,$a.train_llm_config.top_p=0.9,$a.train_llm_config.top_k=20"
set_list+=",$a.val_llm_config.temperature=1.0,$a.val_llm_config.top_p=0.9,$a.val_llm_config.top_k=20"
first_seed="${1:-0}" seeds="${2:-1}"
common=(--suite smollm2-arith --rows at-grpo-l2 --first-seed "$first_seed" --seeds "$seeds" --iterations 30 --batch 4 --lr lora=5e-4 --test-problems 64
  --test-samples 2 --curve-every 10 --curve-problems 32 --set "$set_list")
if ! curl -sf http://127.0.0.1:9466/metrics >/dev/null; then
  setsid nohup node --import tsx services/policy-worker.ts --task-queue tandem-policy-1 --device cpu --metrics-port 9466 \
    >> .data/logs/policy-worker-1.log 2>&1 < /dev/null &
  until curl -sf http://127.0.0.1:9466/metrics >/dev/null; do sleep 5; done
fi
setsid nohup node --import tsx bench/learning/run.ts --stamp dtype-float32 --dtype float32 "${common[@]}" \
  >> .data/logs/dtype-float32.log 2>&1 < /dev/null &
setsid nohup node --import tsx bench/learning/run.ts --stamp dtype-bfloat16 --dtype bfloat16 "${common[@]}" --queue tandem-policy-1 \
  --engine-metrics 9466 >> .data/logs/dtype-bfloat16.log 2>&1 < /dev/null &
echo "started: .data/logs/dtype-float32.log, .data/logs/dtype-bfloat16.log"

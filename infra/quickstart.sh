#!/usr/bin/env bash
# The main job: set up, bring the local stack up (beside building the model), and train the
# default config, printing one line per iteration, with an evaluation on held-out problems before
# training, after 10 iterations and after the last (20). The stack stays up afterwards
# (`npx tandem stack down` stops it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash infra/setup.sh --no-browser --no-models  # no browser; the one model the quickstart trains, next
export PATH="$root/node_modules/.bin:$PATH"  # the project's Node and tools (infra/setup.sh)
# The model (on a fresh machine a 2-3 minute warm start) is built while the stack comes up; the
# stack's output is shown when both are done. The policy worker checks the models it is given at
# its start (TANDEM_POLICY_MODELS, default tandem-tiny), which does not exist yet: here it is given
# none, and the run below starts once the model is built (its load names a missing model).
stack_log="$(mktemp)"
trap 'rm -f "$stack_log"' EXIT
TANDEM_POLICY_MODELS= node bin/tandem.js stack up > "$stack_log" 2>&1 &
stack_pid=$!
printf '\n== quickstart: the model, while the stack comes up\n'
bash infra/models.sh tandem-tiny
wait "$stack_pid" || { cat "$stack_log" >&2; echo "quickstart: tandem stack up failed (output above)" >&2; exit 1; }
printf '\n== quickstart: the stack\n'
cat "$stack_log"
node bin/tandem.js train configs/planpath/planpath_L1_prompt.yaml training.total_training_steps=20 training.val_freq=10 \
  training.val_problems=128 training.validate_sample_num=1 --wait "$@"

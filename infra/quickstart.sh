#!/usr/bin/env bash
# The main job: set up, bring the local stack up, and train the default config, printing one
# line per iteration, with an evaluation on held-out problems before training, after 10
# iterations and after the last (20). The stack stays up afterwards (`npx tandem stack down` stops it).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash infra/setup.sh --no-browser tandem-tiny  # only the model the quickstart trains; no browser
export PATH="$root/node_modules/.bin:$PATH"  # the project's Node and tools (infra/setup.sh)
node bin/tandem.js stack up
node bin/tandem.js train configs/planpath/planpath_L1_prompt.yaml training.total_training_steps=20 training.val_freq=10 \
  training.val_problems=128 training.validate_sample_num=2 --wait "$@"

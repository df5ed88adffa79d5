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
# (Since 2026-11-29, 17:00 UTC, the steps are table.sh's, which the later plans share: the same
# rule and runs. This plan's probes were started by hand, with the team and the single agent:
#   run.ts --stamp arith2-probe-tNN --suite smollm2-arith2 --eval-on validation --rows single,multi
#     --seeds 1 --parallel 2 and the settings each results file's first line records.)
exec bash "$(dirname "${BASH_SOURCE[0]}")/table.sh" smollm2-arith2 arith2 1.0 0.7

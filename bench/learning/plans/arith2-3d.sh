#!/usr/bin/env bash
# Issue 53's table on two-step arithmetic with three-digit operands (--suite smollm2-arith2-3d),
# decided 2026-11-29 before any of its probes ran: the two-digit task (arith2.sh) left the untrained
# team above the window greedily (bench/learning/results/arith2.choice), so the sums are harder
# here, and the temperatures tried are 0.7, then 0.5 (the two-digit team at 0.7: about 20% sampled
# against about 60% greedy). table.sh starts the probes (the team, 64 validation problems), applies
# the rule (the first temperature at which the team is 10-50% sampled and at most 50% greedy),
# records it in bench/learning/results/arith2-3d.choice and starts the runs.
# Not needed once the two-digit task's rule has chosen a sampling: then its table runs, not this one.
# (2026-11-29, 17:10 UTC: its probe at 0.7 fell inside the window, greedy 30 of 62 with at most 2
# to come; this plan's probes were stopped 35 minutes in, before any of their episodes ended.)
choice="$(dirname "${BASH_SOURCE[0]}")/../results/arith2.choice"
if ! [ -f "$choice" ] || [ "$(head -1 "$choice")" != "temperature none" ]; then
  echo "the two-digit task's table (arith2.sh) is the one that runs, or may be: see $choice"; exit 0
fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/table.sh" smollm2-arith2-3d arith2-3d 0.7 0.5

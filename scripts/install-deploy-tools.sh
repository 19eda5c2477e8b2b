#!/usr/bin/env bash
# Install the deploy checkers of `npm run check:deploy` (cfn-lint, checkov, parliament, schemathesis)
# at the versions of scripts/deploy-checks/requirements.txt and constraints.txt into a Python virtual
# environment outside the repository; print its path. Test tools only (PyPI), never product code.
#
# Location: $EXTAGENTS_DEPLOY_VENV, default ${XDG_CACHE_HOME:-$HOME/.cache}/extagents/deploy-venv.
# Idempotent: a venv whose stamp matches the sha256 of both files is reused without pip.
# Exit status: 0 with the path on stdout; 1 (message on stderr) when python3 or pip fails.
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
REQUIREMENTS="$HERE/deploy-checks/requirements.txt"
CONSTRAINTS="$HERE/deploy-checks/constraints.txt"
VENV="${EXTAGENTS_DEPLOY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/extagents/deploy-venv}"
STAMP="$VENV/.extagents-stamp"
WANT="$(cat "$REQUIREMENTS" "$CONSTRAINTS" | sha256sum | cut -d' ' -f1)"

if [[ -x "$VENV/bin/python" && -f "$STAMP" && "$(cat "$STAMP")" == "$WANT" ]]; then
  echo "$VENV"
  exit 0
fi

PY="$(command -v python3 || true)"
if [[ -z "$PY" ]]; then
  echo "install-deploy-tools: python3 (3.9 or newer, with the venv module) is needed" >&2
  exit 1
fi
"$PY" -m venv "$VENV" >&2 || { echo "install-deploy-tools: could not create a virtual environment at $VENV (Debian: apt-get install python3-venv)" >&2; exit 1; }
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS" -c "$CONSTRAINTS" >&2 ||
  { echo "install-deploy-tools: pip could not install $REQUIREMENTS into $VENV" >&2; exit 1; }
echo "$WANT" > "$STAMP"
echo "$VENV"

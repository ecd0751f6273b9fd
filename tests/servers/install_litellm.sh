#!/usr/bin/env bash
# Install LiteLLM's proxy into its own venv (default: .venv-litellm beside the repo's
# .venv). LiteLLM pins versions of packages sdtt also uses (openai, pydantic, httpx...),
# so it gets a venv of its own; the real-server tests run its `litellm` executable
# from there. Usage: bash tests/servers/install_litellm.sh [VENV_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
venv="${1:-$here/.venv-litellm}"
python3 -m venv "$venv"
"$venv/bin/pip" install -q 'litellm[proxy]'
# LITELLM_LOCAL_MODEL_COST_MAP: without it LiteLLM downloads its price list at every start.
LITELLM_LOCAL_MODEL_COST_MAP=True "$venv/bin/litellm" --help >/dev/null
echo "LiteLLM proxy installed: $venv/bin/litellm"

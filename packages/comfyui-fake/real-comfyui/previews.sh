#!/usr/bin/env bash
# Checks that the CPU ComfyUI's preview frames reach the comfyui engine (live previews).
#
#   ./previews.sh [URL]      (URL default http://127.0.0.1:8188)
#
# The server must run with a preview method: start it with `--preview-method auto` (or latent2rgb)
# added to the chroot's start command. Uses the random SD 1.5 checkpoint setup.sh made.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
URL=${1:-http://127.0.0.1:8188}
curl -fsS -o /dev/null "$URL/system_stats" || { echo "no ComfyUI answers at $URL (start it first, with --preview-method auto)" >&2; exit 2; }
export COMFYUI_CHECKPOINTS=sd1.5=random-sd15.safetensors
cd "$HERE/../../.."
exec npm run --silent test:comfyui-previews -- "$URL"

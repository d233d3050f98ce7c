#!/usr/bin/env bash
# Runs the comfyui engine's pipeline suite against the CPU ComfyUI with the random models setup.sh made.
#
#   ./run.sh [URL] [--only TEXT]... [--name NAME]...   (URL default http://127.0.0.1:8188; the server must be running)
#
# COMFY_CPU_BASE (default /opt/comfyui-cpu) locates models/, where the training case stores its LoRA.
# COMFYUI_STALL_SECONDS (default here 1800): on this CPU one VAE pass at a megapixel sends no message
# for longer than the API's five minutes, and the runner would give a working prompt up as stalled.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BASE=${COMFY_CPU_BASE:-/opt/comfyui-cpu}
URL=http://127.0.0.1:8188
if [ $# -gt 0 ] && [ "${1#http}" != "$1" ]; then URL=$1; shift; fi
curl -fsS -o /dev/null "$URL/system_stats" || { echo "no ComfyUI answers at $URL (start it first)" >&2; exit 2; }
export COMFYUI_CHECKPOINTS=sd1.5=random-sd15.safetensors,sd1.5:lcm=detail-tweaker.safetensors,sdxl=random-sdxl.safetensors,sdxl-lightning=random-sdxl.safetensors,sd3=random-sd3.safetensors,sd3.5=random-sd3.5.safetensors,flux-schnell=random-flux-schnell.safetensors
export COMFYUI_MODELS_DIR=$BASE/rootfs/opt/comfy/ComfyUI/models
export COMFYUI_STALL_SECONDS=${COMFYUI_STALL_SECONDS:-1800}
cd "$HERE/../../.."
exec npm run --silent test:comfyui -- "$URL" "$@"

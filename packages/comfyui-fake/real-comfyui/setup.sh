#!/usr/bin/env bash
# Sets up the real-server suite on a machine where the CPU ComfyUI chroot exists: installs the node
# packs at their pinned commits (install-packs.sh) and the face stack they import
# (install-insightface.sh), then writes every random-weight model into ComfyUI's models/ (and where
# packs look for theirs) and verifies each (make_models.py, make_face_models.py, then make_rmbg_models.py).
#
#   MIRROR_ROOT=/work/.mirror ./setup.sh [COMFY_CPU_BASE] [make_models.py options, e.g. --only sdxl]
#
# COMFY_CPU_BASE (default /opt/comfyui-cpu): the folder holding the Debian chroot rootfs/ with ComfyUI
# at /opt/comfy/ComfyUI. Idempotent: a pack at its commit and a model file that exists are left alone.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BASE=${COMFY_CPU_BASE:-/opt/comfyui-cpu}
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then BASE=$1; shift; fi
ROOTFS=$BASE/rootfs
IN=/opt/comfy
[ -d "$ROOTFS$IN/ComfyUI" ] || { echo "no ComfyUI at $ROOTFS$IN/ComfyUI (build the CPU chroot first)" >&2; exit 1; }
mountpoint -q "$ROOTFS/proc" || mount -t proc proc "$ROOTFS/proc"
mountpoint -q "$ROOTFS/dev" || mount --bind /dev "$ROOTFS/dev"
cp -L /etc/resolv.conf "$ROOTFS/etc/resolv.conf" 2>/dev/null || true

COMFY_CPU_BASE=$BASE "$HERE/install-packs.sh" "$BASE"
COMFY_CPU_BASE=$BASE "$HERE/install-insightface.sh" "$BASE"

mkdir -p "$ROOTFS$IN/imagegen"
cp "$HERE/make_models.py" "$HERE/make_face_models.py" "$HERE/make_rmbg_models.py" "$ROOTFS$IN/imagegen/"
# RMBG-2.0's single-file code is assembled by make_rmbg_models.py from BiRefNet's own repository at the
# last commit before RMBG-2.0's release (2024-10-25), whose Swin-L configuration RMBG-2.0 ships.
BIREFNET_COMMIT=74c35c0dd25e01edaf72cddb1892a43faa8d0627
MIRROR_ROOT=${MIRROR_ROOT:-/work/.mirror}
mirror=$MIRROR_ROOT/ZhengPeng7+BiRefNet/repo
[ -d "$mirror" ] || mirror=$MIRROR_ROOT/ZhengPeng7+BiRefNet
rm -rf "$ROOTFS$IN/imagegen/birefnet-src" && mkdir -p "$ROOTFS$IN/imagegen/birefnet-src"
git --git-dir="$mirror" archive "$BIREFNET_COMMIT" config.py dataset.py models | tar -x -C "$ROOTFS$IN/imagegen/birefnet-src"
echo "$BIREFNET_COMMIT" > "$ROOTFS$IN/imagegen/birefnet-src/COMMIT"
# make_models.py's options (--only NAME...) go to every script; each rejects names it does not know,
# so with --only run the one that makes the model instead (SCRIPT=make_face_models.py).
for script in ${SCRIPT:-make_models.py make_face_models.py make_rmbg_models.py}; do
  chroot "$ROOTFS" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin \
    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1 OMP_NUM_THREADS=${COMFY_THREADS:-2} \
    sh -c "cd $IN/ComfyUI && exec python3 $IN/imagegen/$script $IN/ComfyUI/models $*"
done

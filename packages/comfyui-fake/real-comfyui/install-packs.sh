#!/usr/bin/env bash
# Installs the node packs the compilers use, each at the commit comfyui-packs/README.md pins, from
# bare git mirrors (no network), into ComfyUI's custom_nodes/, and the Debian packages they import.
#
#   MIRROR_ROOT=/work/.mirror ./install-packs.sh [COMFY_CPU_BASE]
#
# COMFY_CPU_BASE (default /opt/comfyui-cpu) holds the chroot rootfs/ with ComfyUI at
# /opt/comfy/ComfyUI, as the CPU harness builds it. Mirrors: $MIRROR_ROOT/OWNER+NAME/repo (or
# $MIRROR_ROOT/OWNER+NAME). A pack already at its commit is left alone. No pack's requirements.txt
# is pip-installed: see README.md for what each pack needs and what stands in for it.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BASE=${1:-${COMFY_CPU_BASE:-/opt/comfyui-cpu}}
ROOTFS=$BASE/rootfs
COMFY=$ROOTFS/opt/comfy/ComfyUI
MIRROR_ROOT=${MIRROR_ROOT:-/work/.mirror}
PACKS_README=$HERE/../comfyui-packs/README.md
[ -d "$COMFY/custom_nodes" ] || { echo "no ComfyUI at $COMFY" >&2; exit 1; }

# Debian packages the packs import (python3-opencv: controlnet_aux, IC-Light, RMBG, SAM 2; python3-skimage,
# python3-matplotlib, python3-sklearn: controlnet_aux's annotators; python3-onnxruntime: DWPose, ReActor;
# python3-scipy: RMBG; python3-onnx: insightface, ReActor; python3-wcwidth: ftfy, for PuLID's EVA-CLIP).
APT="python3-opencv python3-skimage python3-matplotlib python3-onnxruntime python3-sklearn python3-onnx python3-wcwidth"
if ! chroot "$ROOTFS" dpkg -s $APT >/dev/null 2>&1; then
  chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
    sh -c "apt-get update -qq && apt-get install -y -q --no-install-recommends $APT && apt-get clean"
fi

# Shims, only where a pack imports something neither Debian nor a local wheel provides (README.md says why).
SITE=$(chroot "$ROOTFS" python3 -c 'import site; print([p for p in site.getsitepackages() if p.startswith("/usr/local")][0])')
mkdir -p "$ROOTFS$SITE"
cp -r "$HERE/shims/iopath" "$ROOTFS$SITE/"

# timm (pure Python; not in Debian): ComfyUI-Florence2's DaViT imports DropPath and trunc_normal_ from
# it. Its package folder, copied from the mirror at a release tag (its build backend, pdm, is not here).
TIMM_REPO=huggingface+pytorch-image-models
TIMM_COMMIT=e44f14d7d2f557b9f3add82ee4f1ed2beefbb30d   # v1.0.15: one timm in the chroot for every pack that imports it
if [ "$(cat "$ROOTFS$SITE/timm/.imagegen-commit" 2>/dev/null)" != "$TIMM_COMMIT" ]; then
  mirror=$MIRROR_ROOT/$TIMM_REPO/repo
  [ -d "$mirror" ] || { echo "timm: no mirror at $mirror (fetch huggingface/pytorch-image-models)" >&2; exit 1; }
  rm -rf "$ROOTFS$SITE/timm"
  git --git-dir="$mirror" archive "$TIMM_COMMIT" timm | tar -x -C "$ROOTFS$SITE"
  echo "$TIMM_COMMIT" > "$ROOTFS$SITE/timm/.imagegen-commit"
fi

# | `file` | owner/name | commit | classes |
grep '^| `' "$PACKS_README" | awk -F'|' '{gsub(/ /,"",$3); gsub(/ /,"",$4); print $3, $4}' |
while read -r repo commit; do
  name=${repo#*/}
  mirror=$MIRROR_ROOT/${repo%%/*}+$name/repo
  [ -d "$mirror" ] || mirror=$MIRROR_ROOT/${repo%%/*}+$name
  dest=$COMFY/custom_nodes/$name
  if [ "$(cat "$dest/.imagegen-commit" 2>/dev/null)" = "$commit" ]; then
    echo "$name: at $commit"; continue
  fi
  [ -d "$mirror" ] || { echo "$name: no mirror at $mirror (fetch $repo)" >&2; exit 1; }
  rm -rf "$dest"; mkdir -p "$dest"
  # The mirrors may omit large blobs (example pictures, bundled weights): archive the files they hold
  # and name the others in .imagegen-missing.
  mapfile -t present < <(git --git-dir="$mirror" ls-tree -r --full-tree "$commit" |
    awk -F'\t' '{split($1, m, " "); print m[3] "\t" $2}' |
    while IFS=$'\t' read -r sha path; do echo "$sha $path"; done |
    git --git-dir="$mirror" cat-file --batch-check='%(objectname) %(objecttype) %(rest)' 2>/dev/null |
    awk '$2 != "missing" {sub(/^[^ ]+ [^ ]+ /, ""); print}')
  git --git-dir="$mirror" ls-tree -r --full-tree --name-only "$commit" | sort > "$dest/.imagegen-all"
  printf '%s\n' "${present[@]}" | sort | comm -23 "$dest/.imagegen-all" - > "$dest/.imagegen-missing"
  rm "$dest/.imagegen-all"
  git --git-dir="$mirror" archive "$commit" -- "${present[@]}" | tar -x -C "$dest"
  echo "$commit" > "$dest/.imagegen-commit"
  echo "$name: installed $commit ($(wc -l < "$dest/.imagegen-missing") files absent from the mirror)"
done

#!/usr/bin/env bash
# Installs the face stack the face packs (ReActor, PuLID, InstantID, IPAdapter_plus's FaceID) import,
# into the CPU ComfyUI chroot, from bare git mirrors (no network) and Debian packages:
#   - insightface's python-package at v0.7.3 (the release the packs are written against), copied
#     into site-packages without its compiled mesh renderer (shims/insightface-mesh stands in);
#   - segment_anything (ReActor's masking helper imports it), pure Python, copied likewise;
#   - shims/albumentations (README.md says why);
#   - for PuLID: facexlib (its face detector and parser), timm and ftfy (its EVA-CLIP code), pure
#     Python, copied likewise.
# The Debian packages they import (python3-onnx, python3-onnxruntime, python3-wcwidth, ...) come
# with install-packs.sh, which runs first.
#
#   MIRROR_ROOT=/work/.mirror ./install-insightface.sh [COMFY_CPU_BASE]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
BASE=${1:-${COMFY_CPU_BASE:-/opt/comfyui-cpu}}
ROOTFS=$BASE/rootfs
MIRROR_ROOT=${MIRROR_ROOT:-/work/.mirror}
INSIGHTFACE_REPO=deepinsight+insightface
INSIGHTFACE_COMMIT=668e8d474267bdd2c9769c2cbbab3fe4d1db15a6   # "add v0.7.3": the python-package as released as 0.7.3
SAM_REPO=facebookresearch+segment-anything
SAM_COMMIT=dca509fe793f601edb92606367a655c15ac00fdf           # main, 2024-09 (segment_anything 1.0)
FACEXLIB_REPO=xinntao+facexlib
FACEXLIB_COMMIT=260620ae93990a300f4b16448df9bb459f1caba9      # master, 2023-04 (0.3.0)
TIMM_REPO=huggingface+pytorch-image-models
TIMM_COMMIT=e44f14d7d2f557b9f3add82ee4f1ed2beefbb30d          # v1.0.15 (2025-02; torch 2.6 is supported)
FTFY_REPO=rspeer+python-ftfy
FTFY_COMMIT=5340af6746ff655a9cd7cb2b50c2fd0b35bb91d3          # v6.3.1
[ -d "$ROOTFS/opt/comfy/ComfyUI" ] || { echo "no ComfyUI in $ROOTFS" >&2; exit 1; }

SITE=$(chroot "$ROOTFS" python3 -c 'import site; print([p for p in site.getsitepackages() if p.startswith("/usr/local")][0])')
mkdir -p "$ROOTFS$SITE"

mirror_of() { if [ -d "$MIRROR_ROOT/$1/repo" ]; then echo "$MIRROR_ROOT/$1/repo"; else echo "$MIRROR_ROOT/$1"; fi; }

# copy_package REPO COMMIT PATH_IN_REPO NAME: the package folder at that commit, as site-packages/NAME.
copy_package() {
  local mirror dest
  mirror=$(mirror_of "$1"); dest=$ROOTFS$SITE/$4
  if [ "$(cat "$dest/.imagegen-commit" 2>/dev/null)" = "$2" ]; then echo "$4: at $2"; return; fi
  [ -d "$mirror" ] || { echo "$4: no mirror at $mirror (fetch ${1/+//})" >&2; exit 1; }
  local tmp; tmp=$(mktemp -d)
  # The tree alone: the mirrors may omit blobs elsewhere in the repository (notebooks, pictures).
  git --git-dir="$mirror" archive "$2:$3" | tar -x -C "$tmp"
  rm -rf "$dest"; mv "$tmp" "$dest"; chmod 755 "$dest"
  echo "$2" > "$dest/.imagegen-commit"
  echo "$4: installed $2"
}
copy_package "$INSIGHTFACE_REPO" "$INSIGHTFACE_COMMIT" python-package/insightface insightface
copy_package "$SAM_REPO" "$SAM_COMMIT" segment_anything segment_anything
copy_package "$FACEXLIB_REPO" "$FACEXLIB_COMMIT" facexlib facexlib
# facexlib's setup.py writes its version module; copied as a folder it has none.
[ -f "$ROOTFS$SITE/facexlib/version.py" ] ||
  printf "__version__ = '0.3.0'\n__gitsha__ = '%s'\n" "${FACEXLIB_COMMIT:0:7}" > "$ROOTFS$SITE/facexlib/version.py"
copy_package "$TIMM_REPO" "$TIMM_COMMIT" timm timm
copy_package "$FTFY_REPO" "$FTFY_COMMIT" ftfy ftfy
cp "$HERE/shims/insightface-mesh/mesh_core_cython.py" "$ROOTFS$SITE/insightface/thirdparty/face3d/mesh/cython/"
cp -r "$HERE/shims/albumentations" "$ROOTFS$SITE/"

chroot "$ROOTFS" /usr/bin/env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin \
  python3 -c 'import insightface, insightface.app, segment_anything, facexlib, timm, ftfy; print("insightface", insightface.__version__, "facexlib", facexlib.__version__, "timm", timm.__version__, "ftfy", ftfy.__version__, "import")'

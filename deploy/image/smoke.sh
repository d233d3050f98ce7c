#!/usr/bin/env bash
# Builds the image for real and runs the product from it, on a machine that can build images but
# neither pull them nor run containers (CI, as root, with Debian's podman and debootstrap):
#
# 1. a base image made here: a minimal Debian of the machine's release (debootstrap, from the mirror
#    the machine's apt configuration names) with this machine's own `node` and `npm`, imported
#    with `podman import`;
# 2. the root Dockerfile built on it (`--build-arg BASE=...`, `--isolation chroot`), tagged as
#    the manifests name it, registry.example.com/imagegen:1.0.0;
# 3. the image's filesystem mounted (`podman image mount`) and the image's own command started
#    in it by chroot, as the image's user, with its environment, on the bundled PostgreSQL;
# 4. checks: /health, one sandbox task from submission to its PNG, and a docs page.
#
# Usage: deploy/image/smoke.sh [--reuse]   (IMAGE_SMOKE_DIR: work folder, default .tmp/image-smoke)
#
# --reuse hands the build what this checkout already made, where the Dockerfile takes it in place
# of a stage: the machine's npm cache (the npm-cache stage: packages are read from it instead of
# downloaded again) and the docs site this checkout built (packages/docs/build, the docs-site
# stage: its build is skipped). CI passes it right after `npm test` built that site from the same
# sources. Everything else is built in the image as without it: the dependencies installed by npm
# ci on the base, the TypeScript build, the runtime stage.
set -euo pipefail
cd "$(dirname "$0")/../.."

reuse=()
if [ "${1:-}" = --reuse ]; then
  [ -f packages/docs/build/404.html ] || { echo "smoke: --reuse needs the built site (npm run build:docs)" >&2; exit 2; }
  reuse=(--build-context "npm-cache=$(npm config get cache)" --build-context docs-site=packages/docs/build)
elif [ -n "${1:-}" ]; then
  echo "usage: deploy/image/smoke.sh [--reuse]" >&2
  exit 2
fi

IMAGE=registry.example.com/imagegen:1.0.0
NODE_VERSION=$(node -p 'process.versions.node')
BASE=localhost/imagegen-base:node-$NODE_VERSION
WORK=$(realpath -m "${IMAGE_SMOKE_DIR:-.tmp/image-smoke}")
# The base is the machine's own Debian release (the node binary copied into it was built for
# that C library), from the mirror the machine's apt is configured with (DEBIAN_MIRROR overrides).
SUITE=$(. /etc/os-release && echo "$VERSION_CODENAME")
# (apt's own reading of its sources, either format, without downloading anything).
MIRROR=${DEBIAN_MIRROR:-$(apt-get update --print-uris 2>/dev/null |
  sed -n "s|^'\(.*\)/dists/$SUITE/InRelease'.*|\1|p" | head -n 1)}
[ -n "$SUITE" ] && [ -n "$MIRROR" ] || {
  echo "smoke: no apt source for this machine's release (${SUITE:-unknown}); set DEBIAN_MIRROR" >&2
  exit 1
}
API_PORT=${SMOKE_API_PORT:-18700}
DOCS_PORT=${SMOKE_DOCS_PORT:-18701}
KEY=ig_imageSmokeCheckKey0123456789
# Each step's heading, and the time the one before took (a slow step shows in every CI log).
step_started=
step() {
  local now
  now=$(date +%s)
  [ -n "$step_started" ] && printf '   (%d s)\n' $((now - step_started))
  step_started=$now
  printf '\n== %s\n' "$*"
}

mkdir -p "$WORK"

# 1. The base: Debian's minbase (a shell, coreutils, passwd for useradd) plus the machine's node.
if ! podman image exists "$BASE"; then
  step "base image $BASE"
  rootfs=$WORK/rootfs
  rm -rf "$rootfs"
  debootstrap --variant=minbase "$SUITE" "$rootfs" "$MIRROR" >"$WORK/debootstrap.log"
  npm_dir=$(npm root -g)/npm
  install -D "$(command -v node)" "$rootfs/usr/local/bin/node"
  mkdir -p "$rootfs/usr/local/lib/node_modules"
  cp -a "$npm_dir" "$rootfs/usr/local/lib/node_modules/npm"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  # The machine's trusted certificates too, so that npm in the build reaches the registry as it
  # does here (through a proxy whose certificate authority the machine trusts, say).
  cas=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
  ca_env=()
  if [ -f "$cas" ]; then
    install -D -m 644 "$cas" "$rootfs/etc/ssl/certs/machine-ca-certificates.crt"
    ca_env=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/machine-ca-certificates.crt')
  fi
  tar -C "$rootfs" -c . | podman import "${ca_env[@]}" \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["node"]' - "$BASE" >/dev/null
  rm -rf "$rootfs"
fi

# 2. The image.
step "podman build $IMAGE (BASE=$BASE)"
# The docker format: OCI image configs have no HEALTHCHECK, and podman drops it from them.
# chroot isolation keeps the caller's limit on open files (often 1024): npm ci reading its cache
# opens far more at once (EMFILE), so the build gets a higher one.
podman build --isolation chroot --format docker --ulimit nofile=65536:65536 --build-arg "BASE=$BASE" \
  "${reuse[@]}" -t "$IMAGE" .
size=$(podman image inspect "$IMAGE" --format '{{.Size}}')
echo "image size: $((size / 1024 / 1024)) MiB"

# 3. Its filesystem, and the command, user, directory and environment it declares.
step "start the image's command from its filesystem"
root=$(podman image mount "$IMAGE")
data=$(mktemp -d "$WORK/data.XXXXXX")
pid=
cleanup() {
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  for m in data tmp dev/shm dev proc; do umount "$root/$m" 2>/dev/null || true; done
  podman image unmount "$IMAGE" >/dev/null || true
  rm -rf "$data"
}
trap cleanup EXIT
# (podman shows the docker-format HEALTHCHECK beside Config, not in it)
image=$(podman image inspect "$IMAGE")
field() { node -e "const [i] = JSON.parse(process.argv[1]), c = i.Config; console.log($1)" "$image"; }
[ "$(field 'i.Healthcheck?.Test?.join(" ")')" != undefined ] || { echo "the image has no HEALTHCHECK" >&2; exit 1; }
echo "HEALTHCHECK: $(field 'i.Healthcheck.Test.slice(1).join(" ").slice(0, 100)')..."
user=$(field c.User)
workdir=$(field c.WorkingDir)
mapfile -t command < <(field "c.Cmd.join('\n')")
mapfile -t environment < <(field "c.Env.join('\n')")
uid=$(chroot "$root" id -u "$user")
gid=$(chroot "$root" id -g "$user")
chown "$uid:$gid" "$data"
mount -t proc proc "$root/proc"
mount --bind /dev "$root/dev"
mount --make-private "$root/dev" # its own /dev/shm below stays in it
mount -t tmpfs tmpfs "$root/dev/shm"
mount -t tmpfs tmpfs "$root/tmp"
mount --bind "$data" "$root/data"
chroot --userspec="$uid:$gid" "$root" env -i "${environment[@]}" HOME="$workdir" \
  API_HOST=127.0.0.1 API_PORT="$API_PORT" DOCS_PORT="$DOCS_PORT" HEALTH_PORT=$((API_PORT + 2)) \
  PUBLIC_URL="http://127.0.0.1:$API_PORT" IMAGEGEN_API_KEY="$KEY" \
  sh -c 'cd "$1" && shift && exec "$@"' sh "$workdir" "${command[@]}" >"$WORK/product.log" 2>&1 &
pid=$!

# 4. The checks.
fail() {
  echo "FAIL: $*" >&2
  tail -n 40 "$WORK/product.log" >&2
  exit 1
}
step "GET /health"
started=$(date +%s)
until health=$(curl -sf "http://127.0.0.1:$API_PORT/health"); do
  kill -0 "$pid" 2>/dev/null || fail "the product exited"
  [ $(($(date +%s) - started)) -lt 180 ] || fail "no /health after 180 s"
  sleep 1
done
echo "$health" | head -c 300
echo

step "a sandbox task: POST /sd/text2image/v1, then its status, then its image"
submitted=$(curl -sf -X POST "http://127.0.0.1:$API_PORT/sd/text2image/v1" -H "API-Key: $KEY" \
  -H 'Content-Type: application/json' -d '{"prompt":"a lighthouse","negative_prompt":"","samples":1}') ||
  fail "submission refused"
id=$(node -p 'JSON.parse(process.argv[1]).id' "$submitted")
for _ in $(seq 1 120); do
  status=$(curl -sf "http://127.0.0.1:$API_PORT/sd/text2image/v1/status/$id" -H "API-Key: $KEY")
  state=$(node -p 'JSON.parse(process.argv[1]).status' "$status")
  [ "$state" = SUCCESS ] || [ "$state" = FAILURE ] && break
  sleep 1
done
[ "$state" = SUCCESS ] || fail "task $id: $status"
url=$(node -p 'JSON.parse(process.argv[1]).download_urls[0]' "$status")
curl -sf "$url" -o "$WORK/output.png" || fail "no image at $url"
[ "$(head -c 8 "$WORK/output.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$url is no PNG"
echo "task $id: SUCCESS, $(stat -c %s "$WORK/output.png") bytes of PNG"

step "the docs site"
page=$(curl -sf "http://127.0.0.1:$DOCS_PORT/") || fail "no docs page on :$DOCS_PORT"
title=$(grep -o '<title[^>]*>[^<]*</title>' <<<"$page" | head -n 1)
grep -q 'imagegen</title>' <<<"$title" || fail "the docs site's home page has no imagegen title: $title"
echo "$title"
hits=$(curl -sf -X POST "http://127.0.0.1:$DOCS_PORT/1/indexes/*/queries" -H 'Content-Type: application/json' \
  -H 'X-Algolia-Application-Id: imagegen' -H 'X-Algolia-API-Key: search-only-key' \
  -d '{"requests":[{"indexName":"docs","query":"webhook"}]}') || fail "the docs search refused a query"
echo "search for \"webhook\": $(node -p 'JSON.parse(process.argv[1]).results[0].nbHits' "$hits") hits"

step "passed"
echo "image smoke check passed: $IMAGE, $((size / 1024 / 1024)) MiB"

#!/usr/bin/env bash
# build-node-image.sh - a local Node image for command steps, built offline from the host's node.
#
#   bin/build-node-image.sh [--force] [IMAGE]     (IMAGE default local/node:20)
#
# Builds a root filesystem from the host's `node` executable, the shared libraries it links (as
# ldd lists them, with the dynamic loader), busybox-static for `sh` and the usual applets, an
# /etc/passwd with root and nobody (65534, the user command steps run as) and a 1777 /tmp, then
# imports it through the Engine API (POST /images/create?fromSrc=-) with CMD ["node"] and
# PATH=/usr/local/bin:/bin:/usr/bin. Before it reports success it runs `node --version` in a
# container of the new image (no network, as nobody) and removes that container.
# Nothing is downloaded and nothing is pulled: for a user without registry access. A user with
# one can name node:20 in a recipe instead.
#
# Idempotent: when IMAGE exists it does nothing (--force rebuilds and replaces it). Progress goes
# to stderr; only the image reference goes to stdout, so callers can do
#   IMAGE=$(bash bin/build-node-image.sh)
# Needs a Docker Engine answering on RUNTIME_SOCK (npm run runtime:start, as root, starts one) and
# read access to that socket; it does not itself need root.
set -euo pipefail

SOCK=${RUNTIME_SOCK:-/var/run/docker.sock}
NODE_BIN=${NODE_BIN:-$(command -v node || true)}
BUSYBOX=${BUSYBOX:-/bin/busybox}
LOCKFILE=${NODE_IMAGE_LOCKFILE:-${TMPDIR:-/tmp}/agentscm-node-image.lock}
IMAGE=local/node:20
FORCE=0

log() { echo "build-node-image: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
usage() { die "usage: build-node-image.sh [--force] [IMAGE]   (IMAGE like local/node:20)"; }
api() { curl -sS --max-time 120 --unix-socket "$SOCK" "$@"; }
ping_ok() { [ "$(curl -s --max-time 2 --unix-socket "$SOCK" http://localhost/_ping 2>/dev/null)" = OK ]; }
image_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$SOCK" "http://localhost/images/$IMAGE/json" 2>/dev/null || true; }
image_id() { api "http://localhost/images/$IMAGE/json" | sed -n 's/^{"Id":"\([^"]*\)".*/\1/p'; }
enc() { node -e 'process.stdout.write(encodeURIComponent(process.argv[1]))' "$1"; }

image_set=0
for arg in "$@"; do
  case "$arg" in
    --force) FORCE=1 ;;
    -h|--help) usage ;;
    -*) usage ;;
    *) [ $image_set = 0 ] || usage; IMAGE=$arg; image_set=1 ;;
  esac
done
[[ "$IMAGE" =~ ^[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9_][A-Za-z0-9_.-]*)?$ ]] ||
  die "image reference '$IMAGE' is not of the form name[:tag] (lower-case name, e.g. local/node:20)"
case "$IMAGE" in *:*) ;; *) IMAGE="$IMAGE:latest" ;; esac
repo=${IMAGE%:*}; tag=${IMAGE##*:}

command -v curl >/dev/null 2>&1 || die "curl is missing (apt-get install curl, or npm run runtime:start as root)"
ping_ok || die "no Docker Engine answers on $SOCK: start one as root with npm run runtime:start (or set RUNTIME_SOCK)"

code=$(image_code)
if [ "$code" = 200 ] && [ $FORCE = 0 ]; then
  log "image $IMAGE present (--force rebuilds it)"
  echo "$IMAGE"
  exit 0
fi
# Serialize concurrent builds (parallel test processes, CI steps); the first one builds.
exec 9>>"$LOCKFILE"
if command -v flock >/dev/null 2>&1; then flock 9; fi
code=$(image_code)
if [ "$code" = 200 ] && [ $FORCE = 0 ]; then
  log "image $IMAGE present (built while waiting for $LOCKFILE)"
  echo "$IMAGE"
  exit 0
fi
old_id=""
[ "$code" = 200 ] && old_id=$(image_id)

[ -n "$NODE_BIN" ] || die "no node executable on PATH (set NODE_BIN)"
node_exe=$(readlink -f "$NODE_BIN")
[ -x "$node_exe" ] || die "$NODE_BIN is not an executable"
version=$("$node_exe" --version) || die "$node_exe --version failed"
[ -x "$BUSYBOX" ] || die "$BUSYBOX missing (Debian package busybox-static; npm run runtime:start installs it)"
"$BUSYBOX" --list >/dev/null 2>&1 || die "$BUSYBOX is not a busybox binary"
if [ $image_set = 0 ] && [ "${version%%.*}" != v20 ]; then
  log "warning: the host's node is $version but the default tag says 20 (name the image, e.g. local/node:${version%%.*})"
fi
log "building $IMAGE from $node_exe ($version) and $BUSYBOX"
started=$SECONDS

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,etc,tmp,proc,sys,dev,root,usr/local/bin}
cp "$BUSYBOX" "$root/bin/busybox"
for a in $("$root/bin/busybox" --list); do [ "$a" = busybox ] || ln -s busybox "$root/bin/$a"; done
ln -s ../bin "$root/usr/bin"
cp "$node_exe" "$root/usr/local/bin/node"
ln -s /usr/local/bin/node "$root/bin/node"   # also /usr/bin/node, through the /usr/bin link

# The libraries node links, and the dynamic loader, each at the path the loader looks for it.
ldd_out=$(ldd "$node_exe" 2>&1) || true
case "$ldd_out" in *"not a dynamic executable"*|*"statically linked"*) ldd_out="" ;; esac
if grep -q 'not found' <<<"$ldd_out"; then die "node links libraries that are missing on this host: $(grep 'not found' <<<"$ldd_out" | tr -s ' \t' ' ')"; fi
libs=0
while read -r first arrow target _; do
  if [ "$arrow" = "=>" ]; then path=$target; else path=$first; fi
  case "$path" in /*) ;; *) continue ;; esac   # linux-vdso.so.1 lives in the kernel
  [ -e "$root$path" ] && continue
  mkdir -p "$root$(dirname "$path")"
  cp -L "$path" "$root$path"
  libs=$((libs + 1))
done <<<"$ldd_out"
log "copied node and $libs shared libraries ($(du -sh "$root" | cut -f1) in all)"

chmod 1777 "$root/tmp"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"

changes="changes=$(enc 'CMD ["node"]')&changes=$(enc 'ENV PATH=/usr/local/bin:/bin:/usr/bin')"
changes="$changes&changes=$(enc "LABEL io.agentscm.node-version=$version")"
resp=$(tar --numeric-owner --owner=0 --group=0 --mtime=@0 --sort=name -C "$root" -c . |
  api -X POST -H 'Content-Type: application/x-tar' --data-binary @- \
    "http://localhost/images/create?fromSrc=-&repo=$(enc "$repo")&tag=$(enc "$tag")&$changes")
case "$resp" in *'"error'*|*'"message"'*) die "import failed: $resp";; esac
[ "$(image_code)" = 200 ] || die "image $IMAGE still missing after import: $resp"
new_id=$(image_id)
log "imported $IMAGE ($new_id) in $((SECONDS - started))s"

# Smoke check: node starts in the image as the user command steps run as, without a network.
name="agentscm-node-image-check-$$"
body='{"Image":"'"$new_id"'","Cmd":["node","--version"],"User":"65534:65534","HostConfig":{"NetworkMode":"none"}}'
create=$(api -X POST -H 'Content-Type: application/json' -d "$body" "http://localhost/containers/create?name=$name")
case "$create" in *'"Id"'*) ;; *) die "could not create the check container: $create";; esac
remove_check() { api -X DELETE "http://localhost/containers/$name?force=1" >/dev/null 2>&1 || true; }
trap 'remove_check; rm -rf "$root"' EXIT
api -X POST "http://localhost/containers/$name/start" >/dev/null
status=$(api -X POST "http://localhost/containers/$name/wait" | sed -n 's/.*"StatusCode":\([0-9]*\).*/\1/p')
output=$(api "http://localhost/containers/$name/logs?stdout=1&stderr=1" | tr -cd '[:print:]\n')
remove_check
if [ "$status" != 0 ] || [[ "$output" != *"$version"* ]]; then
  api -X DELETE "http://localhost/images/$new_id" >/dev/null 2>&1 || true
  die "node does not start in the image (exit ${status:-?}): $output"
fi
log "checked: node --version in $IMAGE prints $version"

if [ -n "$old_id" ] && [ "$old_id" != "$new_id" ]; then   # --force: drop the replaced image if unused
  if api -X DELETE "http://localhost/images/$old_id" 2>/dev/null | grep -q '"Deleted"'; then
    log "removed the replaced image $old_id"
  else
    log "kept the replaced image $old_id (in use)"
  fi
fi
echo "$IMAGE"

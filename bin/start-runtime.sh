#!/usr/bin/env bash
# start-runtime.sh - the local container runtime the command collector and its live tests use.
#
#   bin/start-runtime.sh          install Debian docker.io + busybox-static if missing, start
#                                 dockerd if it does not answer, build and import the image
#                                 local/busybox:1 if missing; prints the socket path on stdout
#   bin/start-runtime.sh stop     stop the daemon by the PID in its pidfile
#   bin/start-runtime.sh status   exit 0 and print the socket path when the engine answers
#
# Only the socket path goes to stdout, so callers can do
#   SOCK=$(bash bin/start-runtime.sh) && export AGENTSCM_TEST_DOCKER_SOCKET=$SOCK
# Needs root; works without systemd (dockerd is started directly, detached). The daemon makes
# no host network changes (no bridge, no iptables, no forwarding); containers run with
# NetworkMode "none". Nothing is pulled from a registry: the image is built from the Debian
# busybox-static binary and imported through the Engine API.
# Re-running while the engine answers and the image exists costs two local HTTP requests.
set -euo pipefail

SOCK=${RUNTIME_SOCK:-/var/run/docker.sock}
DATA_ROOT=${RUNTIME_DATA_ROOT:-/var/lib/docker}
EXEC_ROOT=${RUNTIME_EXEC_ROOT:-/var/run/docker}
PIDFILE=${RUNTIME_PIDFILE:-/var/run/docker.pid}
LOG=${RUNTIME_LOG:-/var/log/dockerd-runtime.log}
IMAGE=${RUNTIME_IMAGE:-local/busybox:1}
LOCKFILE=${RUNTIME_LOCKFILE:-/var/lock/agentscm-runtime.lock}
PING_TIMEOUT=${RUNTIME_PING_TIMEOUT:-60}   # seconds
STOP_TIMEOUT=${RUNTIME_STOP_TIMEOUT:-20}   # seconds

log() { echo "start-runtime: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
api() { curl -sS --max-time 60 --unix-socket "$SOCK" "$@"; }
ping_ok() { [ "$(curl -s --max-time 2 --unix-socket "$SOCK" http://localhost/_ping 2>/dev/null)" = OK ]; }
image_code() { curl -s -o /dev/null -w '%{http_code}' --max-time 10 --unix-socket "$SOCK" "http://localhost/images/$IMAGE/json" 2>/dev/null || true; }
alive() {  # process exists, is not a zombie, and is dockerd
  local st
  [ -n "${1:-}" ] && [ -r "/proc/$1/stat" ] || return 1
  [ "$(cat "/proc/$1/comm" 2>/dev/null)" = dockerd ] || return 1
  st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}
daemon_pid() {  # PID from the pidfile, only if that process is a live dockerd
  local p
  [ -s "$PIDFILE" ] || return 1
  p=$(cat "$PIDFILE" 2>/dev/null) || return 1
  alive "$p" || return 1
  echo "$p"
}

[ "$(id -u)" = 0 ] || die "must run as root (it installs packages and starts dockerd)"

case "${1:-start}" in
  stop)
    if ! pid=$(daemon_pid); then log "dockerd not running (pidfile $PIDFILE)"; exit 0; fi
    log "stopping dockerd pid $pid (SIGTERM; it stops containers, then its containerd)"
    kill -TERM "$pid"
    for _ in $(seq 1 $((STOP_TIMEOUT * 10))); do alive "$pid" || break; sleep 0.1; done
    if alive "$pid"; then log "still alive after ${STOP_TIMEOUT}s, SIGKILL"; kill -KILL "$pid"; fi
    log "stopped"
    exit 0
    ;;
  status)
    if command -v curl >/dev/null 2>&1 && ping_ok; then echo "$SOCK"; exit 0; fi
    log "engine does not answer on $SOCK"; exit 1
    ;;
  start) ;;
  *) die "usage: start-runtime.sh [start|stop|status]" ;;
esac

# Fast path: engine answering and image present -> nothing to do, no lock needed.
if command -v curl >/dev/null 2>&1 && ping_ok && [ "$(image_code)" = 200 ]; then
  log "engine answering on $SOCK, image $IMAGE present"
  echo "$SOCK"
  exit 0
fi

# Serialize concurrent starts (parallel test processes, CI steps) so only one installs/starts.
mkdir -p "$(dirname "$LOCKFILE")"
exec 9>"$LOCKFILE"
if command -v flock >/dev/null 2>&1; then flock 9; fi

# 1. install if missing ------------------------------------------------------
need=()
command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
command -v curl    >/dev/null 2>&1 || need+=(curl)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q 'ok installed' || need+=(busybox-static)
if [ ${#need[@]} -gt 0 ]; then
  log "installing: ${need[*]} (first run only; takes a few minutes)"
  command -v apt-get >/dev/null || die "apt-get not available"
  made_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then   # keep postinst from auto-starting services
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
  if [ $made_policy = 1 ]; then rm -f /usr/sbin/policy-rc.d; fi
fi

# 2. start the daemon if it does not answer -----------------------------------
start_dockerd() {
  mkdir -p "$DATA_ROOT" "$(dirname "$LOG")"
  log "starting dockerd (log: $LOG)"
  # No bridge, no iptables, no forwarding/masquerade: the host network is left untouched.
  # setsid: own session, so it survives the caller's process group being killed.
  # set +m keeps the child in our process group, so setsid does not fork and $! is dockerd.
  set +m
  setsid dockerd \
    --host "unix://$SOCK" \
    --data-root "$DATA_ROOT" \
    --exec-root "$EXEC_ROOT" \
    --pidfile "$PIDFILE" \
    --bridge=none --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
    --storage-driver "${RUNTIME_STORAGE_DRIVER:-overlay2}" \
    >>"$LOG" 2>&1 </dev/null &
  pid=$!
  disown "$pid" 2>/dev/null || true
  started=1
}
started=0
pid=""
deadline=$((SECONDS + PING_TIMEOUT))
while ! ping_ok; do
  if ! alive "$pid"; then
    if [ $started = 1 ]; then
      tail -n 20 "$LOG" >&2 || true
      die "dockerd (pid $pid) exited before answering /_ping"
    elif pid=$(daemon_pid); then
      log "dockerd pid $pid exists but does not answer yet; waiting"
    else
      start_dockerd
    fi
  fi
  if [ $SECONDS -ge $deadline ]; then
    tail -n 20 "$LOG" >&2 || true
    die "no /_ping answer on $SOCK within ${PING_TIMEOUT}s"
  fi
  sleep 0.2
done
if [ -n "$pid" ]; then log "dockerd up, pid $(cat "$PIDFILE" 2>/dev/null || echo "$pid")"
else log "daemon already answering on $SOCK"; fi

# 3. build and import the image if missing -------------------------------------
code=$(image_code)
if [ "$code" != 200 ]; then
  log "image $IMAGE missing (HTTP $code); building from busybox-static"
  bb=/bin/busybox
  [ -x "$bb" ] || die "$bb missing (Debian package busybox-static)"
  root=$(mktemp -d)
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root"/{bin,etc,tmp,proc,sys,dev,root,usr}
  cp "$bb" "$root/bin/busybox"
  for a in $("$root/bin/busybox" --list); do [ "$a" = busybox ] || ln -s busybox "$root/bin/$a"; done
  ln -s ../bin "$root/usr/bin"
  chmod 1777 "$root/tmp"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
  repo=${IMAGE%:*}; tag=${IMAGE##*:}
  # changes: CMD ["/bin/sh"] and ENV PATH=/bin:/usr/bin (URL-encoded, repeated parameter)
  resp=$(tar --numeric-owner --owner=0 --group=0 --mtime=@0 --sort=name -C "$root" -c . |
    api -X POST -H 'Content-Type: application/x-tar' --data-binary @- \
      "http://localhost/images/create?fromSrc=-&repo=$repo&tag=$tag&changes=CMD%20%5B%22%2Fbin%2Fsh%22%5D&changes=ENV%20PATH%3D%2Fbin%3A%2Fusr%2Fbin")
  case "$resp" in *'"error'*|*'"message"'*) die "import failed: $resp";; esac
  code=$(image_code)
  [ "$code" = 200 ] || die "image $IMAGE still missing after import: $resp"
  log "imported $IMAGE"
else
  log "image $IMAGE present"
fi

echo "$SOCK"

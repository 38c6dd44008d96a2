#!/usr/bin/env bash
# agentscm quickstart. First half: create a store, register the demo repository shipped in
# examples/demo-repo, edit a file, checkpoint it as a Change, show status and the revision.
# Second half, with a container runtime: put the Node project examples/node-project under the
# gate with commands only (check add, agent-task collector add, grant create), then for each
# Change checkpoint, claim and collect (the test suite runs in an isolated container),
# qualification, approve, land and verify the receipt offline; a Change that adds a failing test
# is refused and target main does not move (docs/checks.md, docs/collect.md).
#
#   npm run quickstart                      (builds, then runs this with bin/run.js)
#   AGENTSCM_BIN="node --import tsx bin/dev.js" bash examples/quickstart/run.sh   (from the sources)
#
# QUICKSTART_DIR chooses where the store and workspaces go (default: a new temporary
# directory, kept afterwards so that you can look around). Any failure stops the script with
# a non-zero exit status.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
read -r -a agentscm <<<"${AGENTSCM_BIN:-node $root/bin/run.js}"

work="${QUICKSTART_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/agentscm-quickstart.XXXXXX")}"
mkdir -p "$work"
workspace="$work/demo-repo"
project="$work/node-project"
data="$work/agentscm-data"
if [[ -e "$workspace" || -e "$project" || -e "$data" ]]; then
  echo "quickstart: $work already holds a demo-repo, node-project or agentscm-data; choose an empty QUICKSTART_DIR" >&2
  exit 2
fi

step() { printf '\n==> %s\n' "$*"; }
run() {
  printf '$ agentscm %s\n' "$*"
  "${agentscm[@]}" "$@"
}
target_revision() { # target_revision REPOSITORY: the revision target main of REPOSITORY points at
  "${agentscm[@]}" --data-dir "$data" target list --repository "$1" --json |
    node -e 'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>{const t=JSON.parse(s).targets.find((x)=>x.name==="main");process.stdout.write(t.revision)})'
}
field() { # field NAME: read one top-level string or number field of a --json document on stdin
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];if(v===undefined||v===null)process.exit(3);process.stdout.write(String(v))})' "$1"
}

step "Copy the demo repository to $workspace"
cp -R "$root/examples/demo-repo" "$workspace"

step "Create the store and register the demo repository (first checkpoint onto target main)"
run --data-dir "$data" init-repo "$workspace" --name demo
main_revision="$("${agentscm[@]}" --data-dir "$data" policy show --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>process.stdout.write(JSON.parse(s).targets[0].revision))')"

step "Edit a file: src/greet.js"
cat >"$workspace/src/greet.js" <<'JS'
// Builds the greeting; the quickstart edits this file.
export function greet(name) {
  return `Hello, ${name}! Welcome to agentscm.`;
}
JS

step "Status shows the edit"
run status --workspace "$workspace"
[[ "$("${agentscm[@]}" status --workspace "$workspace" --json | field clean)" == "false" ]]

step "Checkpoint the workspace as version 1 of Change quickstart-1"
run --data-dir "$data" checkpoint --change quickstart-1 --workspace "$workspace"
revision="$("${agentscm[@]}" --data-dir "$data" change show quickstart-1 --json | field current_revision)"

step "Status is clean again, at the new revision"
run status --workspace "$workspace"
[[ "$("${agentscm[@]}" status --workspace "$workspace" --json | field base_revision)" == "$revision" ]]

step "The revision, its parent (main) and the exact bytes of the edited file"
run --data-dir "$data" revision show "$revision"
[[ "$("${agentscm[@]}" --data-dir "$data" revision show "$revision" --json | field parent)" == "$main_revision" ]]
run --data-dir "$data" revision cat "$revision" src/greet.js
"${agentscm[@]}" --data-dir "$data" revision cat "$revision" src/greet.js | cmp -s - "$workspace/src/greet.js"

step "The Change and the policy epoch"
run --data-dir "$data" change show quickstart-1
run --data-dir "$data" policy show

step "The second half: a real Node project under the gate, with commands only"
# Needs a Docker Engine (npm run runtime:start, as root, starts one), the docker executable the
# operator selects and a Node image present locally: nothing is pulled. bin/build-node-image.sh
# builds local/node:20 from this machine's own node, offline; QUICKSTART_IMAGE names another.
docker_socket="${QUICKSTART_DOCKER_SOCKET:-/var/run/docker.sock}"
docker_exe="${QUICKSTART_DOCKER:-$(command -v docker || true)}"
image="${QUICKSTART_IMAGE:-}"
engine_get() { # engine_get PATH: the HTTP status of a GET on the engine API, 0 when it does not answer
  node -e 'const http=require("http");const [sock,path]=process.argv.slice(1);
    const r=http.get({socketPath:sock,path,timeout:5000},(res)=>{res.resume();console.log(res.statusCode)});
    r.on("timeout",()=>{r.destroy();console.log(0)});r.on("error",()=>console.log(0))' "$docker_socket" "$1"
}
runtime_problem() { # prints why the container step cannot run, or nothing
  if [[ "${QUICKSTART_CONTAINER:-auto}" == "0" ]]; then echo "QUICKSTART_CONTAINER=0 turns it off"; return; fi
  if [[ -z "$docker_exe" || ! -x "$docker_exe" ]]; then echo "no docker executable found (install one, or set QUICKSTART_DOCKER)"; return; fi
  if [[ ! -S "$docker_socket" ]]; then echo "no Docker Engine socket at $docker_socket (start one as root with npm run runtime:start, or set QUICKSTART_DOCKER_SOCKET)"; return; fi
  if [[ "$(engine_get /_ping)" != 200 ]]; then echo "the Docker Engine at $docker_socket does not answer"; return; fi
  if [[ -n "$image" && "$(engine_get "/images/$image/json")" != 200 ]]; then
    echo "image $image is not present in the engine (nothing is pulled; unset QUICKSTART_IMAGE to build local/node:20)"
  fi
}
problem="$(runtime_problem)"
if [[ -z "$problem" && -z "$image" ]]; then
  printf '$ bash bin/build-node-image.sh\n'
  if ! image="$(RUNTIME_SOCK="$docker_socket" bash "$root/bin/build-node-image.sh")"; then
    problem="bin/build-node-image.sh could not build local/node:20 (its message is above; or set QUICKSTART_IMAGE)"
  fi
fi
if [[ -n "$problem" ]]; then
  echo "skipping the container step: $problem"
else
  step "Copy examples/node-project to $project and register it (a second repository of the store)"
  cp -R "$root/examples/node-project" "$project"
  run --data-dir "$data" init-repo "$project" --name node-project
  base="$(target_revision node-project)"

  step "Its dev dependencies in an image: npm ci on this side, node_modules on top of $image"
  # The tests import a package from package-lock.json; the step has no network, so deps build
  # installs it here (npm's own cache and registry settings apply) and builds the project's image.
  run --data-dir "$data" deps build --workspace "$project" --lockfile package-lock.json --image "$image" \
    --docker-socket "$docker_socket"

  step "One command check: node --test in that image, 512 MiB, no network; it becomes target main's requirement"
  run --data-dir "$data" check add tests --workspace "$project" --image "$image" --deps npm --memory 512m \
    --docker-socket "$docker_socket" -- node --test
  [[ "$("${agentscm[@]}" --data-dir "$data" requirement show --target main --repository node-project --json |
    field requirement_digest)" =~ ^[0-9a-f]{64}$ ]]

  step "One command collector for that step: signing key, enrollment, runtime identity, profile"
  # The state directory is owner-private and outside every workspace and the data directory.
  collector="$work/collector-state"
  run --data-dir "$data" agent-task collector add --step tests --state-dir "$collector" --repository node-project \
    --docker "$docker_exe" --docker-socket "$docker_socket"
  [[ -f "$collector/signing-key.json" ]]

  step "Grant a coding agent access: its token goes to a new owner-private file, never to output"
  tokens="$work/tokens"
  run --data-dir "$data" grant create --repository node-project --actor me/agent-1 --token-file "$tokens/agent-1.token"

  gate() { # gate CHANGE: what the agent runs for a Change: checkpoint, claim, collect
    run --data-dir "$data" checkpoint --change "$1" --workspace "$project"
    run --data-dir "$data" agent-task claim --change "$1" --token-file "$tokens/agent-1.token" --out "$work/$1.descriptor.json"
    printf '$ agentscm %s\n' "--data-dir $data agent-task collect --descriptor $work/$1.descriptor.json --key $collector/signing-key.json --state-dir $collector --token-file $tokens/agent-1.token --docker $docker_exe --docker-socket $docker_socket --json"
    collected="$("${agentscm[@]}" --data-dir "$data" agent-task collect --descriptor "$work/$1.descriptor.json" \
      --key "$collector/signing-key.json" --state-dir "$collector" --token-file "$tokens/agent-1.token" \
      --docker "$docker_exe" --docker-socket "$docker_socket" --json)"
    echo "$collected"
    outcome="$(field outcome <<<"$collected")"
  }

  step "Change fix-1: edit, then checkpoint (it creates the review context), claim and collect"
  echo '// touched' >>"$project/src/duration.js"
  gate fix-1
  [[ "$outcome" == "passed" ]]
  fix_revision="$("${agentscm[@]}" --data-dir "$data" change show fix-1 --repository node-project --json | field current_revision)"

  step "Admission: qualification → approve → land (everything rechecked under the authority lock)"
  run --data-dir "$data" qualification --change fix-1 --repository node-project
  [[ "$("${agentscm[@]}" --data-dir "$data" qualification --change fix-1 --repository node-project --json |
    field receipt_digest)" =~ ^[0-9a-f]{64}$ ]]
  run --data-dir "$data" approve --change fix-1 --repository node-project
  run --data-dir "$data" land --change fix-1 --target main --repository node-project
  run --data-dir "$data" target list --repository node-project
  landed="$(target_revision node-project)"
  [[ "$landed" == "$fix_revision" && "$landed" != "$base" ]]

  step "The receipt, checked offline: no store, the signer pinned by the collector's key file"
  run --data-dir "$data" receipt export --change fix-1 --repository node-project --out "$work/fix-1.agscmrb"
  run receipt verify "$work/fix-1.agscmrb" --public-key-file "$collector/signing-key.json"
  [[ "$("${agentscm[@]}" receipt verify "$work/fix-1.agscmrb" --public-key-file "$collector/signing-key.json" --json |
    field verified)" == "true" ]]

  step "Change fix-2 adds a failing test (examples/node-project/README.md): the gate refuses it"
  cat >"$project/test/refused.test.js" <<'JS'
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { formatDuration } from '../src/duration.js';

test('formatDuration prints a minute as 60s', () => {
  assert.equal(formatDuration(60_000), '60s');
});
JS
  gate fix-2
  [[ "$outcome" == "failed" ]]
  status=0
  run --data-dir "$data" qualification --change fix-2 --repository node-project || status=$?
  [[ "$status" == 1 ]] # 1: not qualified
  # The refusals go to stderr; 2>&1 keeps them in order with the rest of this transcript.
  targets_before="$("${agentscm[@]}" --data-dir "$data" target list --repository node-project --json)"
  status=0
  run --data-dir "$data" approve --change fix-2 --repository node-project 2>&1 || status=$?
  [[ "$status" != 0 ]]
  status=0
  run --data-dir "$data" land --change fix-2 --target main --repository node-project 2>&1 || status=$?
  [[ "$status" != 0 ]]
  [[ "$("${agentscm[@]}" --data-dir "$data" target list --repository node-project --json)" == "$targets_before" ]]
  [[ "$(target_revision node-project)" == "$fix_revision" ]]
  echo "refused: target main of node-project is still at $fix_revision"
fi

if [[ -d "$project" ]]; then
  printf '\nquickstart finished: store %s, workspaces %s and %s\n' "$data" "$workspace" "$project"
else
  printf '\nquickstart finished: store %s, workspace %s\n' "$data" "$workspace"
fi
cat <<'NEXT'

Next, on your own repository (no --data-dir needed: the store defaults to the one the
workspace is bound to, else $XDG_DATA_HOME/agentscm or ~/.local/share/agentscm; docs/cli.md):

  agentscm init-repo PATH/TO/PROJECT --name NAME
  agentscm check add tests --workspace PATH/TO/PROJECT --image IMAGE -- COMMAND ARGS
  agentscm agent-task collector add --step tests --state-dir ~/.agentscm-collector
  agentscm grant create --actor OWNER/AGENT --token-file ~/.agentscm/agent-1.token
  agentscm install-stop --client claude-code --mode stop --change CHANGE --workspace PATH/TO/PROJECT \
    --repo PATH/TO/PROJECT --docker "$(command -v docker)" --docker-socket /var/run/docker.sock

collector add prints the claim and collect commands an agent runs for each Change; the Stop hook
checkpoints and runs the checks when the agent stops (docs/stop-hooks.md).
NEXT

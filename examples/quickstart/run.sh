#!/usr/bin/env bash
# agentscm quickstart: create a store, register the demo repository shipped in
# examples/demo-repo, edit a file, checkpoint it as a Change, show status and the revision.
#
#   npm run quickstart                      (builds, then runs this with bin/run.js)
#   AGENTSCM_BIN="node --import tsx bin/dev.js" bash examples/quickstart/run.sh   (from the sources)
#
# QUICKSTART_DIR chooses where the store and workspace go (default: a new temporary
# directory, kept afterwards so that you can look around). Any failure stops the script with
# a non-zero exit status.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
read -r -a agentscm <<<"${AGENTSCM_BIN:-node $root/bin/run.js}"

work="${QUICKSTART_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/agentscm-quickstart.XXXXXX")}"
mkdir -p "$work"
workspace="$work/demo-repo"
data="$work/agentscm-data"
if [[ -e "$workspace" || -e "$data" ]]; then
  echo "quickstart: $work already holds a demo-repo or agentscm-data; choose an empty QUICKSTART_DIR" >&2
  exit 2
fi

step() { printf '\n==> %s\n' "$*"; }
run() {
  printf '$ agentscm %s\n' "$*"
  "${agentscm[@]}" "$@"
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

printf '\nquickstart finished: store %s, workspace %s\n' "$data" "$workspace"

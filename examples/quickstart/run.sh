#!/usr/bin/env bash
# agentscm quickstart: create a store, register the demo repository shipped in
# examples/demo-repo (with the example skill package), edit a file, checkpoint it as a Change,
# show status and the revision, then plan and run a skill workflow bound to that exact
# revision, install it as the target's requirement, and create and enroll an executor key.
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

step "Copy the demo repository to $workspace, with the example skill package"
cp -R "$root/examples/demo-repo" "$workspace"
mkdir -p "$workspace/skills"
cp -R "$root/examples/skills/native-workflow" "$workspace/skills/"

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

step "Bind the example workflow to the checkpointed revision"
repository="$("${agentscm[@]}" --data-dir "$data" change show quickstart-1 --json | field repository)"
workflow="$work/workflow.json"
node -e 'const fs=require("fs"); const d=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));
  d.source.repository=process.argv[2]; d.source.revision=process.argv[3];
  fs.writeFileSync(process.argv[4], JSON.stringify(d, null, 2) + "\n")' \
  "$root/examples/workflows/verify-with-omission.json" "$repository" "$revision" "$workflow"
echo "wrote $workflow"

step "Plan it (validates against the store, runs nothing)"
run --data-dir "$data" skill-workflow plan "$workflow"

step "Run it: the source checks pass on the exact bytes; the optional capability stays an omission"
run --data-dir "$data" skill-workflow run quickstart-run-1 "$workflow"
[[ "$("${agentscm[@]}" --data-dir "$data" skill-workflow status quickstart-run-1 --json | field state)" == "completed_with_omissions" ]]
[[ "$("${agentscm[@]}" --data-dir "$data" skill-workflow status quickstart-run-1 --json | field admission)" == "not_assessed" ]]

step "Install it as the required workflow of target main"
run --data-dir "$data" requirement install --target main "$workflow"
run --data-dir "$data" requirement show --target main

step "Create an executor signing key (owner-private) and enroll its public key for one step"
keys="$work/collector-state"
run agent-task key --state-dir "$keys"
public_key="$(field public_key <"$keys/signing-key.json")"
run --data-dir "$data" agent-task enroll --repository "$repository" --profile local --step verify-skill --executor quickstart-box --public-key "$public_key"

step "Grant a coding agent access: its token goes to a new owner-private file, never to output"
tokens="$work/tokens"
mkdir -m 700 "$tokens"
run --data-dir "$data" grant create --repository "$repository" --actor quickstart/agent-1 --token-file "$tokens/agent-1.token"
run --data-dir "$data" grant list

step "What the agent-task service offers a coding agent (the same facade the hub serves)"
run --data-dir "$data" agent-task call capabilities --token-file "$tokens/agent-1.token"

printf '\nquickstart finished: store %s, workspace %s\n' "$data" "$workspace"

#!/usr/bin/env bash
# agentscm quickstart: create a store, register the demo repository shipped in
# examples/demo-repo (with the example skill package), edit a file, checkpoint it as a Change,
# show status and the revision, then plan and run a skill workflow bound to that exact
# revision, install it as the target's requirement, and create and enroll an executor key.
# With a container runtime it also runs a command step and collects it: collector profile,
# agent-task claim, agent-task collect (docs/collect.md).
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
run --data-dir "$data" agent-task enroll --repository "$repository" --step verify-skill --executor quickstart-box --public-key "$public_key"

step "Grant a coding agent access: its token goes to a new owner-private file, never to output"
tokens="$work/tokens"
mkdir -m 700 "$tokens"
run --data-dir "$data" grant create --repository "$repository" --actor quickstart/agent-1 --token-file "$tokens/agent-1.token"
run --data-dir "$data" grant list

step "What the agent-task service offers a coding agent (the same facade the hub serves)"
run --data-dir "$data" agent-task call capabilities --token-file "$tokens/agent-1.token"

step "A command step: run a check in an isolated container, bound to the exact revision"
# Needs a Docker Engine (npm run runtime:start, as root, starts one with the image below),
# the docker executable the operator selects, and the image present locally: nothing is pulled.
docker_socket="${QUICKSTART_DOCKER_SOCKET:-/var/run/docker.sock}"
docker_exe="${QUICKSTART_DOCKER:-$(command -v docker || true)}"
image="${QUICKSTART_IMAGE:-local/busybox:1}"
runtime_problem() { # prints why the container step cannot run, or nothing
  if [[ "${QUICKSTART_CONTAINER:-auto}" == "0" ]]; then echo "QUICKSTART_CONTAINER=0 turns it off"; return; fi
  if [[ -z "$docker_exe" || ! -x "$docker_exe" ]]; then echo "no docker executable found (install one, or set QUICKSTART_DOCKER)"; return; fi
  if [[ ! -S "$docker_socket" ]]; then echo "no Docker Engine socket at $docker_socket (start one as root with npm run runtime:start, or set QUICKSTART_DOCKER_SOCKET)"; return; fi
  node -e 'const http=require("http");const [sock,image]=process.argv.slice(1);
    const get=(path)=>new Promise((ok)=>{const r=http.get({socketPath:sock,path,timeout:5000},(res)=>{res.resume();ok(res.statusCode)});r.on("timeout",()=>{r.destroy();ok(0)});r.on("error",()=>ok(0))});
    (async()=>{if(await get("/_ping")!==200){console.log(`the Docker Engine at ${sock} does not answer`);return}
      if(await get(`/images/${image}/json`)!==200)console.log(`image ${image} is not present in the engine (npm run runtime:start builds it; nothing is pulled), or set QUICKSTART_IMAGE`)})()' \
    "$docker_socket" "$image"
}
problem="$(runtime_problem)"
if [[ -n "$problem" ]]; then
  echo "skipping the container step: $problem"
else
  check_dir="$workspace/skills/container-check"
  mkdir -p "$check_dir"
  printf -- '---\nname: container-check\ndescription: run the shell test of the demo repository inside an isolated container\n---\n\nRun runner.json (sh test/greet.test.sh).\n' >"$check_dir/SKILL.md"
  node -e 'require("fs").writeFileSync(process.argv[1], JSON.stringify({version:1,image:process.argv[2],
      argv:["sh","test/greet.test.sh"],env:{},workdir:".",timeout_ms:20000,
      limits:{memory_bytes:67108864,pids:64,cpu_millis:1000,output_bytes:65536,scratch_bytes:1048576},
      toolchain:"busybox-1",environment:"posix-sh-offline"}, null, 2) + "\n")' "$check_dir/runner.json" "$image"
  echo "wrote $check_dir/SKILL.md and runner.json (the recipe: image, argv sh test/greet.test.sh, limits; no network)"
  run --data-dir "$data" checkpoint --change quickstart-2 --workspace "$workspace"
  check_revision="$("${agentscm[@]}" --data-dir "$data" change show quickstart-2 --json | field current_revision)"
  run --data-dir "$data" context create --change quickstart-2 --runner skills/container-check/runner.json
  context_digest="$("${agentscm[@]}" --data-dir "$data" context create --change quickstart-2 --runner skills/container-check/runner.json --json | field context_digest)"
  check_workflow="$work/container-workflow.json"
  node -e 'const [file,repository,revision,context]=process.argv.slice(1);
    require("fs").writeFileSync(file, JSON.stringify({version:1,name:"container-check",
      source:{repository,revision,policy_epoch:0},
      skill:{entrypoint:"skills/container-check/SKILL.md",resources:["skills/container-check/runner.json"]},
      steps:[{id:"greeting",needs:[],required:true,action:{kind:"command",runner:"runner.json",
        change:{repository,id:"quickstart-2"},change_version:1,context_digest:context}}]}, null, 2) + "\n")' \
    "$check_workflow" "$repository" "$check_revision" "$context_digest"
  echo "wrote $check_workflow"
  run --data-dir "$data" skill-workflow run quickstart-run-2 "$check_workflow" --docker "$docker_exe" --docker-socket "$docker_socket"
  [[ "$("${agentscm[@]}" --data-dir "$data" skill-workflow status quickstart-run-2 --json | field state)" == "completed" ]]

  step "Collect evidence: grant → key → enroll → collector profile → claim → collect"
  # The container check becomes target main's requirement; the key made above is enrolled for its
  # step, and a collector profile pins that enrollment, the recipe and the runtime identity.
  run --data-dir "$data" requirement install --target main "$check_workflow"
  enrollment="$("${agentscm[@]}" --data-dir "$data" agent-task enroll --repository "$repository" --step greeting --executor quickstart-box --public-key "$public_key" --json)"
  echo "$enrollment"
  identity="$("${agentscm[@]}" agent-task runtime-probe --docker "$docker_exe" --docker-socket "$docker_socket" --image "$image" --json | field identity_sha256)"
  collector_profile="$work/collector-profile.json"
  node -e 'const fs=require("fs"),crypto=require("crypto");const [out,repository,enrollment,runner,identity]=process.argv.slice(1);
    const e=JSON.parse(enrollment),bytes=fs.readFileSync(runner);
    fs.writeFileSync(out, JSON.stringify({version:1,kind:"command",repository_id:repository,workflow_profile:"default",step_id:"greeting",
      registration_id:e.registration_id,registration_epoch:e.registration_epoch,verification_key_id:e.verification_key_id,
      recipe:JSON.parse(bytes),recipe_digest:crypto.createHash("sha256").update(bytes).digest("hex"),runtime_identity_digest:identity}, null, 2) + "\n")' \
    "$collector_profile" "$repository" "$enrollment" "$check_dir/runner.json" "$identity"
  echo "wrote $collector_profile"
  profile_id="$("${agentscm[@]}" --data-dir "$data" agent-task profile install "$collector_profile" --json | field collector_profile_id)"
  run --data-dir "$data" agent-task profile show "$profile_id"
  run --data-dir "$data" agent-task claim --profile "$profile_id" --change quickstart-2 --context "$context_digest" --token-file "$tokens/agent-1.token" --out "$work/greeting.descriptor.json"
  run --data-dir "$data" agent-task collect --descriptor "$work/greeting.descriptor.json" --key "$keys/signing-key.json" --state-dir "$keys" \
    --docker "$docker_exe" --docker-socket "$docker_socket" --token-file "$tokens/agent-1.token"
  [[ "$("${agentscm[@]}" --data-dir "$data" agent-task collect --descriptor "$work/greeting.descriptor.json" --key "$keys/signing-key.json" --state-dir "$keys" \
    --docker "$docker_exe" --docker-socket "$docker_socket" --token-file "$tokens/agent-1.token" --json | field outcome)" == "passed" ]]

  step "Admission: qualification → approve → land, then the receipt checked offline"
  # The imported transfer completed the requirement's graph, so the store wrote a v2 receipt and
  # the exact subject qualifies; the operator approves that subject and receipt, and land moves
  # target main after rechecking everything under the authority lock (docs/admission.md).
  run --data-dir "$data" qualification --change quickstart-2
  receipt="$("${agentscm[@]}" --data-dir "$data" qualification --change quickstart-2 --json | field receipt_digest)"
  [[ "$receipt" =~ ^[0-9a-f]{64}$ ]]
  run --data-dir "$data" approve --change quickstart-2
  run --data-dir "$data" land --change quickstart-2 --target main
  run --data-dir "$data" target list
  landed="$("${agentscm[@]}" --data-dir "$data" target list --json | node -e 'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>{const t=JSON.parse(s).targets.find((x)=>x.name==="main");process.stdout.write(t.revision)})')"
  [[ "$landed" == "$check_revision" ]]
  run --data-dir "$data" revision show "$landed"
  # Anyone can check the evidence without the store: the receipt, every signed transfer it names
  # and the enrolled key, in one bundle (docs/receipts.md).
  run --data-dir "$data" receipt export "${receipt:0:12}" --out "$work/quickstart-2.agscmrb"
  run receipt verify "$work/quickstart-2.agscmrb" --public-key "$public_key"
fi

printf '\nquickstart finished: store %s, workspace %s\n' "$data" "$workspace"
cat <<'NEXT'

Next, on your own repository (no --data-dir needed: the store defaults to the one the
workspace is bound to, else $XDG_DATA_HOME/agentscm or ~/.local/share/agentscm; docs/cli.md):

  agentscm init-repo PATH/TO/PROJECT --name NAME
  agentscm status --workspace PATH/TO/PROJECT
  agentscm checkpoint --change CHANGE --workspace PATH/TO/PROJECT

Then bind a workflow to the checkpointed revision as above (docs/skill-workflows.md).
NEXT

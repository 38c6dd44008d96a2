#!/bin/sh
# The demo's shell test, for a runner with a POSIX shell and no Node (the quickstart's isolated
# container runs it): greet names the person, as greet.test.js checks, and welcomes them to
# agentscm, which only the quickstart's edit of src/greet.js makes true.
set -eu
fail() { echo "FAIL: $*"; exit 1; }
grep -q 'export function greet' src/greet.js || fail "src/greet.js exports no greet function"
grep -q '\${name}' src/greet.js || fail "greet does not name the person"
grep -q 'Welcome to agentscm' src/greet.js || fail "greet does not welcome the person to agentscm"
echo "ok: greet names the person and welcomes them (3 checks)"

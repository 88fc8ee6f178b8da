#!/usr/bin/env bash
# Mac smoke test of the FoundationModels plugin through the real bridge (`deno run cli.ts stdio`):
# availability, a plain turn, a forced tool call answered over tool/call and the model's answer after it
# (a continuation with an empty prompt after the tool output), a schema turn, cancelling a streamed turn,
# two tool calls of one step in flight at the same time (parallel calls), and cancelling a turn while its
# tool call is outstanding, then the same session answering again.
#
#   swift/smoke.sh                 # builds the plugin if needed, then runs against the on-device model
#   OAM_FM_LIBRARY=/path/lib.dylib swift/smoke.sh
#   SMOKE_TIMEOUT=180 swift/smoke.sh
#   SMOKE_DENO=/path/to/deno swift/smoke.sh   # the deno to run the bridge with (default: deno on PATH)
#   SMOKE_ANY_OS=1 OAM_FM_LIBRARY=.build/libfm_double.so OAM_FM_DOUBLE='{"steps":[…]}' swift/smoke.sh
#                                  # dry run of this driver on Linux with the C test double (tests/ffi)
#
# Needs macOS 26+ on Apple silicon with Apple Intelligence enabled, Xcode 26+ (swift) and deno 2.
# Every line sent (→) and received (←) is printed; the script exits non-zero at the first failed check.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIB="${OAM_FM_LIBRARY:-$ROOT/swift/.build/release/libOAMFoundationModels.dylib}"
TIMEOUT="${SMOKE_TIMEOUT:-120}"
DENO="${SMOKE_DENO:-deno}"
if ! command -v "$DENO" >/dev/null 2>&1; then
  echo "smoke: '$DENO' not found: put deno on PATH or set SMOKE_DENO=/path/to/deno" >&2
  exit 2
fi

if [[ -z "${SMOKE_ANY_OS:-}" && ( "$(uname -s)" != "Darwin" || "$(uname -m)" != "arm64" ) ]]; then
  echo "smoke: needs macOS on Apple silicon (this is $(uname -s)/$(uname -m))" >&2
  exit 2
fi
if [[ ! -f "$LIB" ]]; then
  echo "smoke: building the plugin (swift build -c release)…" >&2
  swift build -c release --package-path "$ROOT/swift" --product OAMFoundationModels >&2
fi

# FIFOs instead of coproc: macOS ships bash 3.2.
FIFO_DIR="$(mktemp -d)"
mkfifo "$FIFO_DIR/in" "$FIFO_DIR/out"
OAM_FM_LIBRARY="$LIB" "$DENO" run --no-prompt --allow-read --allow-env --allow-ffi "$ROOT/cli.ts" stdio \
  --log-level "${SMOKE_LOG_LEVEL:-info}" <"$FIFO_DIR/in" >"$FIFO_DIR/out" &
BRIDGE_PID=$!
exec 3>"$FIFO_DIR/in" 4<"$FIFO_DIR/out"
trap 'exec 3>&- 4<&-; kill "$BRIDGE_PID" 2>/dev/null || true; rm -rf "$FIFO_DIR"' EXIT

LAST=""
send() {
  echo "→ $1"
  printf '%s\n' "$1" >&3
}
# expect REGEX: reads bridge lines until one matches (prints them all); the match is left in $LAST.
expect() {
  local line
  while IFS= read -r -t "$TIMEOUT" line <&4; do
    echo "← $line"
    if [[ "$line" =~ $1 ]]; then
      LAST="$line"
      return 0
    fi
  done
  echo "smoke: FAILED waiting for /$1/ (timeout ${TIMEOUT}s or bridge exited)" >&2
  exit 1
}
check() { # check REGEX MESSAGE: asserts $LAST matches
  if [[ ! "$LAST" =~ $1 ]]; then
    echo "smoke: FAILED: $2" >&2
    exit 1
  fi
  echo "   ok: $2"
}

echo "== availability"
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"client":{"name":"smoke"},"protocolVersion":"1.0"}}'
expect '"id":1,'
check '"model":\{"available":true' "the system model is available"
check '"contextSize":[0-9]+' "contextSize reported"

echo "== plain turn"
send '{"jsonrpc":"2.0","id":2,"method":"session/create","params":{"session":"plain","instructions":"Reply in one short sentence."}}'
expect '"id":2,'
send '{"jsonrpc":"2.0","id":3,"method":"session/respond","params":{"session":"plain","prompt":"Say hello to a traveller.","stream":true}}'
expect '"id":3,"(result|error)"'
check '"id":3,"result":\{"session":"plain","text":"[^"]+' "plain turn answered with text"

echo "== forced tool call, then the answer after the tool output (empty-prompt continuation)"
send '{"jsonrpc":"2.0","id":4,"method":"session/create","params":{"session":"guard","instructions":"You are a castle guard in a game. Use tools to act. Reply in one sentence.","tools":[{"name":"open_gate","description":"Ask the game engine to open a named gate. Returns whether it opened.","parameters":{"type":"object","properties":{"gate":{"type":"string"}},"required":["gate"]}}],"options":{"toolChoice":"required"}}}'
expect '"id":4,'
send '{"jsonrpc":"2.0","id":5,"method":"session/respond","params":{"session":"guard","prompt":"Please open the north gate.","stream":true}}'
expect '"method":"tool/call"'
check '"name":"open_gate"' "the model called open_gate"
CALL_ID="$(printf '%s' "$LAST" | grep -o '"id":"t-[0-9]*"' | head -1 | cut -d'"' -f4)"
send "{\"jsonrpc\":\"2.0\",\"id\":\"$CALL_ID\",\"result\":{\"output\":{\"opened\":false,\"reason\":\"the portcullis chain is jammed\"}}}"
expect '"id":5,"(result|error)"'
check '"id":5,"result"' "the model answered after the tool output (continuation with an empty prompt)"
check '"toolCalls":\[\{' "the result lists the tool call"

echo "== schema turn"
send '{"jsonrpc":"2.0","id":6,"method":"session/respond","params":{"session":"plain","prompt":"A goblin blocks the road. Decide.","schema":{"type":"object","properties":{"reasoning":{"type":"string"},"choice":{"type":"string","enum":["fight","flee","talk"]}},"required":["reasoning","choice"]},"stream":true}}'
expect '"id":6,"(result|error)"'
check '"structured":\{"reasoning":"[^"]*","choice":"(fight|flee|talk)"\}' "structured output follows the schema"

echo "== cancellation"
send '{"jsonrpc":"2.0","id":7,"method":"session/create","params":{"session":"story"}}'
expect '"id":7,'
send '{"jsonrpc":"2.0","id":8,"method":"session/respond","params":{"session":"story","prompt":"Tell a very long story about a dragon, at least 600 words.","stream":true}}'
expect '"requestId":8,"event":\{"type":"text"'
send '{"jsonrpc":"2.0","method":"session/cancel","params":{"session":"story"}}'
expect '"id":8,"(result|error)"'
check '"id":8,"error":\{"code":-32009' "the streamed turn was cancelled"

echo "== parallel tool calls (two calls of one step in flight at once)"
send '{"jsonrpc":"2.0","id":10,"method":"session/create","params":{"session":"scout","instructions":"You are a scout in a game. Use the tools; when asked about both sides, call both tools at once. Reply in one sentence.","tools":[{"name":"look_left","description":"Look down the left road. Returns what is there.","parameters":{"type":"object","properties":{}}},{"name":"look_right","description":"Look down the right road. Returns what is there.","parameters":{"type":"object","properties":{}}}],"options":{"toolChoice":"required"}}}'
expect '"id":10,'
send '{"jsonrpc":"2.0","id":11,"method":"session/respond","params":{"session":"scout","prompt":"Look down both roads at the same time: call look_left and look_right.","stream":true}}'
expect '"method":"tool/call"'
FIRST="$(printf '%s' "$LAST" | grep -o '"id":"t-[0-9]*"' | head -1 | cut -d'"' -f4)"
# The second call must arrive before the first is answered: both were captured in one step.
expect '"method":"tool/call"'
SECOND="$(printf '%s' "$LAST" | grep -o '"id":"t-[0-9]*"' | head -1 | cut -d'"' -f4)"
check '"name":"look_(left|right)"' "a second tool call arrived while the first was still outstanding"
send "{\"jsonrpc\":\"2.0\",\"id\":\"$FIRST\",\"result\":{\"output\":\"a quiet road\"}}"
send "{\"jsonrpc\":\"2.0\",\"id\":\"$SECOND\",\"result\":{\"output\":\"a wagon\"}}"
expect '"id":11,"(result|error)"'
check '"id":11,"result".*"toolCalls":\[\{[^]]*\},\{' "the turn reports both calls"

echo "== cancelling while a tool call is outstanding"
send '{"jsonrpc":"2.0","id":12,"method":"session/respond","params":{"session":"guard","prompt":"Please open the south gate.","stream":true}}'
expect '"method":"tool/call"'
PENDING="$(printf '%s' "$LAST" | grep -o '"id":"t-[0-9]*"' | head -1 | cut -d'"' -f4)"
send '{"jsonrpc":"2.0","method":"session/cancel","params":{"session":"guard"}}'
expect '"method":"tool/cancel"'
check "\"$PENDING\"" "the outstanding tool call was cancelled"
expect '"id":12,"(result|error)"'
check '"id":12,"error":\{"code":-32009' "the turn was cancelled"
send '{"jsonrpc":"2.0","id":13,"method":"session/respond","params":{"session":"guard","prompt":"Are you still at your post?","toolChoice":"none","stream":true}}'
expect '"id":13,"(result|error)"'
check '"id":13,"result":\{"session":"guard","text":"[^"]+' "the session answers again after the cancellation"

echo "== shutdown"
send '{"jsonrpc":"2.0","id":9,"method":"shutdown"}'
expect '"id":9,'
wait "$BRIDGE_PID" || true
echo "smoke: all checks passed"

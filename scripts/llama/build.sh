#!/usr/bin/env bash
# Builds (once) and caches llama.cpp's `llama-server` from the source bundled in the npm package
# node-llama-cpp, and unzips the tiny test model next to it. Everything lives OUTSIDE the repository:
#
#   ${OAM_LLAMA_CACHE:-$HOME/.cache/oam-llama}/<node-llama-cpp version>/
#     node_modules/node-llama-cpp/   npm package installed with --ignore-scripts (source bundle only)
#     llama.cpp-src/                 git clone of the bundle, cmake build dir inside
#     bin/llama-server               the cached binary (a later run only checks it exists)
#     tiny-chat.gguf                 the unzipped fixture model
#
# Usage: scripts/llama/build.sh            build if missing, print the binary path on the last line
#        scripts/llama/build.sh --print    print the binary path, exit 1 if not built yet
# Env:   OAM_LLAMA_VERSION (default 3.21.1), OAM_LLAMA_CACHE, OAM_LLAMA_JOBS (default 2),
#        OAM_LLAMA_OPT (compiler optimization, default -O1), OAM_LLAMA_KEEP=1 keeps node_modules after the
#        build, OAM_LLAMA_MODEL_GZ (fixture model path)
#
# Two runs at once (CI starts one in the background, the llama tier calls it again) take turns on a lock in
# the cache directory: the second waits for the first and then finds the binary.
set -euo pipefail

VERSION="${OAM_LLAMA_VERSION:-3.21.1}"
CACHE_ROOT="${OAM_LLAMA_CACHE:-$HOME/.cache/oam-llama}"
DIR="$CACHE_ROOT/$VERSION"
BIN="$DIR/bin/llama-server"
JOBS="${OAM_LLAMA_JOBS:-2}"
# -O1 rather than CMake's Release -O3: the binary only serves the 0.55M-parameter test model, where -O1 is
# still hundreds of tokens per second, and the build is much shorter (see the timing the build prints).
OPT="${OAM_LLAMA_OPT:--O1}"
MODEL_GZ="${OAM_LLAMA_MODEL_GZ:-$(cd "$(dirname "$0")/../.." && pwd)/../shared/models/tiny-chat.gguf.gz}"

if [[ "${1:-}" == "--print" ]]; then
  [[ -x "$BIN" ]] || { echo "llama-server not built; run scripts/llama/build.sh" >&2; exit 1; }
  echo "$BIN"
  exit 0
fi

mkdir -p "$DIR/bin"
exec 9>"$DIR/.lock"
if ! flock -n 9; then
  echo "another build of llama-server is running; waiting for it" >&2
  flock 9
fi
start=$(date +%s)

# The model is cheap to prepare; do it first so it exists even if the build is still running.
if [[ ! -f "$DIR/tiny-chat.gguf" ]]; then
  if [[ -f "$MODEL_GZ" ]]; then
    gunzip -c "$MODEL_GZ" > "$DIR/tiny-chat.gguf.tmp" && mv "$DIR/tiny-chat.gguf.tmp" "$DIR/tiny-chat.gguf"
  else
    echo "warning: model $MODEL_GZ not found" >&2
  fi
fi

if [[ -x "$BIN" ]]; then
  echo "cached: $BIN" >&2
  echo "$BIN"
  exit 0
fi

for tool in npm git cmake g++; do
  command -v "$tool" >/dev/null || { echo "missing required tool: $tool" >&2; exit 1; }
done

BUNDLE="$DIR/node_modules/node-llama-cpp/llama/gitRelease.bundle"
SRC="$DIR/llama.cpp-src"
if [[ ! -f "$SRC/CMakeLists.txt" ]]; then
  if [[ ! -f "$BUNDLE" ]]; then
    echo "installing node-llama-cpp@$VERSION (--ignore-scripts) into $DIR" >&2
    [[ -f "$DIR/package.json" ]] || echo '{"private":true}' > "$DIR/package.json"
    # --omit=optional skips ~680 MB of prebuilt CUDA/Vulkan binaries; only the source bundle is needed.
    (cd "$DIR" && npm install --ignore-scripts --omit=optional --no-audit --no-fund --silent "node-llama-cpp@$VERSION")
  fi
  [[ -f "$BUNDLE" ]] || { echo "source bundle not found: $BUNDLE" >&2; exit 1; }
  rm -rf "$SRC"
  git clone -q "$BUNDLE" "$SRC"
fi

echo "configuring llama.cpp" >&2
cmake -S "$SRC" -B "$SRC/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE="$OPT -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELEASE="$OPT -DNDEBUG" -DLLAMA_CURL=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF \
  -DBUILD_SHARED_LIBS=OFF >&2
echo "building llama-server with -j$JOBS and $OPT (minutes on 2 cores)" >&2
cmake --build "$SRC/build" --target llama-server -j"$JOBS" >&2

cp "$SRC/build/bin/llama-server" "$BIN.tmp"
mv "$BIN.tmp" "$BIN"
# The npm package is only needed for its source bundle, which is cloned now.
[[ "${OAM_LLAMA_KEEP:-0}" == "1" ]] || rm -rf "$DIR/node_modules" "$DIR/package-lock.json"
echo "built $BIN in $(( $(date +%s) - start ))s" >&2
echo "$BIN"

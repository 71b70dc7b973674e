#!/usr/bin/env bash
# Build llama.cpp's own `llama-server` from the llama.cpp tree vendored in the llama-cpp-python source package.
#   tools/llama_server.sh DEST [PYTHON]
# DEST gets bin/llama-server (static llama/ggml libraries: the binary needs no library path) and build.log; a DEST that
# already has a working bin/llama-server is left as it is. The package index is the only network this needs, and only
# here: the server itself runs offline (no curl, no HTTPS, no web UI download).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dest=$1
python=${2:-python3}
reqs="$here/llama-server.requirements.txt"
jobs=${LLAMA_BUILD_JOBS:-2}

if [ -x "$dest/bin/llama-server" ] && "$dest/bin/llama-server" --version >/dev/null 2>&1; then
  echo "llama-server: cached at $dest/bin/llama-server"
  exit 0
fi
mkdir -p "$dest"
work=$(mktemp -d "$dest/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

# the sdist, hash-checked; --no-binary so that pip takes the source package, not a wheel
"$python" -m pip download -q --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
  --require-hashes -r "$reqs" -d "$work"
tar -xzf "$work"/llama_cpp_python-*.tar.gz -C "$work"
src=$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)

# CPU only (no GPU backend is on by default); the server and the libraries it links, nothing else: no tests, examples,
# or unified app; no curl (deprecated in this tree), no OpenSSL, no web UI (neither npm nor the prebuilt download)
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=ON \
  -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON
cmake --build "$work/build" --target llama-server -j"$jobs"

mkdir -p "$dest/bin"
cp "$work/build/bin/llama-server" "$dest/bin/llama-server.tmp"
mv "$dest/bin/llama-server.tmp" "$dest/bin/llama-server"
"$dest/bin/llama-server" --version
# wall and CPU seconds of the whole build (download, configure, compile): `times` gives the CPU of this shell's children
echo "llama-server: built in ${SECONDS} s wall; CPU (user, system) of the shell and of its children:"
times

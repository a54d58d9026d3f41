#!/bin/sh
# The real OpenID provider the identity tests sign in with: oidc-provider (npm), run with Node, installed from the
# lock file into tests/identity/provider/node_modules when missing or not the locked version. Quick when installed
# (one file read); without Node or npm it says so and leaves the tests to skip with that reason.
#   sh tests/identity/ensure_provider.sh
set -eu

HERE=$(cd "$(dirname "$0")/provider" && pwd)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "ensure_provider: Node or npm is not installed; the tests that need a real OpenID provider will skip" >&2
  exit 0
fi
WANTED=$(sed -n 's/.*"oidc-provider": "\([^"]*\)".*/\1/p' "$HERE/package.json")
HAVE=$(sed -n 's/^  "version": "\([^"]*\)".*/\1/p' "$HERE/node_modules/oidc-provider/package.json" 2>/dev/null || true)
if [ "$WANTED" != "$HAVE" ]; then
  cd "$HERE" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null
fi

#!/bin/sh
# Regenerates the TypeScript of the gRPC API (src/chain/grpc/generated) from proto/ with ts-proto, driven by
# buf with the plugin from node_modules: no remote plugins, no network. Lints the protos first.
#
#   scripts/gen-proto.sh            regenerate in place (commit the result)
#   scripts/gen-proto.sh DIR        generate under DIR instead (DIR/src/chain/grpc/generated): the freshness
#                                   test (src/chain/grpc/generated.test.ts) compares that with the committed code
#
# ts-proto options are in proto/buf.gen.yaml, each with its reason.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
node_modules/.bin/buf lint proto
if [ $# -gt 0 ]; then
  node_modules/.bin/buf generate proto --template proto/buf.gen.yaml --output "$1"
else
  node_modules/.bin/buf generate proto --template proto/buf.gen.yaml
fi

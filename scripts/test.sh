#!/usr/bin/env bash
# The test command: installs what the tests need, then checks formatting,
# vets and runs every test with the race detector. Runs from any directory;
# exits non-zero on the first failure. CI runs it through .ci/run with CI=true,
# where a missing Kafka client makes the interop tests fail instead of skip.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

step() { printf '==> %s\n' "$*"; }

# --- Debian packages: kcat, kafka-python (for /usr/bin/python3), node + npm,
# chromium (the web console's browser tests, internal/console; under CI=true
# they fail without it).
missing=()
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
/usr/bin/python3 -c 'import kafka' >/dev/null 2>&1 || missing+=(python3-kafka)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if ((${#missing[@]} > 0)); then
	sudo=()
	if [[ $(id -u) -ne 0 ]]; then sudo=(sudo); fi
	step "apt-get install ${missing[*]}"
	"${sudo[@]}" apt-get update
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y kcat python3-kafka "${missing[@]}"
fi

# --- kafkajs, pinned by test/interop/js/package-lock.json. Reinstalled only
# when the lock file changed since the last install.
js="$root/test/interop/js"
stamp="$js/node_modules/.silkworm-lock.sha256"
want="$(sha256sum "$js/package-lock.json" | cut -d' ' -f1)"
if [[ ! -f $stamp || $(cat "$stamp") != "$want" || ! -f $js/node_modules/kafkajs/package.json ]]; then
	step "npm ci in test/interop/js"
	(cd "$js" && npm ci --no-audit --no-fund)
	echo "$want" >"$stamp"
fi

# --- Formatting, vet, tests.
step "gofmt -l"
unformatted="$(find . -name '*.go' -not -path './.git/*' -not -path '*/node_modules/*' -print0 | xargs -0 -r gofmt -l)"
if [[ -n $unformatted ]]; then
	echo "gofmt: these files need formatting (run gofmt -w):" >&2
	echo "$unformatted" >&2
	exit 1
fi

step "go vet ./..."
go vet ./...

# -count=1: the interop tests run a broker binary the test cache cannot see.
step "go test -race ./..."
go test -race -count=1 -timeout 20m ./...

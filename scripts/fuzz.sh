#!/usr/bin/env bash
# Runs every fuzz target in the module for a bounded time each. Targets are found
# by grepping `func FuzzXxx(` in *_test.go files, because go test -fuzz accepts
# only one target in one package per run. No targets: nothing to do, success.
#
# FUZZTIME sets the time per target (default 10s; 0 skips). A failing input is
# written under the package's testdata/fuzz/FuzzXxx/ by go test: commit it, it
# becomes a regression case for the plain `go test` run.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"

fuzztime="${FUZZTIME:-10s}"
if [[ "$fuzztime" == 0 || "$fuzztime" == 0s ]]; then
	echo "fuzz: FUZZTIME=$fuzztime, skipped"
	exit 0
fi

# "dir name" pairs. Hidden, vendor, testdata and node_modules trees hold no targets of ours.
targets="$(
	find . \( -name '.?*' -o -name vendor -o -name testdata -o -name node_modules \) -prune \
		-o -type f -name '*_test.go' -print |
		sort |
		while IFS= read -r file; do
			sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' "$file" |
				while IFS= read -r name; do
					printf '%s %s\n' "$(dirname "$file")" "$name"
				done
		done
)"

if [[ -z "$targets" ]]; then
	echo "fuzz: no Fuzz* targets found"
	exit 0
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT

# fuzz_once runs one target; its output goes to the terminal and to $log.
fuzz_once() {
	# </dev/null: the target list arrives on stdin and must not be eaten by a test.
	# -run=^$ skips the package's ordinary tests; they already ran in go test.
	go test -run='^$' -fuzz="^${2}\$" -fuzztime="$fuzztime" "$1" </dev/null 2>&1 | tee "$log"
	return "${PIPESTATUS[0]}"
}

failed=()
while read -r dir name; do
	echo "---- fuzz $dir $name ($fuzztime)"
	if fuzz_once "$dir" "$name"; then
		continue
	fi
	# Go's fuzzing engine sometimes ends a run with "context deadline
	# exceeded" when -fuzztime runs out while a worker is busy, without any
	# failing input. That is the engine, not the code: run the target once
	# more. A failing input is always reported and kept.
	if ! grep -q 'Failing input written' "$log" && grep -q 'context deadline exceeded' "$log"; then
		echo "---- fuzz $dir $name: the engine timed out without a failing input; once more"
		fuzz_once "$dir" "$name" && continue
	fi
	failed+=("$dir:$name")
done <<<"$targets"

if ((${#failed[@]} > 0)); then
	echo "fuzz: FAILED: ${failed[*]}" >&2
	exit 1
fi
echo "fuzz: $(wc -l <<<"$targets") target(s) passed"

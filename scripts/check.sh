#!/usr/bin/env bash
# `make check`: the tree is formatted, vetted, staticcheck-clean, its generated templ code is current
# and go.mod/go.sum are tidy. Read-only: templ generate and go mod tidy run for
# real, but whatever they change is compared and then put back, so the check also
# works in a tree with no commits yet (nothing to `git diff` against) and never
# leaves a developer's files rewritten behind their back. All checks run; the exit
# status is non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"

failed=()
fail() {
	echo "check: FAILED: $1: $2" >&2
	failed+=("$1")
}

work="$(mktemp -d "${TMPDIR:-/tmp}/cardhour-check.XXXXXX")"
restore_cmds=()
# Puts back anything a half-finished check changed, even on Ctrl-C.
cleanup() {
	local c
	for c in "${restore_cmds[@]}"; do
		eval "$c" || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Files matching a pattern that belong to the project: tracked or untracked but
# not ignored (works before the first commit); find when there is no git.
project_files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -co --exclude-standard -- "$1" |
			while IFS= read -r f; do
				if [[ -f "$f" ]]; then printf '%s\n' "$f"; fi
			done
	else
		find . \( -name '.?*' -o -name vendor -o -name node_modules \) -prune \
			-o -type f -name "$1" -print | sed 's|^\./||'
	fi
	return 0
}

have_packages=true
[[ -n "$(go list ./... 2>/dev/null)" ]] || have_packages=false

echo "---- gofmt"
unformatted="$(project_files '*.go' | tr '\n' '\0' | xargs -0 -r gofmt -l)"
if [[ -n "$unformatted" ]]; then
	printf '%s\n' "$unformatted" >&2
	fail "gofmt" "these files need 'gofmt -w' (listed above)"
fi

echo "---- go vet"
if ! $have_packages; then
	echo "no Go packages yet; skipped"
elif ! go vet ./...; then
	fail "go vet" "see the report above"
fi

echo "---- staticcheck"
# Pinned in go.mod as a tool, so every machine runs the same version.
if ! $have_packages; then
	echo "no Go packages yet; skipped"
elif ! go tool staticcheck ./...; then
	fail "staticcheck" "see the report above"
fi

echo "---- templ generate"
templs="$(project_files '*.templ')"
if [[ -z "$templs" ]]; then
	echo "no .templ files; skipped"
else
	snap="$work/templ"
	mkdir -p "$snap"
	before="$(project_files '*_templ.go')"
	if [[ -n "$before" ]]; then
		printf '%s\n' "$before" | tr '\n' '\0' | xargs -0 cp --parents -p -t "$snap"
	fi
	# Registered before generating, so an interrupted generate is undone too.
	restore_cmds+=("restore_templ")
	restore_templ() {
		local f
		while IFS= read -r f; do
			[[ -n "$f" ]] || continue
			if [[ -f "$snap/$f" ]]; then
				cmp -s "$snap/$f" "$f" || cp -p "$snap/$f" "$f"
			else
				rm -f "$f" # created by generate: it was missing from the tree
			fi
		done < <(project_files '*_templ.go')
		# Files generate deleted (none today, but cheap to cover).
		while IFS= read -r f; do
			if [[ -n "$f" && ! -e "$f" ]]; then
				cp -p "$snap/$f" "$f"
			fi
		done <<<"$before"
		return 0
	}
	if ! go tool templ generate -log-level warn; then
		fail "templ generate" "templ generate failed"
	else
		stale=()
		while IFS= read -r f; do
			[[ -n "$f" ]] || continue
			if [[ ! -f "$snap/$f" ]]; then
				stale+=("$f")
				echo "new: $f" >&2
			elif ! cmp -s "$snap/$f" "$f"; then
				stale+=("$f")
				diff -u "$snap/$f" "$f" | head -n 40 >&2 || true
			fi
		done < <(project_files '*_templ.go')
		while IFS= read -r f; do
			if [[ -n "$f" && ! -e "$f" ]]; then
				stale+=("$f")
				echo "removed: $f" >&2
			fi
		done <<<"$before"
		if ((${#stale[@]} > 0)); then
			fail "templ generate" "generated code is stale in ${stale[*]}; run 'make generate' and commit the *_templ.go files"
		fi
	fi
fi

echo "---- go mod tidy"
cp -p go.mod "$work/go.mod"
had_sum=false
if [[ -f go.sum ]]; then
	had_sum=true
	cp -p go.sum "$work/go.sum"
fi
restore_cmds+=("restore_mod")
restore_mod() {
	cmp -s "$work/go.mod" go.mod || cp -p "$work/go.mod" go.mod
	if $had_sum; then
		cmp -s "$work/go.sum" go.sum || cp -p "$work/go.sum" go.sum
	else
		rm -f go.sum
	fi
}
if ! go mod tidy; then
	fail "go mod tidy" "go mod tidy failed"
else
	untidy=false
	# go.sum diffs run to hundreds of lines; the head is enough to see what moved.
	diff -u "$work/go.mod" go.mod >"$work/mod.diff" || untidy=true
	if $had_sum; then
		diff -u "$work/go.sum" go.sum >>"$work/mod.diff" || untidy=true
	elif [[ -f go.sum ]]; then
		untidy=true
		echo "go.sum missing" >>"$work/mod.diff"
	fi
	head -n 80 "$work/mod.diff" >&2
	if $untidy; then
		fail "go mod tidy" "go.mod/go.sum are not tidy (diff above); run 'go mod tidy' and commit"
	fi
fi

if ((${#failed[@]} > 0)); then
	echo "check: failed: ${failed[*]}" >&2
	exit 1
fi
echo "check: ok"

#!/usr/bin/env bash
# Rootless next to rootful (issue 16), as a Markdown section on stdout; make
# bench (scripts/bench.sh) puts it into docs/performance.md. The same
# policy, compiled once as root and once as a normal user for a project of
# each, `run` of /bin/true with verification on, side by side in one
# hyperfine run. The user is created here (with a subordinate id range)
# and removed on exit; on a host with no cgroup delegated to it the
# rootless run accepts cgroup-kill and limits by name, as a user there must.
#
#   scripts/bench-rootless.sh path/to/vetto-runtime
#
# Knobs: ROOTLESS_RUNS (40) ROOTLESS_WARMUP (3).
set -euo pipefail
export LC_ALL=C
runs=${ROOTLESS_RUNS:-40}
warmup=${ROOTLESS_WARMUP:-3}

die() { echo "bench-rootless: $*" >&2; exit 1; }
say() { echo "== rootless: $*" >&2; }

[ "$(id -u)" = 0 ] || die "needs root: it creates the user it measures"
[ $# = 1 ] || die "usage: $0 path/to/vetto-runtime"
for tool in hyperfine useradd userdel setpriv jq; do
	command -v "$tool" >/dev/null || die "$tool is not installed"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/vetto-bench-rootless.XXXXXX")
chmod 0711 "$work"
user="vbrl$$"
cleanup() {
	local rc=$?
	set +e
	trap - EXIT INT TERM
	if id "$user" >/dev/null 2>&1; then
		pkill -KILL -u "$user" 2>/dev/null
		sleep 0.2
		userdel "$user" 2>/dev/null
		sed -i "/^$user:/d" /etc/subuid /etc/subgid 2>/dev/null
	fi
	"$work/vetto-runtime" --root "$work/root-state" delete --force bench-root >/dev/null 2>&1
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

home="$work/home"
useradd --no-create-home --home-dir "$home" --user-group --shell /bin/sh "$user" >/dev/null
grep -q "^$user:" /etc/subuid || usermod --add-subuids 4000000-4065535 --add-subgids 4000000-4065535 "$user"
uid=$(id -u "$user") gid=$(id -g "$user")
mkdir -p "$home/run" "$home/project" "$home/bundle" "$work/project" "$work/bundle"
chmod 0700 "$home/run"
cp "$1" "$work/vetto-runtime"
chmod 0755 "$work/vetto-runtime"
vr="$work/vetto-runtime"
echo 'extends = "default"' >"$work/policy.toml"
chown -R "$uid:$gid" "$home"
chmod 0644 "$work/policy.toml"

as_user=(setpriv --reuid "$uid" --regid "$gid" --clear-groups
	env -i "HOME=$home" "XDG_RUNTIME_DIR=$home/run" PATH=/usr/bin:/bin "USER=$user")
"$vr" spec --policy "$work/policy.toml" --project "$work/project" --bundle "$work/bundle" -- /bin/true >/dev/null
(cd "$home" && "${as_user[@]}" "$vr" spec --policy "$work/policy.toml" --project "$home/project" --bundle "$home/bundle" -- /bin/true) >/dev/null

# What a user here must pass: nothing where a cgroup is delegated (never on
# this script's hosts without --systemd-cgroup), the two names otherwise.
flags=()
doctor=$(cd "$home" && "${as_user[@]}" "$vr" doctor --format json)
delegation=$(jq -r '.probes[] | select(.name == "cgroup-delegation") | .status + ": " + .detail' <<<"$doctor")
[[ $delegation == supported* ]] || flags=(--allow-degraded=cgroup-kill,limits)

root_cmd="$vr --root $work/root-state run --bundle $work/bundle bench-root </dev/null >/dev/null 2>&1"
user_cmd="cd $home && ${as_user[*]} $vr run ${flags[*]} --bundle $home/bundle bench-user </dev/null >/dev/null 2>&1"
# Each must run once, visibly.
sh -c "${root_cmd%% </dev/null*}" || die "the rootful run failed"
sh -c "${user_cmd%% </dev/null*}" || die "the rootless run failed"

say "hyperfine: run of /bin/true from a policy, root and $user"
hyperfine --style basic --time-unit millisecond --warmup "$warmup" --runs "$runs" \
	--export-json "$work/rootless.json" \
	-n "root" "$root_cmd" -n "rootless ($user)" "$user_cmd" >&2
root_ms=$(jq -r '.results[0].median * 1000' "$work/rootless.json")
user_ms=$(jq -r '.results[1].median * 1000' "$work/rootless.json")
root_sd=$(jq -r '.results[0].stddev * 1000' "$work/rootless.json")
user_sd=$(jq -r '.results[1].stddev * 1000' "$work/rootless.json")
delta=$(awk -v a="$user_ms" -v b="$root_ms" 'BEGIN {printf "%+.1f", a-b}')
verdict=$(awk -v a="$user_ms" -v b="$root_ms" 'BEGIN {if (a - b <= 10) print "**met**"; else print "**not met**"}')

less=""
passes=""
if [ ${#flags[@]} -gt 0 ]; then
	less=" Without a delegated cgroup it also does less (no cgroup is created, set, frozen or killed; teardown goes through the pid namespace), which is most of why it can be faster."
	passes="; the rootless run passes \`${flags[*]}\`"
fi

cat <<EOF
## Rootless next to rootful

\`run\` of /bin/true from the \`default\` policy, verification on, in one
hyperfine run ($warmup warm-up, $runs timed runs each): as root, for a
root-owned project (the sandbox is an unprivileged host uid), and as a
normal user \`$user\` created for it, for the user's project.
cgroup-delegation for that user: $delegation$passes.

| | median | σ |
|---|---|---|
| root | $(printf '%.1f' "$root_ms") ms | $(printf '%.1f' "$root_sd") ms |
| rootless | $(printf '%.1f' "$user_ms") ms | $(printf '%.1f' "$user_sd") ms |

Rootless adds $delta ms (target ≤ 10 ms: $verdict).$less
EOF

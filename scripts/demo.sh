#!/usr/bin/env bash
# make demo: sandbox a command with no image. The built-in `default` policy
# is compiled for this repository ($PROJECT) into a host-root bundle (the
# host's /usr, /bin, /lib*, /etc read-only, the project read-write), and a
# short script runs in it that tries to read the project, read a planted
# secret, reach the network and see other processes. The host then checks
# each result and exits 0 only if all four hold. Needs root (real
# namespaces and cgroups). Everything it creates is removed on exit.
set -euo pipefail
bin=$(readlink -f "${1:-bin/vetto-runtime}")
repo=$(cd "$(dirname "$0")/.." && pwd -P)
[ "$(id -u)" = 0 ] || { echo "make demo needs root: it runs a real container" >&2; exit 1; }
command -v busybox >/dev/null || { echo "busybox not found: run 'make deps'" >&2; exit 1; }

work=$(mktemp -d /tmp/vetto-demo.XXXXXX)
# The sandbox's root is an unprivileged host uid in its own user namespace:
# it must be able to enter the directory its bundle is in (search only).
chmod 711 "$work"
# The runtime runs from outside the project: one the sandbox could write
# could be replaced by its program, and create refuses that
# (bundle.runtime-state-writable). bin/ is in this repository, the project.
install -m 0755 "$bin" "$work/vetto-runtime"
bin="$work/vetto-runtime"
id="demo-$$"
# A planted secret: a dotenv file in the project, which every profile
# masks. Its value is random so that finding it in the output means a leak.
secret_file="$repo/.env.vetto-demo-$$"
secret_value="vetto-demo-secret-$RANDOM$RANDOM"
listener=""
cleanup() {
	"$bin" --root "$work/state" delete --force "$id" >/dev/null 2>&1 || true
	if [ -n "$listener" ]; then kill "$listener" 2>/dev/null || true; wait "$listener" 2>/dev/null || true; fi
	rm -f "$secret_file"
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
printf 'API_TOKEN=%s\n' "$secret_value" > "$secret_file"
chmod 600 "$secret_file"

# A listener on the host's loopback, for the sandbox to (fail to) reach.
for _ in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 20000))
	busybox nc -l -p "$port" > "$work/listener.out" 2>&1 &
	listener=$!
	sleep 0.2
	kill -0 "$listener" 2>/dev/null && break
	listener=""
done
[ -n "$listener" ] || { echo "could not start a listener on the host's loopback" >&2; exit 1; }
host_procs=$(ls -d /proc/[0-9]* | wc -l)
readme_head=$(head -n 1 "$repo/README.md")

# What runs inside. Every line is about what the sandbox can see and do.
script='
secret=$1 port=$2
files=$(find . -path ./.git -prune -o -type f -print | wc -l)
echo "project:   $PWD is readable: $files files; README.md begins: $(head -n 1 README.md)"
if out=$(cat "$secret" 2>&1); then echo "secret:    READ $secret: $out"; else echo "secret:    cat $secret: ${out##*: }"; fi
echo "network:   devices: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " ")"
echo "network:   connect to the host'"'"'s 127.0.0.1:$port: $(busybox nc -w 2 127.0.0.1 "$port" </dev/null 2>&1 || true)"
sleep 30 & # a child, to show the sandbox sees its own processes and only those
procs=""; for p in /proc/[0-9]*; do procs="$procs ${p#/proc/}:$(cat "$p/comm" 2>/dev/null)"; done
kill $!
echo "processes:$procs"
echo "identity:  uid $(id -u), hostname $(hostname), $(grep NoNewPrivs /proc/self/status | tr -d "\t"), $(grep ^Seccomp: /proc/self/status | tr -d "\t")"
'
mkdir "$work/bundle"
"$bin" spec --profile default --project "$repo" --bundle "$work/bundle" \
	-- sh -c "$script" sandbox "$(basename "$secret_file")" "$port" 2> "$work/spec.err" \
	|| { cat "$work/spec.err" >&2; exit 1; }

echo "== vetto-runtime $("$bin" --version | head -1 | awk '{print $3}'): sandboxing a command with no image"
echo "   policy:  the built-in 'default' profile ($("$bin" policy explain --profile default --project "$repo" 2>/dev/null | head -1 | cut -d: -f3- | sed 's/^ //'))"
echo "   project: $repo (read-write at its own path)"
echo "   planted: $(basename "$secret_file") in the project, holding a fake API_TOKEN"
echo "   bundle:  $work/bundle (config.json + an empty rootfs/; 'policy explain --profile default' lists every path)"
echo "   run:     vetto-runtime run (namespaces, seccomp, and Landlock inside the container from the compiled rules)"
echo
set +e
"$bin" --root "$work/state" run --bundle "$work/bundle" "$id" > "$work/out" 2> "$work/err"
status=$?
set -e
echo "== vetto-runtime's launch line (before the command ran):"
grep '^sandbox:' "$work/err" | sed 's/^/   /' || true
echo
echo "== what the command saw, from inside (pid:name of each process it can see):"
sed 's/^/   /' "$work/out"
if [ "$status" != 0 ]; then
	echo "the sandboxed command failed (exit $status):" >&2
	cat "$work/err" >&2
	exit 1
fi

echo
echo "== checked from the host:"
# Each check is a command list whose status says pass or fail; -e would
# end the script at the first failing one instead of reporting it.
set +e
ok=0
check() { # check <condition-status> <what>
	if [ "$1" = 0 ]; then echo "   ✓ $2"; else echo "   ✗ $2"; ok=1; fi
}
out=$(cat "$work/out")
grep -qF "README.md begins: $readme_head" <<<"$out" && grep -Eq 'readable: [1-9][0-9]* files' <<<"$out"
check $? "it can read the project"
! grep -qF "$secret_value" <<<"$out" && grep -q '^secret: .*Permission denied' <<<"$out"
check $? "it cannot read the planted secret (the file is masked, even for root in the sandbox)"
[ "$(grep -c . "$work/listener.out" 2>/dev/null || true)" = 0 ] && kill -0 "$listener" 2>/dev/null &&
	grep -q '^network:   devices: lo $' <<<"$out" && grep -q "127.0.0.1:$port: .*refused" <<<"$out"
check $? "it has no network: only a loopback of its own; the host's listener on 127.0.0.1:$port got nothing"
procs=$(grep '^processes:' <<<"$out" | wc -w)
[ "$((procs - 1))" -le 3 ] && grep -q '^processes: 1:sh .*:sleep' <<<"$out"
check $? "it sees only its own processes: $((procs - 1)), its shell as pid 1 (the host has $host_procs)"
echo
if [ "$ok" = 0 ]; then
	echo "== all four hold. Containers left: $(ls "$work/state" 2>/dev/null | wc -l). Try it on your own project:"
	echo "   vetto-runtime spec --profile default --project DIR --bundle BUNDLE -- COMMAND…"
	echo "   vetto-runtime run --bundle BUNDLE ID"
else
	echo "== the sandbox did not hold; see above" >&2
fi
exit "$ok"

#!/usr/bin/env bash
# Runs a command with a private memcached on a free 127.0.0.1 port, then stops it.
#   with_memcached.sh CMD [ARGS...]
# The command finds the server in MCPOOL_TEST_SERVER (host:port). Exit status: the command's.
set -euo pipefail

memcached_bin=${MEMCACHED:-memcached}
command -v "$memcached_bin" >/dev/null || { echo "with_memcached: $memcached_bin not found" >&2; exit 1; }
user_args=()
[ "$(id -u)" = 0 ] && user_args=(-u root)

pid=""
cleanup() { if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi; }
trap cleanup EXIT INT TERM

# The memcached answering on port $1 is ours ($pid): another process's server may have taken
# the port first, and then ours exits while the other answers. A subshell: a failed exec
# redirection ends the shell that runs it.
owns_port() (
  exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
  printf 'stats\r\nquit\r\n' >&3
  for _ in $(seq 1 200); do
    IFS= read -r -t 2 line <&3 || exit 1
    line=${line%$'\r'}
    case $line in
      "STAT pid "*) [ "${line#STAT pid }" = "$pid" ]; exit ;;
      END) exit 1 ;;
    esac
  done
  exit 1
)

port=""
for _ in $(seq 1 20); do
  candidate=$(( 20000 + RANDOM % 40000 ))
  "$memcached_bin" "${user_args[@]}" -l 127.0.0.1 -p "$candidate" -U 0 -m 64 -c 1024 -t 2 &
  pid=$!
  for _ in $(seq 1 50); do   # up to 5 s for the port to accept
    if ! kill -0 "$pid" 2>/dev/null; then break; fi   # died: port taken, try another
    if owns_port "$candidate" 2>/dev/null; then port=$candidate; break; fi
    sleep 0.1
  done
  [ -n "$port" ] && break
  kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; pid=""
done
[ -n "$port" ] || { echo "with_memcached: could not start memcached" >&2; exit 1; }

export MCPOOL_TEST_SERVER="127.0.0.1:$port"
set +e
"$@"
status=$?
set -e
exit "$status"

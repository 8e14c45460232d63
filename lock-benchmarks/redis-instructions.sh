#!/usr/bin/env bash
# Redis's own instructions per uncontended pair (acquire, release) for each contender, counted
# by valgrind's callgrind in a redis-server this script starts (and stops, by its PID): a
# figure that does not move with the machine's load. Needs valgrind (callgrind_control) and a
# redis-server on the PATH (or LOCKSTEP_REDIS_SERVER). Usage:
#   lock-benchmarks/redis-instructions.sh [pairs=20000] [contenders=floor,lockstep,si-spin,si-pubsub]
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
pairs="${1:-20000}"
contenders="${2:-floor,lockstep,si-spin,si-pubsub}"
server="${LOCKSTEP_REDIS_SERVER:-$(command -v redis-server)}"

source lock-benchmarks/build-classpath.sh

work="$(mktemp -d)"
port=$((20000 + RANDOM % 20000))
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.out" \
  "$server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no > "$work/valgrind.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'PING\r\n' >&3 && head -c 7 <&3 | grep -q PONG) 2>/dev/null; then
    break
  fi
  sleep 0.5
done
echo "$("$server" --version | head -1), under callgrind (pid $pid, port $port)"
java -cp "$classpath" io.lockstep.benchmarks.RedisInstructions "$port" "$pid" "$work/callgrind.out" "$pairs" "$contenders"

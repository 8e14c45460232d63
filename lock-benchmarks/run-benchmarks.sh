#!/usr/bin/env bash
# Builds lock-benchmarks (and the modules it needs, nothing installed), then runs the chosen
# scenarios for the chosen contenders with JMH against one redis-server it starts, writes JMH's
# JSON result and prints (and writes) the comparison with the floor. With --compare, prints the
# comparison of JSON results already written, e.g. of builds run interleaved:
#   run-benchmarks.sh --compare before=a1.json after=b1.json before=a2.json after=b2.json
# Options: --help (io.lockstep.benchmarks.BenchmarkRunner and Compare). Everything takes about
# 10 minutes on 2 cores.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

source lock-benchmarks/build-classpath.sh

if [ "${1:-}" = "--compare" ]; then
  shift
  exec java -cp "$classpath" io.lockstep.benchmarks.Compare "$@"
fi

commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git status --porcelain -- . 2>/dev/null)" ]; then
  commit="$commit (with uncommitted changes)"
fi
log=lock-benchmarks/target/run-benchmarks.log
echo "Running; JMH's output goes here and to $log"
java -cp "$classpath" "-Dlockstep.bench.commit=$commit" \
  io.lockstep.benchmarks.BenchmarkRunner "$@" 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"

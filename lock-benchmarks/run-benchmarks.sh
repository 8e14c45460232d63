#!/usr/bin/env bash
# Builds lock-benchmarks (and the modules it needs, nothing installed), then runs every
# scenario for every contender that has what it measures (RW and SEM: Lockstep and
# Redisson) against one redis-server it starts, and writes docs/benchmarks.md. Options
# go to io.lockstep.benchmarks.BenchmarkRunner (--help).
# The full run takes about 10 minutes on 2 cores.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

echo "Building lock-benchmarks..."
./mvnw -B -ntp -q -pl lock-benchmarks -am -DskipTests package \
  org.apache.maven.plugins:maven-dependency-plugin:3.11.0:build-classpath \
  -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime

commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
# the report this run rewrites does not count as a change
if [ -n "$(git status --porcelain -- . ':!docs/benchmarks.md' 2>/dev/null)" ]; then
  commit="$commit (with uncommitted changes)"
fi

classpath="lock-benchmarks/target/classes:$(cat lock-benchmarks/target/classpath.txt)"
log=lock-benchmarks/target/run-benchmarks.log
echo "Running; JMH's output goes here and to $log"
java -cp "$classpath" "-Dlockstep.bench.commit=$commit" \
  io.lockstep.benchmarks.BenchmarkRunner "$@" 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"

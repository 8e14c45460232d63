# Sourced by run-benchmarks.sh and redis-instructions.sh from the repository's root: builds
# lock-benchmarks and the modules it needs with the Maven wrapper (nothing installed) and sets
# $classpath to its classes and runtime dependencies.
echo "Building lock-benchmarks..."
./mvnw -B -ntp -q -pl lock-benchmarks -am -DskipTests package \
  org.apache.maven.plugins:maven-dependency-plugin:3.11.0:build-classpath \
  -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
classpath="lock-benchmarks/target/classes:$(cat lock-benchmarks/target/classpath.txt)"

#!/usr/bin/env bash
# A Maven project of a user's own depending on io.mcpool:mcpool, as README.md ("Getting the
# jar") shows it: its ```xml block (the repository `make maven-repo` lays out, and the
# dependency) in a scratch project's pom.xml, jar-check/App.java as the program, then the
# README's `mvn -s ... package` and `java -cp target/myapp-1.0.jar:... App` lines, each with
# /path/to/mcpool replaced by this checkout, against a private memcached.
#   maven-consumer.sh VERSION   (after `make maven-repo`; needs mvn)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
version=$1
readme="$here/../README.md"
JAVA=${JAVA:-java}
fail() { echo "maven-consumer: FAIL: $*" >&2; exit 1; }
[ -f "$root/ffi/java/build/maven-repo/io/mcpool/mcpool/$version/mcpool-$version.jar" ] \
  || fail "no build/maven-repo for $version (make maven-repo)"
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcpool-maven-consumer.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# The README's lines, /path/to/mcpool being this checkout.
xml=$(awk '/^```xml$/ {on = 1; next} on && /^```$/ {exit} on' "$readme" | sed "s|/path/to/mcpool|$root|g")
[ -n "$xml" ] || fail "README.md has no \`\`\`xml block"
grep -q "<version>$version</version>" <<< "$xml" || fail "the README's dependency is not version $version"
mvn_line=$(grep -m 1 '^mvn -s /path/to/mcpool/' "$readme" | sed "s|/path/to/mcpool|$root|g")
java_line=$(grep -m 1 '^java -cp target/myapp-1.0.jar:' "$readme" | sed "s|/path/to/mcpool|$root|g")
[ -n "$mvn_line" ] && [ -n "$java_line" ] || fail "README.md lacks the mvn or java line of a user's project"

mkdir -p "$scratch/src/main/java"
cp "$here/App.java" "$scratch/src/main/java/"
{
  printf '%s\n' '<?xml version="1.0" encoding="UTF-8"?>' '<project xmlns="http://maven.apache.org/POM/4.0.0">' \
    '  <modelVersion>4.0.0</modelVersion>' '  <groupId>com.example</groupId>' '  <artifactId>myapp</artifactId>' \
    '  <version>1.0</version>' '  <properties>' '    <maven.compiler.release>11</maven.compiler.release>' \
    '    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>' '  </properties>'
  printf '%s\n' "$xml"
  printf '%s\n' '</project>'
} > "$scratch/pom.xml"
cd "$scratch"
unset JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS LD_LIBRARY_PATH
# shellcheck disable=SC2086 # the README's line, split as a shell splits it
${mvn_line/#mvn /mvn -B -q -Dstyle.color=never } > mvn.txt 2>&1 || { cat mvn.txt >&2; fail "$mvn_line"; }
"$root/ffi/c/with_memcached.sh" sh -c "${java_line/#java /'$JAVA' } > out.txt 2> err.txt" \
  || { cat err.txt >&2; fail "$java_line"; }
got=$(cat out.txt)
case "$got" in "hello from mcpool-java $version"*) ;; *) fail "App printed '$got'";; esac
echo "maven-consumer: a project depending on io.mcpool:mcpool:$version (README.md) built and ran: $got"

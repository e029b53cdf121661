#!/usr/bin/env bash
# The versioned jar as a user gets it: copied alone into a scratch directory, a tiny App.java
# compiled against it and run with `java -cp mcpool-x.y.z.jar:. App` (the JNI library comes out
# of the jar: no java.library.path, no mcpool.jni.library), against a private memcached.
# Then the override property naming a missing file, and a jar without the native library,
# must each fail with a clear UnsatisfiedLinkError.
#   check.sh JAR CLASSES_ONLY_JAR VERSION
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jar=$(realpath "$1"); bare=$(realpath "$2"); version=$3
JAVA=${JAVA:-java}; JAVAC=${JAVAC:-javac}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcpool-jar-check.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
name=$(basename "$jar")
[ "$name" = "mcpool-$version.jar" ] || { echo "jar-check: jar named $name, not mcpool-$version.jar" >&2; exit 1; }
cp "$jar" "$scratch/"
cp "$here/App.java" "$scratch/"
cd "$scratch"
unset JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS LD_LIBRARY_PATH
fail() { echo "jar-check: FAIL: $*" >&2; exit 1; }

"$JAVAC" -nowarn -cp "$name" -d . App.java
mkdir tmp
# 1. As a user runs it (the run's own temp dir, to see the extracted copy removed at exit).
"$here/../../c/with_memcached.sh" sh -c "'$JAVA' -cp '$name:.' App > out.txt 2> err.txt &&
  '$JAVA' -Djava.io.tmpdir='$scratch/tmp' -cp '$name:.' App > out2.txt 2>> err.txt" \
  || { cat err.txt >&2; fail "java -cp $name:. App did not run"; }
got=$(cat out.txt)
case "$got" in "hello from mcpool-java $version"*) ;; *) fail "App printed '$got'";; esac
[ "$(cat out2.txt)" = "$got" ] || fail "second run printed '$(cat out2.txt)'"
[ -z "$(ls -A tmp)" ] || fail "extracted library left behind: $(ls -A tmp)"
echo "jar-check: java -cp $name:. App -> $got"

# 2. The override naming a missing file: a clear error naming the property and the path.
if "$JAVA" -Dmcpool.jni.library="$scratch/nonexistent/libmcpool_jni.so" -cp "$name:." App 127.0.0.1:1 \
    > out.txt 2> err.txt; then fail "ran with mcpool.jni.library pointing at a missing file"; fi
grep -q "UnsatisfiedLinkError: mcpool: mcpool.jni.library=$scratch/nonexistent/libmcpool_jni.so: no such file" err.txt \
  || { cat err.txt >&2; fail "no clear error for a missing mcpool.jni.library"; }
echo "jar-check: missing mcpool.jni.library -> $(grep -o 'UnsatisfiedLinkError: .*' err.txt | head -n 1)"
# ... naming a directory, or a shared library that is not the JNI one (the C library is the
# likely mix-up; a JDK library the JVM has not loaded stands in for it): said so at load, not at
# the first call.
if "$JAVA" -Dmcpool.jni.library="$scratch" -cp "$name:." App 127.0.0.1:1 > out.txt 2> err.txt; then
  fail "ran with mcpool.jni.library naming a directory"; fi
grep -q "mcpool.jni.library=$scratch: a directory, not a file" err.txt \
  || { cat err.txt >&2; fail "no clear error for a directory as mcpool.jni.library"; }
other=$(dirname "$(readlink -f "$(command -v "$JAVA")")")/../lib/libattach.so
if [ -f "$other" ]; then
  if "$JAVA" -Dmcpool.jni.library="$other" -cp "$name:." App 127.0.0.1:1 > out.txt 2> err.txt; then
    fail "ran with mcpool.jni.library naming $other"; fi
  grep -q "loaded, but it is not mcpool's JNI library" err.txt \
    || { cat err.txt >&2; fail "no clear error for another library as mcpool.jni.library"; }
  echo "jar-check: another library as mcpool.jni.library -> $(grep -o 'UnsatisfiedLinkError: .*' err.txt | head -n 1)"
fi

# 3. A jar without the native library and nothing on java.library.path: the platform and the property named.
cp "$bare" classes-only.jar
if "$JAVA" -Djava.library.path="$scratch/tmp" -cp "classes-only.jar:." App 127.0.0.1:1 > out.txt 2> err.txt; then
  fail "ran without any JNI library"
fi
grep -q "UnsatisfiedLinkError: mcpool: no JNI library for linux-.*mcpool.jni.library" err.txt \
  || { cat err.txt >&2; fail "no clear error without a JNI library"; }
echo "jar-check: no JNI library -> $(grep -o 'UnsatisfiedLinkError: .*' err.txt | head -n 1)"
# 4. The manifest lets an executable jar load native code on Java 22+ (JEP 472), and the
#    documented --enable-native-access=ALL-UNNAMED silences the "restricted method" warnings of
#    a class path run (checked with a Java 22+ when one is installed: JAVA_NATIVE_ACCESS, or
#    /usr/lib/jvm/*).
mkdir manifest && (cd manifest && "${JAR:-jar}" xf "../$name" META-INF/MANIFEST.MF)
tr -d '\r' < manifest/META-INF/MANIFEST.MF | grep -qx 'Enable-Native-Access: ALL-UNNAMED' \
  || fail "the manifest has no Enable-Native-Access: ALL-UNNAMED"
newer=${JAVA_NATIVE_ACCESS:-}
if [ -z "$newer" ]; then
  for j in /usr/lib/jvm/*/bin/java; do
    [ -x "$j" ] || continue
    v=$("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
    case "$v" in 2[2-9]|[3-9][0-9]) newer=$j; break;; esac
  done
fi
if [ -n "$newer" ]; then
  "$here/../../c/with_memcached.sh" sh -c "'$newer' --enable-native-access=ALL-UNNAMED -cp '$name:.' App > out.txt 2> err.txt" \
    || { cat err.txt >&2; fail "$newer --enable-native-access=ALL-UNNAMED did not run App"; }
  ! grep -q "restricted method" err.txt || { cat err.txt >&2; fail "restricted-method warning with --enable-native-access"; }
  echo "jar-check: $newer --enable-native-access=ALL-UNNAMED -> $(cat out.txt), no warning"
else
  echo "jar-check: no Java 22+ installed: the --enable-native-access run skipped"
fi
echo "jar-check: all four checks passed"

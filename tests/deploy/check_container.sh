#!/usr/bin/env bash
# Checks deploy/container/Containerfile against what it packs, without a container engine: the
# build is installed (cmake --install) into a temporary stage, every library its programs load is
# mapped to its Debian package (dpkg -S), and each such package must be one the Containerfile
# installs or one of their dependencies (dpkg's Depends and Pre-Depends, followed to the end), or
# part of every Debian image (libc6, libgcc-s1). The paths the image's ENV names must be in the
# stage too, and EXPOSE must name the ports deploy/config/server.yaml listens on.
#
#   check_container.sh BUILD_DIR CONTAINERFILE
set -euo pipefail
build=$1
containerfile=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --prefix "$stage" >/dev/null
failures=0
fail() { echo "FAIL $*" >&2; failures=$((failures + 1)); }

# The packages after `apt-get install ... \` up to the `&&` that ends the command.
mapfile -t listed < <(sed -n '/apt-get install/,/&&.*rm -rf/p' "$containerfile" |
  tr ' \\' '\n\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' | grep -vE '^(apt-get|install|rm|rf)$')
((${#listed[@]} > 0)) || fail "no apt-get install list found in $containerfile"

# Every installed package's dependencies, read once (a dpkg call per package takes a second).
declare -A depends_of installed
while IFS=$'\t' read -r name status deps; do
  [[ $status == "install ok installed" ]] || continue
  installed[$name]=1
  depends_of[$name]=$deps
done < <(dpkg-query -W -f='${Package}\t${Status}\t${Pre-Depends}, ${Depends}\n')

declare -A closure=([libc6]=1 [libgcc-s1]=1)
# A sanitizer build (the CI's test build) links its runtimes; a Release image has none.
declare -A test_build_only=([libasan8]=1 [libubsan1]=1 [liblsan0]=1)
queue=("${listed[@]}")
while ((${#queue[@]} > 0)); do
  pkg=${queue[0]}
  queue=("${queue[@]:1}")
  [[ -n ${closure[$pkg]:-} ]] && continue
  closure[$pkg]=1
  if [[ -z ${installed[$pkg]:-} ]]; then
    fail "$pkg (in the Containerfile) is not a Debian package installed here"
    continue
  fi
  # "a (>= 1) | b, c" -> the installed alternative of each group.
  IFS=',' read -ra groups <<<"${depends_of[$pkg]}"
  for group in "${groups[@]}"; do
    IFS='|' read -ra alternatives <<<"$group"
    for alternative in "${alternatives[@]}"; do
      # Bash expansions, not a sed per alternative: thousands of forks took over a minute.
      name=${alternative%%(*}
      name=${name//:any/}
      name=${name// /}
      if [[ -n $name && -n ${installed[$name]:-} ]]; then
        queue+=("$name")
        break
      fi
    done
  done
done

# The libraries the programs load, then their packages with one dpkg -S (merged /usr: a path may
# be registered under either spelling).
declare -A loaded_by
for program in "$stage"/bin/*; do
  while read -r line; do
    if [[ $line == *"not found"* ]]; then fail "$(basename "$program"): $line"; continue; fi
    [[ $line == *"=> /"* ]] || continue
    lib=${line#*=> }
    lib=${lib%% *}
    loaded_by[$lib]+="${program##*/} "
  done < <(ldd "$program")
done
declare -A owner
spellings=()
for lib in "${!loaded_by[@]}"; do
  spellings+=("$lib" "$(realpath "$lib")" "${lib#/usr}" "/usr$lib")
done
while IFS= read -r line; do
  path=${line#*: }
  owner[$path]=${line%%: *}
done < <(dpkg -S "${spellings[@]}" 2>/dev/null | sed 's/:[a-z0-9]*: /: /')
for lib in "${!loaded_by[@]}"; do
  pkg=""
  for candidate in "$lib" "$(realpath "$lib")" "${lib#/usr}" "/usr$lib"; do
    pkg=${owner[$candidate]:-}
    [[ -n $pkg ]] && break
  done
  if [[ -z $pkg ]]; then fail "${loaded_by[$lib]}: no package owns $lib"; continue; fi
  [[ -n ${test_build_only[$pkg]:-} || -n ${closure[$pkg]:-} ]] ||
    fail "${loaded_by[$lib]}load $lib from $pkg, which the Containerfile does not install"
done

# ENV BOARDLAB_FIRMWARE_ELF=/opt/boardlab/... and the like: the stage is /opt/boardlab.
while read -r path; do
  [[ -e $stage/${path#/opt/boardlab/} ]] || fail "the Containerfile names $path, which is not installed"
done < <(grep -oE '/opt/boardlab/[A-Za-z0-9_./-]+' "$containerfile" | grep -v '/opt/boardlab/$' | sort -u)

# EXPOSE names the port of every listener the image's example configuration turns on.
config=$(dirname "$containerfile")/../config/server.yaml
exposed=" $(sed -n 's/^EXPOSE //p' "$containerfile" | tr '\n' ' ') "
while read -r key port; do
  [[ $exposed == *" $port "* ]] || fail "the Containerfile does not EXPOSE $port ($key in $config)"
done < <(sed -nE 's/^(listen|metrics_listen|http_listen): *[^ #]*:([0-9]+).*/\1 \2/p' "$config")

echo "$(ls "$stage"/bin | wc -l) programs, ${#listed[@]} listed packages: $failures failures"
((failures == 0))

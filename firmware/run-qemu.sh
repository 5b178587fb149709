#!/usr/bin/env bash
# Runs boardlab-firmware on QEMU's mps2-an505 (Cortex-M33). Arguments after the options are
# passed to the firmware over semihosting (see firmware/main.cc); relative paths are resolved
# against the current directory, where QEMU runs.
#
#   firmware/run-qemu.sh [--elf FILE] [--icount SHIFT|off] [--timeout SECONDS] -- \
#       model.pte --input in.bin --expected out.bin --atol 0 --etdump model.etdp --outputs outdir
#
# --icount SHIFT (default 0) makes every guest instruction take 2^SHIFT virtual ns, so the timer
# counts are deterministic instruction counts (the firmware prints them); --icount off runs
# faster but times follow the host. --outputs DIR is created here (semihosting cannot mkdir).
# Exit status: the firmware's verdict (0 pass, 1 mismatch, 2 usage, 3 invalid artifact,
# 4 runtime error / does not fit, 5 CPU fault), 124 on timeout.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
elf=""
icount=0
timeout_s=120
while (($#)); do
  case "$1" in
    --elf) elf=$2; shift 2 ;;
    --icount) icount=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
if [[ -z $elf ]]; then
  for candidate in "$here/../build/firmware/boardlab-firmware.elf" \
                   "$here/../build-fw/boardlab-firmware.elf"; do
    if [[ -f $candidate ]]; then elf=$candidate; break; fi
  done
fi
if [[ -z $elf || ! -f $elf ]]; then
  echo "run-qemu.sh: no firmware ELF (build it, or pass --elf FILE)" >&2
  exit 2
fi

# The firmware's arguments go in a file, one per line, passed as @FILE: newlib's crt0 reads at
# most 255 characters of semihosting command line, and QEMU splits -semihosting-config at commas.
args_file=$(mktemp /tmp/boardlab-fw-args.XXXXXX)
trap 'rm -f "$args_file"' EXIT
prev=""
for a in "$@"; do
  if [[ $a == *$'\n'* ]]; then
    echo "run-qemu.sh: argument '$a' contains a newline" >&2
    exit 2
  fi
  if [[ $prev == --outputs ]]; then mkdir -p "$a"; fi
  printf '%s\n' "$a" >>"$args_file"
  prev=$a
done
icount_args=()
if [[ $icount != off ]]; then
  # The firmware turns timer ticks into instructions with the shift.
  printf '%s\n' --icount-shift "$icount" >>"$args_file"
  icount_args=(-icount "shift=$icount")
fi
# Not exec: the trap removes the arguments file afterwards.
set +e
timeout --foreground "$timeout_s" qemu-system-arm -M mps2-an505 -nographic -monitor none \
  -serial null -semihosting-config "enable=on,target=native,arg=boardlab-firmware,arg=@$args_file" \
  "${icount_args[@]}" -kernel "$elf"
status=$?
if ((status == 124)); then echo "run-qemu.sh: timed out after ${timeout_s}s" >&2; fi
exit $status

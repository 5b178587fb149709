#!/usr/bin/env bash
# An an505 board-link "board" for the agent and boardlab-run --board serial: runs
# boardlab-firmware-an505.elf on QEMU mps2-an505 with its UART0 on a TCP port, the way ser2net
# exposes a real board's UART, and the QEMU monitor on a second port for reset and power cycle.
#
#   firmware/qemu-board.sh --listen HOST:PORT [--monitor HOST:PORT] [--elf FILE]
#                          [--model FILE] [--icount SHIFT|off] [--pidfile FILE]
#   firmware/qemu-board.sh --reset HOST:PORT          # the reset button (via the monitor)
#   firmware/qemu-board.sh --power-cycle HOST:PORT    # power off and on (via the monitor)
#   firmware/qemu-board.sh --flash-model HOST:PORT FILE   # write FILE into the model slot
#
# The first form stays in the foreground as the board's "power supply": it starts QEMU, and
# starts it again after --power-cycle (RAM cleared, the artifact cache empty, the UART connection
# dropped as when a USB serial adapter loses power). It ends when it gets SIGTERM or SIGINT
# (stopping QEMU), or when QEMU ends any other way (killed: the board is gone), with status 0
# when QEMU stopped normally, else QEMU's. --pidfile names the file where QEMU writes its pid.
# --power-cycle leaves a marker file for the supervising script (named after the monitor
# address, in ${TMPDIR:-/tmp}), then quits QEMU through its monitor.
#
# Reset (--reset, monitor command system_reset): the core restarts, RAM keeps its contents (the
# firmware's reset record survives, the artifact cache does not: .bss is cleared), the UART
# connection stays open; the board announces itself with an unsolicited HELLO.
#
# The model slot (docs/board-protocol.md, MODEL_SLOT): --model FILE is the slot's "flash memory".
# At every (re)start QEMU loads FILE, when it exists, into the firmware's model slot (the top
# 6 MB of PSRAM, 0x80A00000) with -device loader; the firmware checks its SHA-256 when a host
# names the artifact in it. --flash-model MONITOR FILE is the flash tool the agent's model_flash
# runs: it copies FILE over the --model file of the board behind that monitor (which the
# supervising script records next to the power-cycle marker) and power cycles the board.
#
# --icount SHIFT (default 0): every guest instruction takes 2^SHIFT virtual ns, so the
# firmware's timer counts instructions deterministically; HELLO reports the shift (QEMU writes it
# into the board with -device loader). --icount off runs on host time.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)

usage() {
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# Sends one HMP command to the QEMU monitor at HOST:PORT and waits for the monitor to take it.
monitor_command() {
  local address=$1 command=$2
  local host=${address%:*} port=${address##*:}
  if [[ -z $host || -z $port || $host == "$address" ]]; then
    echo "qemu-board.sh: monitor address '$address' is not HOST:PORT" >&2
    exit 2
  fi
  if ! exec 3<>"/dev/tcp/$host/$port"; then
    echo "qemu-board.sh: no QEMU monitor at $address" >&2
    exit 3
  fi
  printf '%s\n' "$command" >&3
  # The monitor prints a banner and a prompt, then the command's prompt once it ran it (quit
  # closes the connection instead).
  local prompts=0 line
  while IFS= read -r -t 5 -d ')' line <&3; do
    if [[ $line == *"(qemu"* ]]; then prompts=$((prompts + 1)); fi
    if ((prompts >= 2)); then break; fi
  done || true
  exec 3>&-
}

# The file --power-cycle leaves for the script that supervises the QEMU behind this monitor.
power_cycle_marker() { echo "${TMPDIR:-/tmp}/qemu-board-${1//[^A-Za-z0-9.]/_}.power-cycle"; }
# The file naming the --model file of the board behind this monitor (for --flash-model).
model_slot_record() { echo "${TMPDIR:-/tmp}/qemu-board-${1//[^A-Za-z0-9.]/_}.model-slot"; }

# The firmware's model slot (an505_board_support.cc).
model_slot_address=0x80a00000
model_slot_bytes=$((6 * 1024 * 1024))

# False (with a message) for a model larger than the slot, as a flash tool refuses such an image.
model_fits() {
  local size
  size=$(stat -c %s "$1")
  if ((size > model_slot_bytes)); then
    echo "qemu-board.sh: model '$1' has $size bytes, the model slot holds $model_slot_bytes" >&2
    return 1
  fi
}

# --flash-model MONITOR FILE: FILE becomes the slot's content at the next power-on.
flash_model() {
  local monitor=$1 file=$2 record target
  record=$(model_slot_record "$monitor")
  if [[ ! -f $file ]]; then
    echo "qemu-board.sh: --flash-model: no file '$file'" >&2
    exit 2
  fi
  if [[ ! -f $record ]]; then
    echo "qemu-board.sh: --flash-model: the board behind monitor $monitor has no model slot file (start it with --model FILE)" >&2
    exit 3
  fi
  model_fits "$file" || exit 2
  target=$(cat "$record")
  # Written beside the target and renamed over it, so that a power-on never sees half a model.
  cp "$file" "$target.flashing"
  mv -f "$target.flashing" "$target"
  : >"$(power_cycle_marker "$monitor")"
  monitor_command "$monitor" quit
  echo "qemu-board.sh: flashed $(stat -c %s "$target") bytes into the model slot, power cycled" >&2
}

listen="" monitor="" elf="" icount=0 pidfile="" model=""
while (($#)); do
  case "$1" in
    --listen) listen=$2; shift 2 ;;
    --monitor) monitor=$2; shift 2 ;;
    --elf) elf=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --flash-model)
      (($# >= 3)) || usage
      flash_model "$2" "$3"
      exit 0 ;;
    --icount) icount=$2; shift 2 ;;
    --pidfile) pidfile=$2; shift 2 ;;
    --reset) monitor_command "$2" system_reset; exit 0 ;;
    --power-cycle)
      : >"$(power_cycle_marker "$2")"
      monitor_command "$2" quit
      exit 0 ;;
    -h|--help) usage ;;
    *) echo "qemu-board.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ -n $listen ]] || usage
listen_host=${listen%:*}
listen_port=${listen##*:}
if [[ -z $listen_host || -z $listen_port || $listen_host == "$listen" ]]; then
  echo "qemu-board.sh: --listen takes HOST:PORT" >&2
  exit 2
fi
if [[ -z $elf ]]; then
  for candidate in "$here/../build/firmware/boardlab-firmware-an505.elf" \
                   "$here/../build-fw/boardlab-firmware-an505.elf"; do
    if [[ -f $candidate ]]; then elf=$candidate; break; fi
  done
fi
if [[ -z $elf || ! -f $elf ]]; then
  echo "qemu-board.sh: no boardlab-firmware-an505.elf (build firmware/, or pass --elf FILE)" >&2
  exit 2
fi

args=(-M mps2-an505 -display none -nodefaults
      -chardev "socket,id=uart0,host=$listen_host,port=$listen_port,server=on,wait=off"
      -serial chardev:uart0)
if [[ -n $monitor ]]; then
  args+=(-monitor "tcp:$monitor,server=on,wait=off")
else
  args+=(-monitor none)
fi
if [[ $icount != off ]]; then
  if ! [[ $icount =~ ^[0-9]+$ ]] || ((icount > 10)); then
    echo "qemu-board.sh: --icount takes a shift 0-10 or off" >&2
    exit 2
  fi
  # "BLQ1" and the shift, read by the firmware at 0x30007FF0 (an505_board_support.h).
  args+=(-icount "shift=$icount" -device "loader,addr=0x30007ff0,data=$(printf '0x%08x31514c42' "$icount"),data-len=8")
fi
if [[ -n $pidfile ]]; then args+=(-pidfile "$pidfile"); fi
if [[ -n $monitor ]]; then rm -f "$(power_cycle_marker "$monitor")"; fi
args+=(-kernel "$elf")
if [[ -n $model ]]; then
  model=$(realpath -m "$model")
  if [[ -n $monitor ]]; then
    echo "$model" >"$(model_slot_record "$monitor")"
  fi
fi

# QEMU's arguments for this power-on: the model slot's content is what --model holds now.
power_on_args() {
  qemu_args=("${args[@]}")
  # A model too large for the slot is left out: the slot then holds zeros, which no digest
  # matches.
  if [[ -n $model && -f $model ]] && model_fits "$model"; then
    qemu_args+=(-device "loader,file=$model,addr=$model_slot_address,force-raw=on")
  fi
}

qemu_pid=""
stopping=0
stop() {
  stopping=1
  if [[ -n $qemu_pid ]]; then kill "$qemu_pid" 2>/dev/null || true; fi
}
trap stop TERM INT

echo "qemu-board.sh: an505 board: UART0 on tcp:$listen${monitor:+, monitor on tcp:$monitor}, $elf${model:+, model slot $model}" >&2
while :; do
  power_on_args
  qemu-system-arm "${qemu_args[@]}" &
  qemu_pid=$!
  set +e
  wait "$qemu_pid"
  status=$?
  # A signal to this script interrupts wait; wait again for QEMU itself.
  while kill -0 "$qemu_pid" 2>/dev/null; do wait "$qemu_pid"; status=$?; done
  set -e
  qemu_pid=""
  if ((stopping)); then
    if [[ -n $monitor ]]; then rm -f "$(model_slot_record "$monitor")"; fi
    exit 0
  fi
  if [[ -n $monitor && -f $(power_cycle_marker "$monitor") ]]; then
    rm -f "$(power_cycle_marker "$monitor")"
    echo "qemu-board.sh: power cycle: starting QEMU again" >&2
    sleep 0.2
    continue
  fi
  echo "qemu-board.sh: QEMU ended with status $status: the board is gone" >&2
  exit "$status"
done

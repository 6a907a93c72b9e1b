#!/bin/sh
# Install the Debian 12 packages gbpf builds and tests with. Idempotent:
# only missing packages are installed. Uses sudo when not run as root.
set -eu

packages="gcc clang llvm meson ninja-build pkg-config python3
libbpf-dev libelf-dev libzstd-dev liblz4-dev zlib1g-dev
libclang-rt-dev
pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo
spirv-tools spirv-headers llvm-spirv-15 clang-15 libze-dev libze1
llvm-19-dev clang-19 lld-19 hipcc libamdhip64-dev
python3-prometheus-client"
# Optional packages (none at the moment): installed when available.
optional=""

missing=""
for p in $packages $optional; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
echo "gbpf: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# Required packages must install; optional ones may be unavailable.
req=""
for p in $missing; do
	case " $optional " in *" $p "*) ;; *) req="$req $p" ;; esac
done
[ -n "$req" ] && $SUDO apt-get install -y -qq --no-install-recommends $req >/dev/null
for p in $optional; do
	case "$missing" in *"$p"*) $SUDO apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
		echo "gbpf: optional package $p not installed" >&2 ;; esac
done

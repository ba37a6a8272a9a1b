#!/usr/bin/env bash
# Installs the system programs agent-shell and its test suite drive for real (bwrap for the
# sandbox, sshd, python3, tmux, ps, curl, zsh, openssl, socat; gcc and git for the escape tests; qemu-user and the
# arm64 C library to run the cross-built linux-arm64 binary of the npm package; podman + runc
# for the far-side hosts)
# when they are missing. Debian/Ubuntu with apt; needs root (or passwordless sudo).
set -euo pipefail
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
command -v ssh >/dev/null 2>&1 || need+=(openssh-client)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v ps >/dev/null 2>&1 || need+=(procps)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v less >/dev/null 2>&1 || need+=(less)
command -v qemu-aarch64-static >/dev/null 2>&1 || need+=(qemu-user-static)
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || need+=(libc6-arm64-cross)
# Far-side hosts (SPEC §16): a real container engine; Debian's podman runs here only with runc.
command -v podman >/dev/null 2>&1 || need+=(podman)
command -v runc >/dev/null 2>&1 || need+=(runc)
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
# The spawn helper is a static C program, built for each platform the npm packages ship.
command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || need+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
command -v git >/dev/null 2>&1 || need+=(git)
# A zsh user's login shell is captured too (SPEC §23, tests/runtime/own-shell.test.ts).
command -v zsh >/dev/null 2>&1 || need+=(zsh)
# The network tests serve https with a certificate made by openssl; socat is a unix-socket client.
command -v openssl >/dev/null 2>&1 || need+=(openssl)
command -v socat >/dev/null 2>&1 || need+=(socat)
# The arm64 binary runs under qemu-user in the tests, and the static spawn helper it starts must
# run too: the kernel hands arm64 programs to qemu through binfmt_misc, as Debian's
# qemu-user-static sets up on a booted system (root only; an existing registration is kept).
register_arm64() {
  [ "$(id -u)" -eq 0 ] || return 0
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && return 0
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc 2>/dev/null || return 0
  [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] && return 0
  conf=/usr/lib/binfmt.d/qemu-aarch64.conf
  [ -r "$conf" ] || return 0
  sed 's|:[^:]*:[^:]*$|:/usr/bin/qemu-aarch64-static:F|' "$conf" > /proc/sys/fs/binfmt_misc/register 2>/dev/null || true
}
if [ ${#need[@]} -eq 0 ]; then register_arm64; exit 0; fi
echo "installing test dependencies: ${need[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
register_arm64

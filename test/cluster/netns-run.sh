#!/usr/bin/env bash
# Runs a command inside fresh network, PID and mount namespaces: loopback up and the whole test range
# 198.18.0.0/15 routed locally, so pod IPs handed out by kwok are addresses a process here can listen on.
# When the command ends (or this script is killed) the PID namespace ends and the kernel kills every
# process left in it: nothing outlives a run.
set -euo pipefail
if [[ "${1:-}" != "--inside-namespaces" ]]; then
  # Not root: a user namespace grants what the other namespaces need.
  user_ns=()
  [[ $(id -u) -eq 0 ]] || user_ns=(--user --map-root-user)
  # unshare --fork ignores SIGTERM and SIGINT; we turn them into its death, which --kill-child passes on
  # to the namespace's first process as SIGTERM. If this script is killed outright, the parent-death
  # signal kills unshare all the same.
  setpriv --pdeathsig KILL unshare "${user_ns[@]}" --net --pid --mount --fork --mount-proc --kill-child=SIGTERM \
    "$0" --inside-namespaces "$@" <&0 &
  ns=$!
  trap 'kill -KILL "$ns" 2>/dev/null' TERM INT HUP
  set +e
  wait "$ns"
  status=$?
  while kill -0 "$ns" 2>/dev/null; do wait "$ns"; status=$?; done
  exit "$status"
fi
shift
# Tells the command (and test setup) that it runs inside.
export NAPWAKE_IN_NETNS=1
# Every run is a new cluster at the same address: kubectl must not trust discovery cached from an earlier one.
KUBECACHEDIR="$(mktemp -d -t napwake-kubectl-cache.XXXXXX)"
export KUBECACHEDIR
ip link set lo up
ip route add local 198.18.0.0/15 dev lo
# We are PID 1 here: signals without a handler are ignored, so forward them to the command.
# An explicit redirection keeps stdin: a background job would otherwise read /dev/null.
"$@" <&0 &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' TERM INT HUP
set +e
wait "$child"
status=$?
# wait returns early when a trapped signal arrives; wait again for the real exit status.
while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done
rm -rf "$KUBECACHEDIR"
exit "$status"

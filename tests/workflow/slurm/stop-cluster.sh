#!/usr/bin/env bash
# Stop the daemons start-cluster.sh started under STATE_DIR, by the pids it recorded (slurmd first, munged last).
# Safe to call twice, or after a partial start. Leaves STATE_DIR (its logs) in place.
set -uo pipefail
state=${1:?usage: stop-cluster.sh STATE_DIR}
status=0
# Cancel what is still queued or running on this cluster (its own slurmctld, so only the tests' jobs).
if [ -s "$state/pids/slurmctld.pid" ] && [ -f "$state/slurm.conf" ]; then
    SLURM_CONF="$state/slurm.conf" timeout 10 "$state/bin/scancel" --full --user=root 2>/dev/null
    # Wait until slurmd has ended the cancelled jobs' processes: none may outlive the cluster and load the machine.
    for _ in $(seq 1 60); do
        [ -z "$(SLURM_CONF="$state/slurm.conf" timeout 5 "$state/bin/squeue" --noheader 2>/dev/null)" ] && break
        sleep 1
    done
fi
for name in slurmd slurmctld slurmdbd mariadbd munged; do
    pidfile="$state/pids/$name.pid"
    [ -s "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    # Only a live process of that daemon: never a recycled pid of something else.
    if [ -r "/proc/$pid/comm" ] && grep -q "^${name:0:15}" "/proc/$pid/comm" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null
        for _ in $(seq 1 60); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.25
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "stop-cluster.sh: $name ($pid) ignored TERM, killing" >&2
            kill -KILL "$pid" 2>/dev/null || status=1
        fi
    fi
    rm -f "$pidfile"
done
# The network namespace goes with its last process once its bind mount is gone.
if [ -e "$state/netns" ]; then
    umount "$state/netns" 2>/dev/null
    rm -f "$state/netns"
fi
exit $status

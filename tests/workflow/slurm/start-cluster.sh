#!/usr/bin/env bash
# A throwaway single-node SLURM cluster on this machine, for tests: munged, MariaDB, slurmdbd, slurmctld, slurmd.
#
#   tests/workflow/slurm/start-cluster.sh STATE_DIR [PARTITION ...]    (default partitions: kind-a kind-b)
#   tests/workflow/slurm/stop-cluster.sh STATE_DIR
#
# Needs root and Debian's packages: apt-get install -y slurm-wlm slurmdbd munge mariadb-server.
# Everything lives under STATE_DIR (configs, keys, spool, logs, the database): nothing in /etc is touched and a
# system munged / MariaDB / SLURM, if any, is left alone (own munge socket, own MariaDB socket, own ports).
# The cluster lives in a network namespace of its own whose only interface is the loopback (STATE_DIR/netns):
# slurmdbd listens on every address it has and cannot be told otherwise, so it is given no address but 127.0.0.1.
# Its daemons run in it, and so do the clients: STATE_DIR/bin holds sbatch, sacct, ... wrappers that enter it, and
# jobs inherit it from slurmd. The rest of the machine (a Snakemake that downloads) keeps its network.
# MariaDB has no TCP at all (skip-networking; slurmdbd reaches it through its unix socket).
# The node stands for every kind of machine: each PARTITION is a partition of that one node (no GPUs: no gres).
# On success STATE_DIR/env holds the variables clients need (SLURM_CONF); `source` it. Each daemon's pid is in
# STATE_DIR/pids/<name>.pid, which stop-cluster.sh reads. On failure the daemons started so far are stopped.
set -euo pipefail

state=${1:?usage: start-cluster.sh STATE_DIR [PARTITION ...]}
shift
partitions=("$@")
[ ${#partitions[@]} -gt 0 ] || partitions=(kind-a kind-b)
here=$(cd "$(dirname "$0")" && pwd)

[ "$(id -u)" = 0 ] || { echo "start-cluster.sh: needs root" >&2; exit 2; }
for bin in munged mariadbd mariadb-install-db slurmdbd slurmctld slurmd sacctmgr sinfo; do
    command -v "$bin" >/dev/null || [ -x "/usr/sbin/$bin" ] ||
        { echo "start-cluster.sh: $bin missing (apt-get install -y slurm-wlm slurmdbd munge mariadb-server)" >&2; exit 2; }
done
export PATH="$PATH:/usr/sbin"

mkdir -p "$state"
state=$(cd "$state" && pwd)
mkdir -p "$state"/{pids,log,munge,ctld,spool,mysql,bin}
chmod 700 "$state/munge"
trap 'echo "start-cluster.sh: failed, stopping what was started" >&2; "$here/stop-cluster.sh" "$state" || true' ERR

# --- the network namespace: loopback only ---------------------------------------------------------------------------
ns="$state/netns"
touch "$ns"
unshare --net="$ns" true
inns() { nsenter --net="$ns" "$@"; }
inns ip link set lo up
# SLURM resolves with AF_INET + AI_ADDRCONFIG, which glibc answers only where some IPv4 address other than
# 127.0.0.1 exists; a second loopback address (on lo, 127.0.0.0/8) satisfies it without leaving the loopback.
inns ip addr add 127.0.0.2/8 dev lo
# The wrappers also name the config: snakemake-executor-plugin-slurm-jobstep (0.6.1) drops every SLURM_* variable
# but a few from the environment of the srun it starts inside a job, SLURM_CONF included.
for tool in sbatch srun salloc sacct sacctmgr squeue scancel scontrol sinfo sstat; do
    printf '#!/bin/sh\nSLURM_CONF=%q exec nsenter --net=%q %q "$@"\n' "$state/slurm.conf" "$ns" "$(command -v "$tool")" \
        >"$state/bin/$tool"
    chmod +x "$state/bin/$tool"
done
export PATH="$state/bin:$PATH"

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...: poll until COMMAND succeeds
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $deadline ] || { echo "start-cluster.sh: $what did not come up; logs in $state/log" >&2; return 1; }
        sleep 0.5
    done
}

# --- munge: own key and socket -------------------------------------------------------------------------------------
dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$state/munge/munge.key"
munge_socket="$state/munge/munge.socket"
inns munged --force --key-file="$state/munge/munge.key" --socket="$munge_socket" --pid-file="$state/pids/munged.pid" \
    --log-file="$state/log/munged.log" --seed-file="$state/munge/munge.seed"
wait_for 20 munged test -S "$munge_socket"

# --- MariaDB: unix socket only --------------------------------------------------------------------------------------
mysql_socket="$state/mysql.sock"
mariadb-install-db --user=root --datadir="$state/mysql" --auth-root-authentication-method=socket \
    --skip-test-db >"$state/log/mariadb-install.log" 2>&1
inns mariadbd --user=root --datadir="$state/mysql" --socket="$mysql_socket" --skip-networking \
    --pid-file="$state/pids/mariadbd.pid" --log-error="$state/log/mariadbd.log" \
    --innodb-buffer-pool-size=32M --innodb-log-file-size=8M >/dev/null 2>&1 &
wait_for 60 MariaDB mariadb --socket="$mysql_socket" -e "select 1"

# --- slurm.conf, slurmdbd.conf ---------------------------------------------------------------------------------------
cpus=$(nproc)
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
ctld_port=6817 slurmd_port=6818 dbd_port=6819  # the defaults, in a namespace of their own
cat >"$state/slurm.conf" <<EOF
ClusterName=specbench
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$munge_socket
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/pids/slurmctld.pid
SlurmdPidFile=$state/pids/slurmd.pid
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$dbd_port
AccountingStoragePass=$munge_socket
AccountingStoreFlags=job_comment
JobCompType=jobcomp/none
MinJobAge=300
InactiveLimit=0
KillWait=5
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
EOF
default=YES
for partition in "${partitions[@]}"; do
    echo "PartitionName=$partition Nodes=localhost Default=$default MaxTime=INFINITE State=UP" >>"$state/slurm.conf"
    default=NO
done
cat >"$state/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$munge_socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
PidFile=$state/pids/slurmdbd.pid
LogFile=$state/log/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
EOF
chmod 600 "$state/slurmdbd.conf"
printf 'export SLURM_CONF=%q PATH=%q:"$PATH"\n' "$state/slurm.conf" "$state/bin" >"$state/env"
export SLURM_CONF="$state/slurm.conf"

# --- daemons ---------------------------------------------------------------------------------------------------------
# slurmdbd reads slurmdbd.conf beside $SLURM_CONF; MYSQL_UNIX_PORT points the MariaDB client at our socket.
MYSQL_UNIX_PORT="$mysql_socket" inns slurmdbd
wait_for 60 slurmdbd sacctmgr -i list cluster
sacctmgr -i add cluster specbench >/dev/null
inns slurmctld
wait_for 60 slurmctld scontrol ping
inns slurmd -N localhost
wait_for 60 "slurmd (node idle)" sh -c "sinfo -h -N -o '%T' | grep -qx idle"
sacctmgr -i add account specbench Description=tests Organization=specbench >/dev/null
sacctmgr -i add user root Account=specbench DefaultAccount=specbench >/dev/null
trap - ERR
echo "start-cluster.sh: up (SLURM_CONF=$SLURM_CONF; partitions ${partitions[*]}; $cpus CPUs, $mem_mb MB)" >&2

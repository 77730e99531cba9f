#!/usr/bin/env bash
# Starts a private single-node Slurm (munged + slurmctld + slurmd on localhost) for tests.
#
#   scripts/slurm-up.sh DIR      # DIR: an empty folder for its config, state, sockets and logs
#
# Prints `SLURM_CONF=DIR/slurm.conf` on stdout when the node is idle and takes jobs; point
# sbatch, squeue and scontrol at it with that variable. Stop it with scripts/slurm-down.sh DIR.
# Installs Debian's packages (slurmctld slurmd slurm-client munge) when they are missing.
#
# Exit codes: 0 up; 77 Slurm cannot be had here (not root, or no apt-get to install it) -- the
# caller skips; anything else is a failure (the daemons started so far are stopped again).
# Nothing outside DIR is touched but the package install: its own munge key, socket and ports.
set -euo pipefail

dir=${1:?usage: slurm-up.sh DIR}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
log() { echo "slurm-up: $*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
    log "skip: slurmd must run as root to start jobs, and this is uid $(id -u)"
    exit 77
fi
PATH=$PATH:/usr/sbin:/sbin
missing=()
for p in munged mungekey slurmctld slurmd sbatch squeue sinfo; do
    command -v "$p" >/dev/null || missing+=("$p")
done
if ((${#missing[@]})); then
    if ! command -v apt-get >/dev/null; then
        log "skip: ${missing[*]} missing and no apt-get to install Slurm"
        exit 77
    fi
    log "installing slurmctld slurmd slurm-client munge (missing: ${missing[*]})"
    export DEBIAN_FRONTEND=noninteractive
    # /tmp/sweep-apt.lock: one apt-get at a time among the tests' installers (LibreOffice's too).
    if ! flock /tmp/sweep-apt.lock bash -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge' \
        >"$dir/install.log" 2>&1; then
        tail -n 20 "$dir/install.log" >&2
        log "error: apt-get could not install Slurm (log: $dir/install.log)"
        exit 1
    fi
fi

fail() {
    log "error: $*"
    for f in munged.log slurmctld.log slurmd.log; do
        [[ -f $dir/$f ]] && { echo "--- $dir/$f (last lines)" >&2; tail -n 15 "$dir/$f" >&2; }
    done
    "$here/slurm-down.sh" "$dir" >&2 || true
    exit 1
}

# Two free TCP ports on localhost: nothing answers a connect on them.
free_port() {
    local p
    for _ in $(seq 200); do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
    fail "no free TCP port found"
}
ctld_port=$(free_port)
slurmd_port=$(free_port)
[[ $slurmd_port != "$ctld_port" ]] || slurmd_port=$((ctld_port + 1))

host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
chmod 700 "$dir/munge"

mungekey --create --force --keyfile="$dir/munge/munge.key"
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/munged.seed" \
    || fail "munged did not start"

cat >"$dir/slurm.conf" <<EOF
# A private single-node cluster written by scripts/slurm-up.sh; stop it with scripts/slurm-down.sh.
ClusterName=sweeptest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
MailProg=/bin/true
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$dir/slurm.conf

slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"

# Ready when the node reports idle.
for _ in $(seq 60); do
    state=$(sinfo -h -N -o %t 2>/dev/null | head -n 1 || true)
    if [[ $state == idle ]]; then
        echo "SLURM_CONF=$SLURM_CONF"
        log "up: node $host ($cpus CPUs), slurmctld port $ctld_port, state and logs in $dir"
        exit 0
    fi
    sleep 0.5
done
fail "the node did not become idle within 30 s (sinfo says: ${state:-nothing})"

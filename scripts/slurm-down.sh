#!/usr/bin/env bash
# Stops the single-node Slurm that scripts/slurm-up.sh DIR started, by the pid files in DIR:
# SIGTERM to slurmd and slurmctld, then to munged once they are gone; SIGKILL to whichever still
# runs 10 s after its SIGTERM. Safe to run twice, or when nothing was started.
#
#   scripts/slurm-down.sh DIR
set -uo pipefail

dir=${1:?usage: slurm-down.sh DIR}

# Process PID runs program NAME and has not exited (a zombie has).
running() {
    local stat
    stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    [[ $stat == *"($2)"* ]] || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z && ${stat%% *} != X ]]
}

stop() {
    local name pid pids=()
    for name in "$@"; do
        [[ -f $dir/$name.pid ]] || continue
        pid=$(tr -dc 0-9 <"$dir/$name.pid")
        if [[ -n $pid ]] && running "$pid" "$name"; then
            kill -TERM "$pid" 2>/dev/null
            pids+=("$pid:$name")
        fi
        rm -f "$dir/$name.pid"
    done
    for _ in $(seq 100); do
        local left=0 p
        for p in "${pids[@]}"; do running "${p%%:*}" "${p#*:}" && left=1; done
        ((left)) || return 0
        sleep 0.1
    done
    for p in "${pids[@]}"; do
        if running "${p%%:*}" "${p#*:}"; then
            echo "slurm-down: ${p#*:} (${p%%:*}) ignored SIGTERM for 10 s; killing it" >&2
            kill -KILL "${p%%:*}" 2>/dev/null
        fi
    done
}

# Jobs still in this cluster (a test that failed half-way) are cancelled first, so that no task
# outlives the daemons.
if [[ -f $dir/slurm.conf && -f $dir/slurmctld.pid ]] && command -v scancel >/dev/null; then
    export SLURM_CONF=$dir/slurm.conf
    if [[ -n $(timeout 10 squeue -h -o %i 2>/dev/null) ]]; then
        timeout 10 scancel --full --user="$(id -un)" 2>/dev/null
        for _ in $(seq 50); do
            [[ -z $(timeout 10 squeue -h -o %i 2>/dev/null) ]] && break
            sleep 0.2
        done
    fi
fi

stop slurmd slurmctld
stop munged
exit 0

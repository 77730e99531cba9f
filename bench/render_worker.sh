#!/bin/bash
# The cost of rendering in a worker process (src/render/bounded.rs) against rendering in sweep's
# own process: median wall time of `plan`, `render`, `build` (every point cached) and `run --force`
# (cached builds, 512 host programs) on a 512-point host-program sweep (tests/project's hostsaw,
# threads 1..512), two builds of sweep alternating, N rounds.
#   bench/render_worker.sh OLD_SWEEP NEW_SWEEP [N]
set -eu
old=$1 new=$2 N=${3:-9}
work=$(mktemp -d)
cp -r "$(dirname "$0")/../tests/project" "$work/proj"
cd "$work/proj"
sed 's/range = \[1, 64\]/range = [1, 512]/' sweeps/saw.toml > sweeps/big.toml
export SWEEP_LOCK_DIR=$work/locks
echo "# $(uname -srm), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); commit $(git -C "$OLDPWD" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "# old: $old; new: $new; $N rounds"
"$new" build sweeps/big.toml --cache "$work/cache" --output "$work/bout" >/dev/null 2>&1
declare -A T
for _ in $(seq "$N"); do
  for b in old new; do
    bin=$old; [ $b = new ] && bin=$new
    for c in plan render build run; do
      case $c in
        plan) args=(plan sweeps/big.toml);;
        render) args=(render --point 300 sweeps/big.toml);;
        build) args=(build sweeps/big.toml --cache "$work/cache" --output "$work/bout");;
        run) args=(run -q --no-analyze --force sweeps/big.toml --cache "$work/cache");;
      esac
      s=$(date +%s%N); "$bin" "${args[@]}" >/dev/null 2>&1 || echo "FAIL $b $c"; e=$(date +%s%N)
      T[$b-$c]+="$(( (e - s) / 1000000 )) "
    done
  done
done
for c in plan render build run; do
  for b in old new; do
    echo "$c $b median_ms=$(echo ${T[$b-$c]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}') all=${T[$b-$c]}"
  done
done
rm -rf "$work"

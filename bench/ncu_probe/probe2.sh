#!/usr/bin/env bash
# Device probe for issue 16: ncu NVTX filters, CSV shape, metric names, nvidia-smi sampling.
set -x
export PATH=$PATH:/usr/local/cuda/bin
O=${1:-$OUT}
cd "$(dirname "$0")"
ncu --version
nvcc -O2 -arch=sm_90 -o /tmp/nvtx_probe nvtx_probe.cu
M=smsp__inst_executed.sum
ncu --csv --nvtx --metrics $M --log-file $O/all.csv /tmp/nvtx_probe; echo rc=$?
ncu --csv --nvtx --nvtx-include "sweep:1/" --metrics $M --log-file $O/inc1.csv /tmp/nvtx_probe; echo rc=$?
ncu --csv --nvtx --nvtx-include "regex:sweep:.*/" --metrics $M --log-file $O/incre.csv /tmp/nvtx_probe; echo rc=$?
ncu --csv --nvtx --nvtx-include "regex:^sweep:[0-9]+$/" --metrics $M --log-file $O/incre2.csv /tmp/nvtx_probe; echo rc=$?
ncu --csv --metrics nonexistent__metric.sum --log-file $O/bad.csv /tmp/nvtx_probe; echo rc=$?
ncu --csv --print-units base --metrics dram__bytes_read.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum --log-file $O/units.csv /tmp/nvtx_probe; echo rc=$?
ncu --query-metrics --chip gh100 > $O/query.txt 2>&1
grep -E "shared|dram__bytes|lts__t_sectors|warps_active|achieved_occupancy|inst_executed_op_global|sectors_pipe_lsu_mem_global" $O/query.txt | head -80
nvidia-smi --help-query-gpu | grep -iE "power.draw|clocks.sm|clocks.current.sm|temperature.gpu|enforced" | head
timeout 2 nvidia-smi -i 0 --query-gpu=timestamp,power.draw,power.draw.instant,clocks.sm,temperature.gpu --format=csv,noheader,nounits -lms 50; echo rc=$?
ls /usr/lib/x86_64-linux-gnu/libnvidia-ml* 2>&1 | head -3

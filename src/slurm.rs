//! `sweep slurm`: writes a Slurm job-array script for a sharded sweep. (Issue 6; not written yet.)

// Rendered by sweep: point p017df8fb502a of bench halfwarp.
// THREADS: threads per block (the swept constant); ITERATIONS: loop trips per thread; ADDS: float
// additions per trip (one result stored per trip; 1 = store-bound, as in the paper); grids of
// BLOCKS_PER_SM x SM-count blocks.
#define THREADS 83
#define ITERATIONS 8192
#define ADDS 1
#define BLOCKS_PER_SM 8

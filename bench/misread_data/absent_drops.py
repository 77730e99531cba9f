# P=32 staircase on threads 1..1024, time = 32 * (#present edges below x) + 32; a drop at edge k*32
# is absent with prob q; throughput = 1e6*x/time * (1+N(0,noise)).
import random, sys
def col(seed, q, noise, n=1024, P=32):
    rng = random.Random(seed * 1000 + n + P)
    present = [True] + [rng.random() >= q for _ in range(n // P + 1)]
    out = []
    for x in range(1, n + 1):
        t = P + sum(P for k in range(1, (x - 1) // P + 1) if present[k])
        out.append(1e6 * x / t * (1 + rng.gauss(0, noise)))
    return out
cols = {"s036_mflops": col(36, 0.15, 0.01), "s016_mflops": col(16, 0.20, 0.005),
        "s011_mflops": col(11, 0.15, 0.01)}
with open(sys.argv[1] + "/results.csv", "w") as f:
    f.write("point_id,index,threads,status," + ",".join(cols) + ",error\n")
    for i in range(1024):
        f.write("p%06d,%d,%d,ok,%s,\n" % (i, i, i + 1, ",".join("%.4f" % c[i] for c in cols.values())))

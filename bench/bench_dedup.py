"""Near-duplicate search at scale: N random unit 1024-d vectors (default 1,000,000) with P planted near-duplicate pairs
(default 10,000, cosines uniform in [0.91, 0.995]), searched with `imgprep.dedup.approx_pairs` at threshold 0.9; the
exact method (`exact_pairs`) timed on --exact-n vectors (default 100,000) of the same kind, and the two compared there.

Random vectors in 1024 dimensions are at cosine |c| < 0.2 from each other, so the exact pairs at 0.9 are the planted
ones: recall is measured against them. Real image embeddings cluster (many photos of one subject), which is harder for
an approximate index: `--clustered 1000` puts every vector in one of 1,000 clusters, at cosines 0.6-0.85 from the
others of its cluster, and the planted pairs above the threshold as before. The vectors are made block by block from a seed (never all at once), as a tree's
are read, so the peak memory is the index's. Usage:

    python bench/bench_dedup.py [--n 1000000] [--pairs 10000] [--exact-n 100000] [--nprobe 16] [--clustered 1000]
"""
import argparse, resource, time
import numpy as np
from imgprep.dedup import approx_pairs, exact_pairs, ivf_spec

D = 1024

class Planted:
    "Block-wise reproducible random unit vectors with `pairs` disjoint near-duplicate pairs (rows a, partner[a])."
    def __init__(self, n:int, pairs:int, seed:int=0):
        rng = np.random.default_rng(seed)
        a = rng.choice(n, 2*pairs, replace=False)
        self.n, self.seed, self.src, self.dst = n, seed, a[:pairs], a[pairs:]
        self.cos = rng.uniform(0.91, 0.995, pairs).astype(np.float32)
        self.partner = {int(d): (int(s), float(c)) for s,d,c in zip(self.src, self.dst, self.cos)}

    def base(self, rows:np.ndarray)->np.ndarray:
        "The unplanted vector of each row, from a generator seeded by the row (about 20 us a row: it stands in for reading a file)."
        out = np.stack([np.random.default_rng([self.seed, r]).standard_normal(D, np.float32) for r in rows.tolist()]) if len(rows) else np.zeros((0, D), np.float32)
        return out/np.linalg.norm(out, axis=1, keepdims=True)

    def __call__(self, rows:np.ndarray)->np.ndarray:
        X = self.base(rows)
        planted = [(o, *self.partner[r]) for o,r in enumerate(rows.tolist()) if r in self.partner]
        if planted:
            o,src,c = map(np.array, zip(*planted))
            x = self.base(src); u = X[o] - (X[o]*x).sum(1, keepdims=True)*x; u /= np.linalg.norm(u, axis=1, keepdims=True)
            X[o] = c[:, None].astype(np.float32)*x + np.sqrt(1 - c*c)[:, None].astype(np.float32)*u
        return X

    def truth(self)->set: return set(zip(np.minimum(self.src, self.dst).tolist(), np.maximum(self.src, self.dst).tolist()))

class Clustered(Planted):
    "`Planted`, with every unplanted vector in one of `clusters` clusters: a*centre + sqrt(1-a^2)*noise, a in [0.775, 0.922], so two of one cluster are at cosine 0.6-0.85."
    def __init__(self, n:int, pairs:int, seed:int=0, clusters:int=1000):
        super().__init__(n, pairs, seed)
        C = np.random.default_rng([seed, 1]).standard_normal((clusters, D), np.float32)
        self.centres = C/np.linalg.norm(C, axis=1, keepdims=True)

    def base(self, rows:np.ndarray)->np.ndarray:
        u = super().base(rows)
        m = self.centres[rows % len(self.centres)]
        a = (0.775 + 0.147*((rows*0.6180339887) % 1)).astype(np.float32)[:, None]  # spread evenly over [0.775, 0.922]
        u = u - (u*m).sum(1, keepdims=True)*m; u /= np.linalg.norm(u, axis=1, keepdims=True)
        return a*m + np.sqrt(1 - a*a)*u

def as_set(P)->set: return set(map(tuple, P.tolist()))
def peak_gb()->float: return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/2**20

if __name__ == '__main__':
    p = argparse.ArgumentParser()
    p.add_argument('--n', type=int, default=1_000_000); p.add_argument('--pairs', type=int, default=10_000)
    p.add_argument('--exact-n', type=int, default=100_000); p.add_argument('--nprobe', type=int, default=16)
    p.add_argument('--clustered', type=int, default=0, help='clusters of the vectors (0: none, isotropic)')
    a = p.parse_args()
    make = (lambda n, pairs, seed=0: Clustered(n, pairs, seed, a.clustered)) if a.clustered else Planted
    if a.exact_n:
        small = make(a.exact_n, a.exact_n//100, seed=1)
        X = small(np.arange(a.exact_n))
        t = time.time(); E = as_set(exact_pairs(X, 0.9)[1]); te = time.time() - t
        t = time.time(); A = as_set(approx_pairs(lambda r: X[r], a.exact_n, 0.9, nprobe=a.nprobe)[1]); ta = time.time() - t
        print(f'{a.exact_n} vectors{f" in {a.clustered} clusters" if a.clustered else ""}: exact {te:.0f} s ({len(E)} pairs, planted {len(small.truth())}, all found: {small.truth() <= E}); '
              f'approx {ta:.0f} s, recall of the exact pairs {len(A & E)/len(E):.4f}, pairs not exact {len(A - E)}', flush=True)
        del X
    if not a.n: raise SystemExit
    big = make(a.n, a.pairs)
    t = time.time()
    nn,P,s = approx_pairs(big, a.n, 0.9, nprobe=a.nprobe)
    t = time.time() - t
    found,truth = as_set(P),big.truth()
    print(f'{a.n} vectors{f" in {a.clustered} clusters" if a.clustered else ""}, {a.pairs} planted pairs, {ivf_spec(a.n)}, nprobe {a.nprobe}: {t:.0f} s ({t/60:.1f} min), '
          f'recall {len(found & truth)/len(truth):.4f}, other pairs {len(found - truth)}, peak memory (ru_maxrss) {peak_gb():.2f} GB')

"""Stage 2 on several workers: arrays/s with 1 and 2 worker processes, and on a local Ray cluster with 2 actors,
on real photographs with the tiny models, on CPU, one torch thread per worker; and Ray's start-up time.

    python bench/bench_workers.py [--images 200] [--rounds 2] [--dir /tmp/imgprep_bench_workers] [--only '2 workers' --only 'Ray, 2 actors']

The photographs are the ones matplotlib and scikit-image ship (300x451 to 512x741 pixels), written as `--images`
unique JPEGs with captions (as bench/bench_ingest.py makes them), half of them EXIF-rotated, then ingested. Each run is
`imgprep_stage2 --kinds dinov3,vae,t5` in a child process on a fresh copy of the ingested JSONL, timed by the wall
clock from start to exit: model loading, worker start (and for Ray, the cluster's start) are included, as a user
sees them. Rounds are interleaved, so load from other processes falls on every configuration alike; the best and the
median of each are printed, with the ratio of the bests to the one-worker run.

Ray's start-up is timed apart: `ray.init` of a local cluster, and the first answer of two actors (the pool's
`Echo` spec, on the engine `open_workers` builds for `--ray local`), in a child process, against the interpreter
start with `import ray` alone. `--only` runs some of the configurations (the ratios then need theirs).
"""
import argparse, os, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_ingest import make_folder
from imgprep.ingest import ingest
from imgprep.testing import tiny_models

RAY_START = """
import time; t0 = time.perf_counter()
from imgprep.pool import Echo, open_workers, placement
t1 = time.perf_counter()
with open_workers(Echo(), placement(ray='local')) as w:
    t2 = time.perf_counter()
    list(w.map(range(2)))
    t3 = time.perf_counter()
print(t1-t0, t2-t1, t3-t2)
"""

def configs(models:dict, photos:Path)->dict:
    "Name -> the flags of one Stage 2 run."
    m = [a for k in ('dinov3', 'vae', 't5') for a in (f'--{k}-model', models[k])]
    base = ['--images-root', photos, '--kinds', 'dinov3,vae,t5', *m, '--device', 'cpu', '--check-inline', '0', '--min-free-gb', '0', '--progress-every', '0']
    return {'1 worker': base + ['--workers', '1', '--threads', '1'],
            '2 workers': base + ['--workers', '2', '--threads', '1'],
            'Ray, 2 actors': base + ['--ray', 'local']}

def timed_run(src:Path, work:Path, flags:list)->tuple:
    "(seconds, arrays written) of one Stage 2 run on a fresh copy of the ingested JSONL."
    if work.exists(): shutil.rmtree(work)
    work.mkdir(parents=True)
    jsonl = Path(shutil.copy(src, work/src.name))
    t = time.perf_counter()
    p = subprocess.run(['imgprep_stage2', '--jsonl', str(jsonl), *map(str, flags)], capture_output=True, text=True)
    secs = time.perf_counter() - t
    if p.returncode: raise SystemExit(f'stage 2 failed ({p.returncode}): {p.stderr.strip().splitlines()[-1]}')
    c = dict(kv.split('=', 1) for kv in p.stdout.split() if '=' in kv)
    return secs, sum(int(c.get(f'new_{k}', 0)) for k in ('dinov3', 'vae', 't5'))

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--images', type=int, default=200)
    p.add_argument('--rounds', type=int, default=2)
    p.add_argument('--dir', default='/tmp/imgprep_bench_workers')
    p.add_argument('--only', action='append', help='A configuration to run (repeatable; default: all)')
    a = p.parse_args()
    base = Path(a.dir)
    if base.exists(): shutil.rmtree(base)
    make_folder(base/'photos', a.images)
    src = base/'derived'/'approved_image_dataset.jsonl'
    c = ingest(base/'photos', src, val_fraction=0, progress_every=0)
    models = tiny_models(base/'models')
    print(f'{a.images} real photographs (matplotlib and scikit-image, 300x451 to 512x741), {c["written"]} ingested; '
          f'tiny models, CPU, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}')
    runs = {k: v for k,v in configs(models, base/'photos').items() if not a.only or k in a.only}
    res = {k: [] for k in runs}
    for r in range(a.rounds):
        for name,flags in runs.items(): res[name].append(timed_run(src, base/'work', flags))
    best = {k: min(s for s,_ in v) for k,v in res.items()}
    median = {k: statistics.median(s for s,_ in v) for k,v in res.items()}
    print(f"{'':15} {'best s':>7} {'median s':>9} {'arrays':>7} {'arrays/s':>9} {'vs 1 worker (best, median)':>27}")
    for name,v in res.items():
        vs = f"{best['1 worker']/best[name]:14.2f}x {median['1 worker']/median[name]:10.2f}x" if '1 worker' in res else ''
        print(f"{name:15} {best[name]:7.1f} {median[name]:9.1f} {v[0][1]:7} {v[0][1]/best[name]:9.1f} {vs}")
    if {'2 workers', 'Ray, 2 actors'} <= res.keys():
        print(f"Ray on 2 actors against the built-in 2 workers: {best['2 workers']/best['Ray, 2 actors']:.2f}x (bests), "
              f"{median['2 workers']/median['Ray, 2 actors']:.2f}x (medians)")
    t = time.perf_counter()
    imp,init,first = map(float, subprocess.run([sys.executable, '-c', RAY_START], capture_output=True, text=True, check=True).stdout.split())
    print(f'Ray start-up: import {imp:.1f} s, a local cluster (ray.init) {init:.1f} s, the first answer of 2 actors {first:.1f} s; '
          f'{time.perf_counter()-t:.1f} s in all, interpreter included; load average {os.getloadavg()[0]:.1f}')
    shutil.rmtree(base)

if __name__ == '__main__': main()

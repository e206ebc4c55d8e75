"""Benchmark imgprep_embed_arrow: samples/s of the tiny text model on a synthetic split of short texts.

    python bench/bench_arrow.py [--rows 100000] [--shards 175] [--batch-size 32] [--runs 1,1:1,2]

Each run is `workers` or `workers:threads` (torch threads per worker; default cores / workers, and for one
worker whatever torch chose). samples/s counts the embedding phase, from the moment every worker has
loaded its model to the last shard written; wall is the whole call, model loading and worker start included.
Timings on a shared machine are noisy, so each run is also given as a ratio to the first run of the same call.
"""
import argparse, os, shutil, tempfile, time
from pathlib import Path

import numpy as np
import datasets
import torch
from datasets import Dataset

from imgprep.arrow import embed_arrow
from imgprep.tiny_models import tiny_models

WORDS = 'a photo of red blue green cat dog tree house sky river mountain city night street old young small large'.split()

def synthetic_split(root:Path, rows:int, shards:int)->Path:
    "A dataset folder with one split 'train' of `rows` short texts in `shards` Arrow shards."
    rng = np.random.default_rng(0)
    texts = [' '.join(rng.choice(WORDS, rng.integers(3, 16))) for _ in range(rows)]
    Dataset.from_dict({'text': texts}).save_to_disk(root/'train', num_shards=shards)
    return root

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--rows', type=int, default=100_000)
    p.add_argument('--shards', type=int, default=175)
    p.add_argument('--batch-size', type=int, default=32)
    p.add_argument('--runs', default='1,1:1,2', help='comma-separated workers[:threads]')
    a = p.parse_args()
    datasets.disable_progress_bars()
    tmp = Path(tempfile.mkdtemp(prefix='bench_arrow.'))
    try:
        t = time.monotonic()
        data = synthetic_split(tmp/'data', a.rows, a.shards)
        model = tiny_models(tmp/'models')['text']
        print(f'{a.rows} texts in {a.shards} shards, tiny BERT (hidden 32, 2 layers), batch {a.batch_size}, '
              f'{os.cpu_count()} cores, torch {torch.__version__} (default threads {torch.get_num_threads()}); '
              f'setup {time.monotonic()-t:.1f}s')
        base = None
        for i,run in enumerate(a.runs.split(',')):
            workers,_,threads = run.partition(':')
            r = embed_arrow(data, tmp/f'out{i}', model=model, device='cpu', workers=int(workers),
                            threads=int(threads) if threads else None, batch_size=a.batch_size, progress=False)
            assert r['samples_embedded'] == a.rows and r['shards_embedded'] == a.shards, r
            base = base or r
            print(f"workers={workers} threads={threads or 'default'}: samples_per_s={r['samples_per_s']} wall_s={r['seconds']} "
                  f"speed_vs_first={r['samples_per_s']/base['samples_per_s']:.2f} wall_vs_first={r['seconds']/base['seconds']:.2f}")
    finally: shutil.rmtree(tmp, ignore_errors=True)

if __name__ == '__main__': main()

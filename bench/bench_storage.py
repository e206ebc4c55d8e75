"""Object-storage benchmark: `bucket_dataset` streaming shards from an S3 endpoint against the store's own ceiling and
against the same shards on local disk, with 1 and with 4 DataLoader workers, and `imgprep_shard` writing to the
endpoint against writing to a local folder, all in one run on one machine.

    python bench/bench_storage.py [--n 1000] [--rounds 5] [--batch 16] [--shard-size 50] [--workers 4] [--dir /tmp/imgprep_bench_storage] [--store-only]

The endpoint is moto's S3 server on 127.0.0.1 (the one the tests use), run in a process of its own and reached through
s3fs exactly as AWS is. moto is a Python server (threads under one GIL), so its own speed bounds the store side, and
the goals are set against that bound measured in the same run with the same concurrency:

- GET ceiling, 1 client: every shard object fetched whole with one GET each (`Store.read_bytes`), one after the
  other, nothing decoded. The loader with no worker process (`num_workers=0`) and with one (`num_workers=1`) is
  measured against it (goal: at least 0.9x).
- GET ceiling, `--workers` clients: the same GETs from `--workers` processes at once (a pool started before the
  clock, each process with its own s3fs client, as each DataLoader worker has), objects handed out one at a time.
  The loader with `num_workers=--workers` (each worker streams its share of the shards, webdataset's
  `split_by_worker`) is measured against it (goal: at least 0.9x), and against one worker (goal: at least 2x).
  The DataLoader's worker processes are started inside the clock (`persistent_workers=False`): a training epoch pays
  for them too.
- Local: the loader over the same shards on local disk, in the page cache (the bench just wrote them) and dropped
  from it first (`posix_fadvise(DONTNEED)`), which is what a training job reading terabytes of shards meets.
- Writers: `imgprep_shard` to the store against to a local folder (each replacing its previous round's shards).

The Stage 2 tree has real sizes (dinov3 (1024,) f32, vae (16,128,128) f16, t5 (77,1024) f16); `--n` samples in shards
of `--shard-size` (the default makes 20 shards, 5 per worker). Every contender runs once per round, interleaved, so
load from other processes falls on all of them; samples/s are printed as the median of the rounds beside the best,
and ratios of medians beside ratios of bests, with the load average at start and end."""
import argparse, logging, multiprocessing, os, shutil, socket, statistics, subprocess, sys, time, warnings
from pathlib import Path

import boto3
from torch.utils.data import DataLoader

from imgprep.loader import bucket_dataset
from imgprep.shards import write_shards
from imgprep.storage import Store
from imgprep.testing import make_stage2

def moto_process()->tuple:
    "(process, storage options) of moto's S3 server started in a process of its own, with a bucket `bench`."
    with socket.socket() as s: s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, '-m', 'moto.server', '-H', '127.0.0.1', '-p', str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    opts = dict(key='bench', secret='bench-secret', endpoint_url=f'http://127.0.0.1:{port}')
    for _ in range(100):
        try: boto3.client('s3', endpoint_url=opts['endpoint_url'], aws_access_key_id='k', aws_secret_access_key='s', region_name='us-east-1').create_bucket(Bucket='bench'); break
        except Exception: time.sleep(0.1)
    return proc, opts

def timed(fn)->float:
    t = time.perf_counter(); fn(); return time.perf_counter()-t

def uncached(d:Path)->Path:
    "`d`, its shards dropped from the page cache first, so that the next read comes from the disk."
    for p in d.rglob('*.tar'):
        fd = os.open(p, os.O_RDONLY)
        try: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally: os.close(fd)
    return d

def consume(ds)->int: return sum(len(b['__key__']) for b in ds)

def loaded(ds, workers:int|None)->int:
    "Samples from `ds` iterated directly (`workers` None) or through a DataLoader with `workers` worker processes."
    return consume(ds if workers is None else DataLoader(ds, batch_size=None, num_workers=workers))

_store = None
def _client(url:str, opts:dict):
    global _store
    _store = Store(url, opts)
    _store.info('')  # the client's connection is made before the clock starts

def _get(rel:str)->int: return len(_store.read_bytes(rel))

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--n', type=int, default=1000); ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--batch', type=int, default=16); ap.add_argument('--shard-size', type=int, default=50)
    ap.add_argument('--workers', type=int, default=4, help='DataLoader workers, and concurrent clients of the ceiling they are measured against')
    ap.add_argument('--dir', default='/tmp/imgprep_bench_storage')
    ap.add_argument('--store-only', action='store_true', help='only the GET ceilings and the loader from the store (no local loader, no writers): a short run')
    a = ap.parse_args()
    logging.getLogger('imgprep').setLevel(logging.ERROR)
    warnings.filterwarnings('ignore', 'This DataLoader will create')  # more workers than CPUs is what is measured
    print(f'machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start')
    d = Path(a.dir); shutil.rmtree(d, ignore_errors=True); d.mkdir(parents=True)
    s2 = make_stage2(d/'s2', n=a.n, buckets=['1024x1024'], scale=1)
    proc,opts = moto_process()
    pool = None
    try:
        write_shards(d/'local', derived_dir=s2.base, shard_size=a.shard_size, progress_every=0)
        url = 's3://bench/shards'
        write_shards(url, derived_dir=s2.base, shard_size=a.shard_size, progress_every=0, storage_options=opts, staging_dir=str(d/'staging'))
        st = Store(url, opts)
        tars = [r for r in st.files() if r.endswith('.tar')]
        size = sum(p.stat().st_size for p in (d/'local').rglob('*.tar'))
        print(f'{a.n} samples, {size/2**20:.0f} MiB in {len(tars)} shards of {a.shard_size}; batch {a.batch}; {a.rounds} interleaved rounds')
        pool = multiprocessing.get_context('fork').Pool(a.workers, _client, (url, opts))
        assert sum(pool.map(_get, tars, chunksize=1)) == sum(st.info(t)['size'] for t in tars)
        W = a.workers
        contenders = {
            'GET ceiling, 1 client': lambda: [st.read_bytes(t) for t in tars],
            f'GET ceiling, {W} clients': lambda: list(pool.imap_unordered(_get, tars, chunksize=1)),
            'loader store, in process': lambda: loaded(bucket_dataset(url, batch_size=a.batch, storage_options=opts), None),
            'loader store, 1 worker': lambda: loaded(bucket_dataset(url, batch_size=a.batch, storage_options=opts), 1),
            f'loader store, {W} workers': lambda: loaded(bucket_dataset(url, batch_size=a.batch, storage_options=opts), W),
            'loader local, in process': lambda: loaded(bucket_dataset(d/'local', batch_size=a.batch), None),
            f'loader local, {W} workers': lambda: loaded(bucket_dataset(d/'local', batch_size=a.batch), W),
            'loader disk, in process': lambda: loaded(bucket_dataset(uncached(d/'local'), batch_size=a.batch), None),
            'shard local': lambda: write_shards(d/'w_local', derived_dir=s2.base, shard_size=a.shard_size, progress_every=0, overwrite=True),
            'shard store': lambda: write_shards('s3://bench/w', derived_dir=s2.base, shard_size=a.shard_size, progress_every=0, overwrite=True,
                                                storage_options=opts, staging_dir=str(d/'staging')),
        }
        if a.store_only: contenders = {k: v for k,v in contenders.items() if k.startswith(('GET', 'loader store'))}
        rate = {k: [] for k in contenders}
        for _ in range(a.rounds):
            for k,fn in contenders.items(): rate[k].append(a.n/timed(fn))
        print(f'\nsamples/s ({a.n} samples a pass), median of {a.rounds} rounds beside the best:')
        for k,v in rate.items(): print(f'  {k:28s} median {statistics.median(v):7.0f}  best {max(v):7.0f}')
        def ratio(x, y, goal=None):
            if x not in rate or y not in rate: return f'  {x} / {y}:'.ljust(70) + ' not measured (--store-only)'
            m,b = statistics.median(rate[x])/statistics.median(rate[y]),max(rate[x])/max(rate[y])
            g = '' if goal is None else f'  goal >= {goal}x: {"met" if m >= goal else "MISSED"} (by the medians)'
            return f'  {x} / {y}:'.ljust(70) + f' median {m:.2f}x  best {b:.2f}x{g}'
        print('\nratios (medians, and bests):')
        print(ratio('loader store, in process', 'GET ceiling, 1 client', 0.9))
        print(ratio('loader store, 1 worker', 'GET ceiling, 1 client', 0.9))
        print(ratio(f'loader store, {W} workers', f'GET ceiling, {W} clients', 0.9))
        print(ratio(f'loader store, {W} workers', 'loader store, 1 worker', 2))
        print(ratio(f'GET ceiling, {W} clients', 'GET ceiling, 1 client'))
        print(ratio('loader store, in process', 'loader local, in process'))
        print(ratio('loader store, in process', 'loader disk, in process'))
        print(ratio(f'loader local, {W} workers', 'loader local, in process'))
        print(ratio('shard store', 'shard local'))
        print(f'load average at end {os.getloadavg()[0]:.2f}')
    finally:
        if pool is not None: pool.terminate()
        proc.terminate(); proc.wait()
        shutil.rmtree(d, ignore_errors=True)

if __name__ == '__main__': main()

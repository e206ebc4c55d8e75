"""Object-storage benchmark: `bucket_dataset` streaming shards from an S3 endpoint against the same shards on local disk,
and `imgprep_shard` writing to the endpoint against writing to a local folder, in one run on one machine.

    python bench/bench_storage.py [--n 1000] [--rounds 3] [--batch 16] [--shard-size 100] [--dir /tmp/imgprep_bench_storage]

The endpoint is moto's S3 server on 127.0.0.1 (the one the tests use), run in a process of its own and reached through
s3fs exactly as AWS is. moto is a Python server, so its own speed bounds the store side: the script also measures
that ceiling (every shard fetched whole with one GET, nothing decoded) and the loader's speed against it.
The Stage 2 tree has real sizes (dinov3 (1024,) f32, vae (16,128,128) f16, t5 (77,1024) f16), shards of `--shard-size`.
Each contender runs once per round, interleaved; best and median samples/s are printed, and the ratio store/local
(the goal for the loader is at least 0.5). The local loader is timed twice: with its shards in the page cache (the
bench just wrote them) and with them dropped from it first (`posix_fadvise(DONTNEED)`), which is what a training
job reading terabytes of shards from its disk meets."""
import argparse, json, logging, os, shutil, socket, statistics, subprocess, sys, time
from pathlib import Path

import boto3

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

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--n', type=int, default=1000); ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--batch', type=int, default=16); ap.add_argument('--shard-size', type=int, default=100)
    ap.add_argument('--dir', default='/tmp/imgprep_bench_storage')
    a = ap.parse_args()
    logging.getLogger('imgprep').setLevel(logging.ERROR)
    d = Path(a.dir); shutil.rmtree(d, ignore_errors=True); d.mkdir(parents=True)
    s2 = make_stage2(d/'s2', n=a.n, buckets=['1024x1024'], scale=1)
    proc,opts = moto_process()
    write_shards(d/'local', derived_dir=s2.base, shard_size=a.shard_size, progress_every=0)
    url = 's3://bench/shards'
    write_shards(url, derived_dir=s2.base, shard_size=a.shard_size, progress_every=0, storage_options=opts, staging_dir=str(d/'staging'))
    st = Store(url, opts)
    tars = [r for r in st.files() if r.endswith('.tar')]
    size = sum(p.stat().st_size for p in (d/'local').rglob('*.tar'))
    print(f'{a.n} samples, {size/2**20:.0f} MiB of shards of {a.shard_size}; batch {a.batch}; {a.rounds} rounds')
    res = {k: [] for k in ('loader local', 'loader disk', 'loader store', 'GET ceiling', 'shard local', 'shard store')}
    for r in range(a.rounds):
        res['GET ceiling'].append(a.n/timed(lambda: [st.read_bytes(t) for t in tars]))
        res['loader local'].append(a.n/timed(lambda: consume(bucket_dataset(d/'local', batch_size=a.batch))))
        res['loader disk'].append(a.n/timed(lambda: consume(bucket_dataset(uncached(d/'local'), batch_size=a.batch))))
        res['loader store'].append(a.n/timed(lambda: consume(bucket_dataset(url, batch_size=a.batch, storage_options=opts))))
        shutil.rmtree(d/'w_local', ignore_errors=True)
        res['shard local'].append(a.n/timed(lambda: write_shards(d/'w_local', derived_dir=s2.base, shard_size=a.shard_size, progress_every=0)))
        res['shard store'].append(a.n/timed(lambda: write_shards(f's3://bench/w{r}', derived_dir=s2.base, shard_size=a.shard_size, progress_every=0,
                                                                 storage_options=opts, staging_dir=str(d/'staging'))))
    for k,v in res.items(): print(f'{k:13s} best {max(v):8.0f} samples/s  median {statistics.median(v):8.0f}')
    for what in ('loader', 'shard'):
        print(f'{what}: store/local = {statistics.median(res[what + " store"])/statistics.median(res[what + " local"]):.2f} (median)')
    print(f'loader: store/local from the disk, not the page cache = {statistics.median(res["loader store"])/statistics.median(res["loader disk"]):.2f} (median)')
    print(f'loader store / GET ceiling = {statistics.median(res["loader store"])/statistics.median(res["GET ceiling"]):.2f} (median)')
    proc.terminate(); proc.wait()
    shutil.rmtree(d, ignore_errors=True)

if __name__ == '__main__': main()

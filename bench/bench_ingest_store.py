"""Benchmark ingest from a bucket: images/s of `imgprep_ingest s3://...` against the same photos in a local folder, same run.

    python bench/bench_ingest_store.py [--images 10000] [--size 640x480] [--repeats 2] [--workers 2]

The photos are JPEGs made from the photographs matplotlib and scikit-image ship, scaled to `--size` (modest: moto
holds every object in memory), half of them stored sideways with an EXIF orientation, each made unique by a JPEG
comment (as `bench_ingest.py` does), with a `.txt` caption beside each, in 100 folders. The same files are
written to a local folder and uploaded to moto's S3 server, run in a process of its own on 127.0.0.1 and read
through s3fs exactly as AWS is (`bench_storage.moto_process`). moto is a Python server: its own speed bounds the
store side, so a real store far away is slower per request and faster in parallel; the figure says what our side
costs, not what AWS gives.

Four runs per round, interleaved so that load from other processes falls on all of them:

- local: ingest of the folder from scratch (no remembered inspections), `--workers` processes;
- store: ingest of the bucket from scratch: one listing, then one GET per image and per caption, 16 threads;
- local rerun and store rerun: the same commands again over unchanged photos, each inspection remembered
  (`<output>.seen.ingest.json`): a local rerun stats each file, a store rerun makes one listing and no GET;
- moto's ceiling: every image and caption object fetched whole with one GET, 16 threads, nothing parsed or
  hashed: what the server itself gives, which bounds the store's first run.

Both first runs must write the same bytes (the acceptance of the bucket form). Printed: best and median
images/s of each, the ratio store/local of the first runs and of the reruns, and the load average.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_ingest import PHOTOS, unique  # the photographs and the unique-bytes trick of the ingest bench
from bench_ingest_truncation import phone_jpeg  # a photograph scaled to a size, as a quality-90 JPEG
from bench_storage import moto_process

from imgprep.ingest import ingest
from imgprep.inspection import seen_path
from imgprep.storage import Store

def make_photos(n:int, size:tuple)->dict:
    "Relative path -> bytes of `n` unique JPEGs of `size` and their captions."
    bases = [phone_jpeg(p, size, o) for p in PHOTOS for o in (1, 6)]
    files = {}
    for i in range(n):
        rel = f'dir{i % 100:03d}/IMG_{i:05d}'
        files[f'{rel}.jpg'] = unique(bases[i % len(bases)], i)
        files[f'{rel}.txt'] = f'photograph number {i} of the benchmark bucket'.encode()
    return files

def timed_ingest(src, out:Path, fresh:bool, **kw)->tuple:
    "Seconds and counters of an ingest of `src`; `fresh` forgets what an earlier run remembered."
    if fresh:
        out.unlink(missing_ok=True); seen_path(out).unlink(missing_ok=True)
    t = time.perf_counter()
    c = ingest(src, out, progress_every=0, **kw)
    return time.perf_counter() - t, c

def fetch_all(st:Store, rels:list)->float:
    "Seconds to GET every object of `rels` whole, 16 at a time, doing nothing with the bytes."
    t = time.perf_counter()
    with ThreadPoolExecutor(16) as ex: sum(map(len, ex.map(lambda r: st.fs.cat_file(st.path_of(r)), rels)))
    return time.perf_counter() - t

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--images', type=int, default=10_000)
    p.add_argument('--size', default='640x480', help='WxH of each JPEG')
    p.add_argument('--repeats', type=int, default=2, help='rounds; each round times every run once')
    p.add_argument('--workers', type=int, default=2, help="ingest's worker processes for the local folder")
    a = p.parse_args()
    size = tuple(map(int, a.size.split('x')))
    tmp = Path(tempfile.mkdtemp(prefix='bench_ingest_store.'))
    proc,opts = moto_process()
    try:
        t = time.perf_counter()
        files = make_photos(a.images, size)
        for rel,data in files.items(): (tmp/'photos'/rel).parent.mkdir(parents=True, exist_ok=True); (tmp/'photos'/rel).write_bytes(data)
        st = Store('s3://bench/photos', opts)
        items = list(files.items())
        for i in range(0, len(items), 500): st.fs.pipe({st.path_of(r): d for r,d in items[i:i+500]})  # uploaded 500 at a time
        mb = sum(len(d) for r,d in items if r.endswith('.jpg'))/1e6
        print(f'photos: {a.images} JPEGs of {a.size} ({mb:.0f} MB, {mb*1e3/a.images:.0f} kB each) with captions, in a folder and in moto, '
              f'ready in {time.perf_counter()-t:.0f} s')
        load0 = os.getloadavg()
        runs = {k: [] for k in ('local', 'store', 'local rerun', 'store rerun', 'moto ceiling')}
        for r in range(a.repeats):
            s,cl = timed_ingest(tmp/'photos', tmp/'local.jsonl', True, workers=a.workers); runs['local'].append(s)
            s,cs = timed_ingest('s3://bench/photos', tmp/'store.jsonl', True, storage_options=opts); runs['store'].append(s)
            assert cl['written'] == cs['written'] == a.images, (cl, cs)
            assert (tmp/'local.jsonl').read_bytes() == (tmp/'store.jsonl').read_bytes(), 'the store and the folder gave other records'
            runs['local rerun'].append(timed_ingest(tmp/'photos', tmp/'local.jsonl', False, workers=a.workers)[0])
            runs['store rerun'].append(timed_ingest('s3://bench/photos', tmp/'store.jsonl', False, storage_options=opts)[0])
            runs['moto ceiling'].append(fetch_all(st, list(files)))
        n = a.images
        def rate(ts): return f'best {n/min(ts):7.0f}  median {n/statistics.median(ts):7.0f} images/s'
        print(f'machine: {os.cpu_count()} CPUs; load average (1, 5, 15 min) {" ".join(f"{x:.2f}" for x in load0)} before, '
              f'{" ".join(f"{x:.2f}" for x in os.getloadavg())} after')
        for k,ts in runs.items(): print(f'{k + ":":16s} {rate(ts)}')
        ratio = lambda a_,b_: f'{min(runs[b_])/min(runs[a_]):.2f}x of the bests, {statistics.median(runs[b_])/statistics.median(runs[a_]):.2f}x of the medians'
        print(f'ratio store / local, first runs: {ratio("store", "local")}')
        print(f'ratio store / local, reruns:     {ratio("store rerun", "local rerun")}')
        print(f'store first run / moto ceiling: {min(runs["moto ceiling"])/min(runs["store"]):.2f}x of the bests')
        print(f'rerun / first run: local {min(runs["local"])/min(runs["local rerun"]):.1f}x, store {min(runs["store"])/min(runs["store rerun"]):.1f}x faster (bests)')
    finally:
        proc.terminate(); proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == '__main__': main()

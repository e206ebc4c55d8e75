"""Stage 3 benchmark: `imgprep_shard` against GNU tar and webdataset.TarWriter, and `bucket_dataset` against
webdataset's `.decode()` and tarfile + np.load, on one Stage 2 tree of real sizes (default 2,000 samples:
dinov3 (1024,) f32 4 KB, vae (16,128,128) f16 524 KB, t5 (77,1024) f16 158 KB, mask 77 B, JSON ~300 B).

    python bench/bench_shards.py [--n 2000] [--rounds 5] [--batch 16] [--scan-n 0] [--busy 0] [--dir /tmp/imgprep_bench]

Writers: `write_shards` end to end (scan, ready check, tar, sha256 manifest, one fsync per shard, rename) against
`tar -cf` + fsync and `TarWriter` + fsync of the same samples; sources in the page cache, the previous output deleted
and synced first. Loaders: batches of `--batch` stacked numpy arrays from the same shards, read from the page cache.
Every contender runs once per round, interleaved (so a busy machine slows them alike); median and best of the rounds.
Ratios are speed ratios (above 1 means imgprep is faster), of the medians and of the bests; the goals (imgprep_shard
>= 1.0x GNU tar and >= 1.5x TarWriter, bucket_dataset >= 2.5x webdataset) are judged by the medians of at least 5
rounds, at load <= 1 and again with one other process busy: `--busy 1` starts that process (a Python busy loop) for the
timed part itself. The load average is printed at the start, after each part, and at the end. Only public functions
that main has are used, so the same script measures a baseline (`PYTHONPATH=/path/to/main python bench/bench_shards.py`)."""
import argparse, io, json, logging, os, shutil, statistics, subprocess, sys, tarfile, tempfile, time
from pathlib import Path

import numpy as np
import webdataset as wds

from imgprep.core import iter_jsonl, safe_keys
from imgprep.kinds import DEFAULT_KINDS, Stage2Layout, kind_of
from imgprep.shards import mask_npy, sample_json, scan_stage2, write_shards
from imgprep.loader import bucket_dataset
from imgprep.testing import make_stage2

NPY_MEMBERS = {k: f'{kind_of(k).member}.npy' for k in DEFAULT_KINDS} # kind -> tar member of its array
MASKS = {kind_of(k).mask: f'{kind_of(k).mask_member}.npy' for k in DEFAULT_KINDS if kind_of(k).mask} # record field -> tar member

def fsync_path(p):
    fd = os.open(p, os.O_RDONLY); os.fsync(fd); os.close(fd)

def fresh(p:Path):
    if p.is_dir(): shutil.rmtree(p)
    elif p.exists(): p.unlink()
    os.sync()

def warm(paths):
    for p in paths:
        with open(p, 'rb') as f:
            while f.read(1<<20): pass

def cpu_timed(fn)->tuple:
    "(wall seconds, CPU seconds of this process and its children)."
    t,c = time.perf_counter(),os.times()
    fn()
    d = os.times()
    return time.perf_counter()-t, sum(getattr(d, k) - getattr(c, k) for k in ('user', 'system', 'children_user', 'children_system'))

# ---- writers: every ready sample of the tree, fsynced ------------------------------------------------------------

def imgprep_shard(out:Path, lay, shard_size:int):
    write_shards(out, derived_dir=lay.base, shard_size=shard_size, progress_every=0)

def gnu_tar(out:Path, listfile:Path, base:Path):
    subprocess.run(['tar', '-C', str(base), '-cf', str(out), '-T', str(listfile)], check=True)
    fsync_path(out)

def wds_tarwriter(out:Path, samples, keys, lay):
    with wds.TarWriter(str(out), encoder=False, mtime=0) as tw:
        for s in samples:
            sample = {'__key__': keys[s.image_id], 'json': sample_json(s.record), **{ext: mask_npy(s.record[f]) for f,ext in MASKS.items()}}
            for k,ext in NPY_MEMBERS.items():
                with open(lay.npy_path(k, s.image_id), 'rb') as f: sample[ext] = f.read()
            tw.write(sample)
    fsync_path(out)

# ---- loaders: batches of stacked numpy arrays from the same shards ------------------------------------------------

def ours(urls_dir, batch:int)->int:
    return sum(len(b['__key__']) for b in bucket_dataset(urls_dir, batch_size=batch))

def wds_decode(urls:list, batch:int)->int:
    ds = wds.WebDataset(urls, shardshuffle=False, empty_check=False, nodesplitter=None, workersplitter=None).decode().batched(batch, partial=True)
    return sum(len(b['__key__']) for b in ds)

def tarfile_npload(urls:list, batch:int)->int:
    "Samples of json and np.load-ed arrays, stacked into batches of `batch` (`batch` 0: single samples, nothing stacked)."
    n,pending,cur = 0,[],None
    def flush():
        nonlocal n, pending
        if pending:
            if batch: {k: np.stack([s[k] for s in pending]) for k in pending[0] if k.endswith('.npy')}
            n += len(pending); pending = []
    for u in urls:
        with tarfile.open(u) as tf:
            for m in tf:
                if not m.isfile(): continue
                key,ext = m.name.split('.', 1)
                if cur is None or cur['__key__'] != key:
                    if cur is not None:
                        pending.append(cur)
                        if len(pending) >= batch: flush()
                    cur = {'__key__': key}
                data = tf.extractfile(m).read()
                cur[ext] = json.loads(data) if ext == 'json' else np.load(io.BytesIO(data), allow_pickle=False)
    if cur is not None: pending.append(cur)
    flush()
    return n

# ---- tree --------------------------------------------------------------------------------------------------------

def bench_tree(d:Path, n:int):
    lay = Stage2Layout(d)
    if lay.jsonl.exists() and sum(1 for _ in open(lay.jsonl)) == n: return lay
    if d.exists(): shutil.rmtree(d)
    make_stage2(d, n=n, scale=1.0, buckets=['1024x1024'])        # 1024x1024 images: vae (16, 128, 128)
    return lay

def fmt(xs): return f'median {statistics.median(xs):6.3f}s  best {min(xs):6.3f}s'

def ratios(walls:dict, a:str, b:str, goal:float|None=None)->str:
    "How many times faster `a` is than `b`: median over median, best over best; whether the medians meet `goal`."
    m = statistics.median(walls[b])/statistics.median(walls[a])
    g = '' if goal is None else f'   goal >= {goal}x by the medians: {"met" if m >= goal else "MISSED"}'
    return f'median {m:.2f}x, best {min(walls[b])/min(walls[a]):.2f}x{g}'

def rounds(contenders:dict, n:int, before=lambda name: None)->tuple:
    walls,cpus = {k: [] for k in contenders},{k: [] for k in contenders}
    for _ in range(n):
        for name,fn in contenders.items():
            before(name)
            w,c = cpu_timed(fn)
            walls[name].append(w); cpus[name].append(c)
    return walls,cpus

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--n', type=int, default=2000)
    p.add_argument('--rounds', type=int, default=5)
    p.add_argument('--batch', type=int, default=16)
    p.add_argument('--shard-size', type=int, default=1000)
    p.add_argument('--scan-n', type=int, default=0, help='also time the scan of this many records (0: not)')
    p.add_argument('--busy', type=int, default=0, help='processes kept busy (a Python busy loop) while contenders are timed')
    p.add_argument('--dir', default=os.path.join(tempfile.gettempdir(), 'imgprep_bench'))
    a = p.parse_args()
    busy = [subprocess.Popen([sys.executable, '-c', 'while True: pass']) for _ in range(a.busy)]
    try: run(a)
    finally:
        for b in busy: b.kill(); b.wait()

def run(a):
    logging.disable(logging.WARNING)  # the synthetic tree has no encoders.json: the loader would warn each time
    root = Path(a.dir); root.mkdir(parents=True, exist_ok=True)
    print(f'machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; {a.busy} busy processes beside')
    lay = bench_tree(root/'stage2', a.n)
    samples = scan_stage2(lay.jsonl, lay, progress_every=0).samples
    keys = {v:k for k,v in safe_keys(s.image_id for s in samples).items()}
    srcs = [lay.npy_path(k, s.image_id) for s in samples for k in NPY_MEMBERS]
    listfile = root/'files.txt'
    listfile.write_text(''.join(f'{p.relative_to(lay.base)}\n' for p in srcs))
    src_mb = sum(p.stat().st_size for p in srcs)/1e6
    print(f'stage 2 tree: {len(samples)} samples, {src_mb:.0f} MB of .npy ({src_mb*1e6/len(samples)/1e3:.0f} KB per sample)')

    outs = {'imgprep_shard (sha256 manifest)': root/'out_imgprep', 'GNU tar -cf': root/'out_gnu.tar', 'webdataset.TarWriter': root/'out_tw.tar'}
    writers = {'imgprep_shard (sha256 manifest)': lambda: imgprep_shard(outs['imgprep_shard (sha256 manifest)'], lay, a.shard_size),
               'GNU tar -cf': lambda: gnu_tar(outs['GNU tar -cf'], listfile, lay.base),
               'webdataset.TarWriter': lambda: wds_tarwriter(outs['webdataset.TarWriter'], samples, keys, lay)}
    def before_write(name): fresh(outs[name]); warm(srcs)
    walls,cpus = rounds(writers, a.rounds, before_write)
    ours_w = 'imgprep_shard (sha256 manifest)'
    print(f'\nshard writing, {len(samples)} samples, every writer fsyncs, {a.rounds} interleaved rounds (CPU: median, all threads and children):')
    for k in writers: print(f'  {k:34s} {fmt(walls[k])}  {len(samples)/statistics.median(walls[k]):6.0f} samples/s (median)  CPU {statistics.median(cpus[k]):.2f}s')
    print(f"  imgprep_shard / GNU tar:   {ratios(walls, ours_w, 'GNU tar -cf', 1.0)}")
    print(f"  imgprep_shard / TarWriter: {ratios(walls, ours_w, 'webdataset.TarWriter', 1.5)}")
    print(f'  load average now {os.getloadavg()[0]:.2f}')

    d = outs[ours_w]; fresh(d); imgprep_shard(d, lay, a.shard_size)
    urls = [str(p) for p in sorted(d.glob('bucket_*/shard-*.tar'))]
    warm(urls)
    loaders = {f'bucket_dataset batch {a.batch}': lambda: ours(d, a.batch),
               'webdataset .decode().batched': lambda: wds_decode(urls, a.batch),
               'tarfile + np.load + np.stack': lambda: tarfile_npload(urls, a.batch),
               'tarfile + np.load, unbatched': lambda: tarfile_npload(urls, 0)}
    for fn in loaders.values(): assert fn() == len(samples)
    walls,cpus = rounds(loaders, a.rounds)
    us = f'bucket_dataset batch {a.batch}'
    print(f'\nloading, {len(samples)} samples in batches of {a.batch} (stacked numpy arrays), warm page cache, {a.rounds} interleaved rounds:')
    for k in loaders: print(f'  {k:34s} {fmt(walls[k])}  {len(samples)/statistics.median(walls[k]):6.0f} samples/s (median)  CPU {statistics.median(cpus[k]):.2f}s')
    print(f"  bucket_dataset / webdataset .decode(): {ratios(walls, us, 'webdataset .decode().batched', 2.5)}")
    print(f"  bucket_dataset / tarfile + np.load:    {ratios(walls, us, 'tarfile + np.load + np.stack')}"
          f"   (against single unstacked samples: {ratios(walls, us, 'tarfile + np.load, unbatched')})")
    print(f'  load average now {os.getloadavg()[0]:.2f}')

    if a.scan_n:
        from imgprep.core import dumps_record
        big = Stage2Layout(root/'scan'); fresh(big.base); big.makedirs()
        model = next(iter_jsonl(lay.jsonl))[1]
        lines = []
        for i in range(a.scan_n):
            iid = f'img{i:06d}'
            lines.append(dumps_record({**model, 'image_id': iid, 'image_path': f'approved/{iid}.jpg'}))
            for k in NPY_MEMBERS: os.close(os.open(big.npy_path(k, iid), os.O_WRONLY|os.O_CREAT, 0o644))
        big.jsonl.write_bytes(b''.join(lines))
        st = [cpu_timed(lambda: scan_stage2(big.jsonl, big, progress_every=0))[0] for _ in range(a.rounds)]
        print(f'\nscan of {a.scan_n} records (directory listings + JSONL + ready check): {fmt(st)}')
    print(f'\nload average at end {os.getloadavg()[0]:.2f}')

if __name__ == '__main__': main()

"""Stage 3 benchmark: shard writing against GNU tar and webdataset.TarWriter, the 60,000-record scan, and the loader
against loose .npy files. All figures come from one run on one Stage 2 tree (default 2,000 samples of realistic
sizes: dinov3 (1024,) f32 4 KB, vae (16,64,64) f16 131 KB, t5 (77,1024) f16 158 KB, mask 77 B, JSON ~300 B).

    python bench/bench_shards.py [--n 2000] [--scan-n 60000] [--rounds 5] [--dir /tmp/imgprep_bench]

Writers are timed in interleaved rounds (so a busy machine slows them alike) with the sources in the page cache
and the previous output deleted and synced first; best and median are reported. Where the page cache can be
dropped (root, /proc/sys/vm/drop_caches writable) cold-cache figures are reported too."""
import argparse, io, json, os, shutil, statistics, subprocess, tempfile, time
from pathlib import Path

import numpy as np
import orjson
import webdataset as wds

from imgprep.core import dumps_record, iter_jsonl, load_npy, safe_keys
from imgprep.kinds import DEFAULT_KINDS, Stage2Layout, kind_of
from imgprep.shards import (ShardFile, TarStream, add_sample, mask_npy, sample_json, scan_stage2, write_shards)

NPY_MEMBERS = {k: f'{kind_of(k).member}.npy' for k in DEFAULT_KINDS} # kind -> tar member of its array (the default tree's kinds)
MASKS = {kind_of(k).mask: f'{kind_of(k).mask_member}.npy' for k in DEFAULT_KINDS if kind_of(k).mask} # record field -> tar member
from imgprep.loader import bucket_dataset
import imgprep.shards as S
from imgprep.testing import make_stage2


def drop_caches()->bool:
    "Drop the page cache (root only); False when not possible."
    try:
        os.sync()
        with open('/proc/sys/vm/drop_caches', 'w') as f: f.write('3\n')
        return True
    except OSError: return False

def warm(paths):
    for p in paths:
        with open(p, 'rb') as f:
            while f.read(1<<20): pass

def timed(fn)->float:
    t = time.perf_counter(); fn(); return time.perf_counter()-t

def cpu_timed(fn)->tuple:
    "(wall seconds, CPU seconds of this process and its children)."
    t,c = time.perf_counter(),os.times()
    fn()
    d = os.times()
    return time.perf_counter()-t, sum(getattr(d, k) - getattr(c, k) for k in ('user', 'system', 'children_user', 'children_system'))

def fresh(p:Path):
    if p.is_dir(): shutil.rmtree(p)
    elif p.exists(): p.unlink()
    os.sync()

# ---- the writers, each packing every sample into one tar -------------------------------------------------------

def imgprep_tar(out, samples, keys, lay):
    "Our TarStream, no fsync (like GNU tar and TarWriter)."
    fd = os.open(out, os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o644)
    tar = TarStream(fd)                                    # add_sample only needs `.add`
    for s in samples: assert add_sample(tar, s, keys[s.image_id], lay) is None
    tar.close(); os.close(fd)

class NoHash:
    "Stands in for hashlib.sha256 to show what the manifest's hash costs."
    def update(self, b): pass
    def hexdigest(self): return ''

def imgprep_tar_nohash(out, samples, keys, lay):
    fd = os.open(out, os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o644)
    tar = TarStream(fd); tar.sha = NoHash()
    for s in samples: assert add_sample(tar, s, keys[s.image_id], lay) is None
    tar.close(); os.close(fd)

class Timed:
    "Wraps a callable and adds up the CPU time of the thread that calls it."
    def __init__(self, fn): self.fn,self.cpu = fn,0.0
    def __call__(self, *a):
        t = time.thread_time(); r = self.fn(*a); self.cpu += time.thread_time()-t; return r

def thread_cpu(samples, keys, lay, out)->dict:
    "CPU seconds of TarStream's two threads for one tar (main: read, check, write; hasher: sha256): what bounds its wall time when two cores are free."
    writer = Timed(S._write_all); S._write_all, orig = writer, S._write_all
    try:
        fd = os.open(out, os.O_WRONLY|os.O_CREAT|os.O_TRUNC, 0o644)
        t = time.thread_time()
        tar = TarStream(fd); hasher = Timed(tar.sha.update); tar.sha = type('H', (), {'update': staticmethod(hasher), 'hexdigest': tar.sha.hexdigest})()
        for s in samples: assert add_sample(tar, s, keys[s.image_id], lay) is None
        tar.close(); os.close(fd)
        return dict(main=time.thread_time()-t, hasher=hasher.cpu, writer=writer.cpu)
    finally: S._write_all = orig

def imgprep_tar_fsync(out, samples, keys, lay):
    "Our ShardFile: temporary, fsync, rename (what imgprep_shard does for every shard)."
    shard = ShardFile(out)
    for s in samples: assert add_sample(shard, s, keys[s.image_id], lay) is None
    shard.close(); shard.commit()

def gnu_tar(out, listfile, base):
    subprocess.run(['tar', '-C', str(base), '-cf', str(out), '-T', str(listfile)], check=True)

def gnu_tar_fsync(out, listfile, base):
    gnu_tar(out, listfile, base)
    fd = os.open(out, os.O_RDONLY); os.fsync(fd); os.close(fd)

def wds_tarwriter(out, samples, keys, lay):
    with wds.TarWriter(str(out), encoder=False, mtime=0) as tw:
        for s in samples:
            sample = {'__key__': keys[s.image_id], 'json': sample_json(s.record), **{ext: mask_npy(s.record[f]) for f,ext in MASKS.items()}}
            for k,ext in NPY_MEMBERS.items():
                with open(lay.npy_path(k, s.image_id), 'rb') as f: sample[ext] = f.read()
            tw.write(sample)

# ---- trees ------------------------------------------------------------------------------------------------------

def bench_tree(d:Path, n:int):
    lay = Stage2Layout(d)
    if lay.jsonl.exists() and sum(1 for _ in open(lay.jsonl)) == n: return lay
    if d.exists(): shutil.rmtree(d)
    make_stage2(d, n=n, scale=0.5, buckets=['1024x1024'])        # 512x512 images: vae (16, 64, 64)
    return lay

def scan_tree(d:Path, n:int, model:dict):
    "n records with realistic JSONL lines and empty .npy files (the scan only lists them)."
    lay = Stage2Layout(d)
    if lay.jsonl.exists() and sum(1 for _ in open(lay.jsonl)) == n: return lay
    if d.exists(): shutil.rmtree(d)
    lay.makedirs()
    lines = []
    for i in range(n):
        iid = f'img{i:06d}'
        lines.append(dumps_record({**model, 'image_id': iid, 'image_path': f'approved/{iid}.jpg'}))
        for k in NPY_MEMBERS: os.close(os.open(lay.npy_path(k, iid), os.O_WRONLY|os.O_CREAT, 0o644))
    lay.jsonl.write_bytes(b''.join(lines))
    return lay

# ---- loaders ----------------------------------------------------------------------------------------------------

def read_loose(lay):
    n = 0
    for _,rec in iter_jsonl(lay.jsonl):
        arrs = [load_npy(lay.npy_path(k, rec['image_id'])) for k in NPY_MEMBERS]
        masks = [np.array(rec[f], np.uint8) for f in MASKS]
        n += 1
    return n

def read_shards(d, batch_size=None):
    n = 0
    for x in bucket_dataset(d, batch_size=batch_size): n += len(x['__key__']) if batch_size else 1
    return n

def fmt(xs): return f'best {min(xs):.3f}s median {statistics.median(xs):.3f}s'

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--n', type=int, default=2000)
    p.add_argument('--scan-n', type=int, default=60000)
    p.add_argument('--rounds', type=int, default=5)
    p.add_argument('--dir', default=os.path.join(tempfile.gettempdir(), 'imgprep_bench'))
    a = p.parse_args()
    root = Path(a.dir); root.mkdir(parents=True, exist_ok=True)
    print(f'machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start')
    lay = bench_tree(root/'stage2', a.n)
    scan = scan_stage2(lay.jsonl, lay, progress_every=0)
    samples = scan.samples
    keys = {v:k for k,v in safe_keys(s.image_id for s in samples).items()}
    srcs = [lay.npy_path(k, s.image_id) for s in samples for k in NPY_MEMBERS]
    listfile = root/'files.txt'
    listfile.write_text(''.join(f'{p.relative_to(lay.base)}\n' for p in srcs))
    src_mb = sum(p.stat().st_size for p in srcs)/1e6
    print(f'stage 2 tree: {len(samples)} samples, {src_mb:.0f} MB of .npy ({src_mb*1e6/len(samples)/1e3:.0f} KB per sample)')

    writers = {'imgprep TarStream (sha256 for the manifest)': lambda o: imgprep_tar(o, samples, keys, lay),
               'GNU tar -cf': lambda o: gnu_tar(o, listfile, lay.base),
               'webdataset.TarWriter': lambda o: wds_tarwriter(o, samples, keys, lay),
               'imgprep TarStream without sha256': lambda o: imgprep_tar_nohash(o, samples, keys, lay),
               'imgprep ShardFile (+fsync, rename)': lambda o: imgprep_tar_fsync(o, samples, keys, lay),
               'GNU tar -cf + fsync': lambda o: gnu_tar_fsync(o, listfile, lay.base)}
    ours,gnu,tw = 'imgprep TarStream (sha256 for the manifest)','GNU tar -cf','webdataset.TarWriter'
    walls,cpus,sizes = {k: [] for k in writers},{k: [] for k in writers},{}
    can_drop = drop_caches()
    for r in range(a.rounds):
        for i,(name,fn) in enumerate(writers.items()):
            out = root/f'out_{i}.tar'
            fresh(out); warm(srcs)
            w,c = cpu_timed(lambda: fn(out))
            walls[name].append(w); cpus[name].append(c)
            sizes[name] = out.stat().st_size
            out.unlink()
    print(f'\nshard writing, {len(samples)} samples, warm page cache, {a.rounds} interleaved rounds; MB/s of output and samples/s from the best round,')
    print('CPU seconds (process + children, all threads) from the median round:')
    for k in writers:
        print(f'  {k:44s} {fmt(walls[k])}  {sizes[k]/min(walls[k])/1e6:5.0f} MB/s  {len(samples)/min(walls[k]):5.0f} samples/s  '
              f'CPU {statistics.median(cpus[k]):.2f}s  ({sizes[k]/1e6:.0f} MB)')
    def ratio(x, y, f=min): return f(walls[y])/f(walls[x])
    print(f"  wall-time ratio imgprep/GNU tar: best {ratio(ours, gnu):.2f}x, median {ratio(ours, gnu, statistics.median):.2f}x"
          f"   imgprep/TarWriter: best {ratio(ours, tw):.2f}x, median {ratio(ours, tw, statistics.median):.2f}x")
    print(f"  CPU-time ratio (less CPU = higher) imgprep/GNU tar {statistics.median(cpus[gnu])/statistics.median(cpus[ours]):.2f}x, "
          f"imgprep/TarWriter {statistics.median(cpus[tw])/statistics.median(cpus[ours]):.2f}x, "
          f"imgprep without sha256/GNU tar {statistics.median(cpus[gnu])/statistics.median(cpus['imgprep TarStream without sha256']):.2f}x")
    print(f"  with fsync, imgprep ShardFile/GNU tar+fsync: best {ratio('imgprep ShardFile (+fsync, rename)', 'GNU tar -cf + fsync'):.2f}x, "
          f"median {ratio('imgprep ShardFile (+fsync, rename)', 'GNU tar -cf + fsync', statistics.median):.2f}x")
    tc = []
    for _ in range(3):
        out = root/'out_threads.tar'; fresh(out); warm(srcs); tc.append(thread_cpu(samples, keys, lay, out)); out.unlink()
    tc = {k: statistics.median(d[k] for d in tc) for k in tc[0]}
    crit = max(tc['main'], tc['hasher'])
    print(f"  TarStream CPU per thread (median of 3): main {tc['main']:.2f}s (of which write {tc['writer']:.2f}s), sha256 {tc['hasher']:.2f}s; "
          f"with two free cores its wall time would be about {crit:.2f}s: {statistics.median(cpus[gnu])/crit:.2f}x GNU tar's CPU time, "
          f"{statistics.median(cpus[tw])/crit:.2f}x TarWriter's (both single-threaded)")
    print(f'  load average now {os.getloadavg()[0]:.2f}')

    if can_drop:
        print('\nshard writing, cold page cache (sources dropped before each run), one round:')
        cold = {}
        for name in (ours, gnu, tw):
            out = root/'out_cold.tar'; fresh(out); drop_caches()
            cold[name] = timed(lambda: writers[name](out)); out.unlink()
            print(f'  {name:36s} {cold[name]:.3f}s  {len(samples)/cold[name]:6.0f} samples/s')
        print(f"  ratio imgprep/GNU tar {cold[gnu]/cold[ours]:.2f}x, imgprep/TarWriter {cold[tw]/cold[ours]:.2f}x")
    else: print('\n(page cache cannot be dropped here: cold-cache figures skipped)')

    out = root/'shards'
    fresh(out)
    fresh(out)
    t = timed(lambda: write_shards(out, derived_dir=lay.base, progress_every=0))
    total = sum(e['bytes'] for e in json.loads((out/'manifest.json').read_text())['shards'])
    print(f'\nimgprep_shard end to end (scan, write, fsync, rename, manifest; shard_size 1000): {t:.3f}s, {total/t/1e6:.0f} MB/s, {len(samples)/t:.0f} samples/s')

    model = next(iter_jsonl(lay.jsonl))[1]
    big = scan_tree(root/'scan60k', a.scan_n, model)
    lines = big.jsonl.read_bytes().splitlines()
    st = [cpu_timed(lambda: scan_stage2(big.jsonl, big, progress_every=0)) for _ in range(3)]
    dry = [cpu_timed(lambda: write_shards(root/'dry', derived_dir=big.base, dry_run=True, progress_every=0)) for _ in range(3)]
    js = [cpu_timed(lambda: [json.loads(l) for l in lines]) for _ in range(3)]
    oj = [cpu_timed(lambda: [orjson.loads(l) for l in lines]) for _ in range(3)]
    show = lambda xs: f"wall {fmt([w for w,_ in xs])}, CPU median {statistics.median(c for _,c in xs):.3f}s"
    print(f'\nscan of {a.scan_n} records (3 directory listings + JSONL + ready check): {show(st)}')
    print(f'imgprep_shard --dry-run on them (scan, keys, plan): {show(dry)}')
    print(f'for scale, json.loads of the {len(lines)} lines alone: {show(js)}')
    print(f'and orjson.loads (what the scan parses with) alone: {show(oj)}; load average {os.getloadavg()[0]:.2f}')

    print('\nloader, samples/s (decoded numpy arrays):')
    loaders = {'loose .npy files (JSONL + 3 np.load)': lambda: read_loose(lay), 'shards, bucket_dataset': lambda: read_shards(out),
               'shards, bucket_dataset batch 16': lambda: read_shards(out, 16)}
    for cache in (['warm', 'cold'] if can_drop else ['warm']):
        res = {}
        for name,fn in loaders.items():
            if cache == 'cold': drop_caches()
            else: fn()
            dt,c = cpu_timed(lambda: fn()); res[name] = len(samples)/dt
            print(f'  {cache} {name:40s} {res[name]:7.0f} samples/s  (CPU {c:.2f}s)')
        print(f"  {cache} ratio shards/loose: {res['shards, bucket_dataset']/res['loose .npy files (JSONL + 3 np.load)']:.2f}x")
    print(f'\nload average at end {os.getloadavg()[0]:.2f}')

if __name__ == '__main__': main()

"""Benchmark ingest's check for files cut short: images/s on phone-sized JPEGs, against a bare header loop in the same run.

    python bench/bench_ingest_truncation.py [--images 10000] [--size 4032x3024] [--repeats 3] [--workers 2] [--dir /tmp/...]

The folder holds `--images` JPEGs made from the photographs scikit-image and matplotlib ship, scaled up to a
phone's size (4032x3024 by default, half of them stored sideways with an EXIF orientation) and saved at
quality 90; each is made unique by a JPEG comment (other bytes, the same picture), so none is a duplicate,
with a `.txt` caption beside it. The folder is kept in `--dir` (default under /tmp) and reused by the next run
with the same sizes, since writing it takes longer than the benchmark. Three loops run interleaved,
`--repeats` times each, so that load from other processes falls on all of them:

- the bare loop: PIL's `Image.open(p).size` on each file (a header read, what a hand-written converter does);
- ingest as it runs by default, with the check (a JPEG must end with its end-of-image marker);
- ingest with the check turned off, to show what the check itself costs;
- reading and hashing each file alone (SHA-256, in this process): the floor of ingest's time per file;
- ingest run again over the unchanged folder: each inspection is remembered (`<output>.seen.ingest.json`, by each
  file's size, times and inode), so the rerun stats each file and reads none.

Ingest also reads and hashes every byte of every file (SHA-256 finds duplicates and changed images),
which the bare loop does not: on files of several megabytes that is most of ingest's time, and the
check reads a slice of bytes already in memory. Printed: the best and median rate of each loop, the
ratios (goal: ingest with the check >= 0.5x the bare loop), the cost of the check, the rerun's rate and its
ratio to the bare loop, and the load average. The first run stays bound by hashing (every byte of every file
must be read once in the file's life); what the remembered inspections change is every run after it.
"""
import argparse, hashlib, io, os, statistics, sys, tempfile, time
from pathlib import Path


from PIL import Image

import imgprep.inspection
from imgprep.ingest import ingest
from bench_ingest import PHOTOS, bare, unique  # the photos, the unique-bytes trick and the bare header loop of the ingest bench

def phone_jpeg(p:Path, size:tuple, orientation:int=1)->bytes:
    "The photograph at `p` scaled up to `size` (stored sideways when `orientation` is 6) as a quality-90 JPEG."
    im = Image.open(p).convert('RGB').resize(size if orientation == 1 else size[::-1], Image.Resampling.BICUBIC)
    kw = {}
    if orientation != 1:
        exif = Image.Exif(); exif[0x0112] = orientation; kw['exif'] = exif
    b = io.BytesIO(); im.save(b, 'JPEG', quality=90, **kw)
    return b.getvalue()

def make_folder(d:Path, n:int, size:tuple)->list:
    "`n` unique phone-sized JPEGs with captions in 100 subfolders, reusing what an earlier run wrote; their paths."
    paths = [d/f'dir{i % 100:03d}'/f'IMG_{i:05d}.jpg' for i in range(n)]
    if all(p.is_file() and p.with_suffix('.txt').is_file() for p in paths): return paths
    bases = [phone_jpeg(p, size, o) for p in PHOTOS for o in (1, 6)]
    for i,p in enumerate(paths):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(unique(bases[i % len(bases)], i))
        p.with_suffix('.txt').write_text(f'photograph number {i} of the benchmark folder')
    return paths

def read_and_hash(paths:list)->float:
    "Seconds to read every byte of each file and hash it, as ingest does."
    t = time.perf_counter()
    for p in paths: hashlib.sha256(p.read_bytes()).hexdigest()
    return time.perf_counter() - t

def timed_ingest(d:Path, out:Path, workers:int, check:bool=True)->tuple:
    "Seconds and counters of an ingest of `d`, with or without the check for files cut short."
    real = imgprep.inspection.check_whole
    if not check: imgprep.inspection.check_whole = lambda path, data=None: None
    try:
        t = time.perf_counter()
        c = ingest(d, out, progress_every=0, workers=workers)
        return time.perf_counter() - t, c
    finally: imgprep.inspection.check_whole = real

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--images', type=int, default=10_000)
    p.add_argument('--size', default='4032x3024', help='WxH of each JPEG')
    p.add_argument('--repeats', type=int, default=3, help='rounds; each round times every loop once')
    p.add_argument('--workers', type=int, default=2, help="ingest's worker processes")
    p.add_argument('--dir', default=None, help='where the folder is made and kept (default: under the temporary directory)')
    a = p.parse_args()
    size = tuple(map(int, a.size.split('x')))
    d = Path(a.dir or Path(tempfile.gettempdir())/f'imgprep_bench_truncation_{a.size}')
    t = time.perf_counter()
    paths = make_folder(d/'photos', a.images, size)
    mb = sum(p.stat().st_size for p in paths)/1e6
    print(f'folder: {a.images} JPEGs of {a.size} ({mb:.0f} MB, {mb/a.images:.1f} MB each) with captions in {d}, ready in {time.perf_counter()-t:.0f} s')
    out = Path(tempfile.mkdtemp(prefix='bench_truncation_out.'))
    load0 = os.getloadavg()
    bare_s,with_s,without_s,sha_s,rerun_s = [],[],[],[],[]
    for r in range(a.repeats):
        bare_s.append(bare(paths))
        s,c = timed_ingest(d/'photos', out/f'with{r}.jsonl', a.workers)
        assert (c['written'], c['corrupt_image']) == (a.images, 0), c
        with_s.append(s)
        s,c = timed_ingest(d/'photos', out/f'with{r}.jsonl', a.workers)
        assert (c['written'], c['output']) == (a.images, 'unchanged'), c
        rerun_s.append(s)
        without_s.append(timed_ingest(d/'photos', out/f'without{r}.jsonl', a.workers, check=False)[0])
        sha_s.append(read_and_hash(paths))
    assert (out/'with0.jsonl').read_bytes() == (out/'without0.jsonl').read_bytes()
    n = a.images
    def rate(ts): return f'best {n/min(ts):6.0f}  median {n/statistics.median(ts):6.0f} images/s'
    print(f'machine: {os.cpu_count()} CPUs; load average (1, 5, 15 min) {" ".join(f"{x:.2f}" for x in load0)} before, '
          f'{" ".join(f"{x:.2f}" for x in os.getloadavg())} after')
    print(f'bare loop (PIL open + size):            {rate(bare_s)}')
    print(f'ingest, check on ({a.workers} workers):          {rate(with_s)}  ({mb/min(with_s):.0f} MB/s read and hashed)')
    print(f'ingest, check off ({a.workers} workers):         {rate(without_s)}')
    print(f'read + SHA-256 alone (one process):    {rate(sha_s)}')
    print(f'ingest rerun, inspections remembered:  {rate(rerun_s)}')
    print(f'ratio ingest with the check / bare loop: {min(bare_s)/min(with_s):.2f}x of the bests, '
          f'{statistics.median(bare_s)/statistics.median(with_s):.2f}x of the medians (goal >= 0.5x)')
    print(f'ratio ingest rerun (remembered) / bare loop: {min(bare_s)/min(rerun_s):.2f}x of the bests, '
          f'{statistics.median(bare_s)/statistics.median(rerun_s):.2f}x of the medians')
    print(f'cost of the check: {100*(min(with_s)/min(without_s) - 1):+.1f}% of the bests, '
          f'{100*(statistics.median(with_s)/statistics.median(without_s) - 1):+.1f}% of the medians')
    for f in out.iterdir(): f.unlink()
    out.rmdir()

if __name__ == '__main__': main()

"""Benchmark imgprep_ingest: images/s over a folder of real photographs, against reading and hashing every byte with all
cores, and against a bare header loop, in the same run.

    python bench/bench_ingest.py [--images 1000] [--repeats 5] [--workers 2] [--megapixels 12]

Every first ingest must read each file whole and hash it with SHA-256, so the baseline it is measured against is just
that, with all cores: a pool of `os.cpu_count()` forked processes, started inside the clock as ingest starts its
workers, each reading files whole and hashing them (`hashlib.file_digest`), files handed out in chunks of 64 (ingest's
own chunk). Goal: ingest at least 0.8x of its speed (by the medians).

The folder holds `--images` JPEGs made from the photographs matplotlib and scikit-image ship, scaled to
`--megapixels` (default 12, a phone's photo, as users ingest them; `--megapixels 0` keeps their own sizes, 300x451 to
512x741 pixels, where the work per file, not the hashing, is what is measured; the total size is printed), each made
unique by a JPEG comment so that none is a duplicate, with a `.txt` caption beside each, half of them EXIF-rotated. The bare loop only opens each file with PIL
and reads its size (`Image.open(p).size`: a header read, what a hand-written converter does, with no hash); ingest walks
the folder, reads every caption, reads each image file once, hashes every byte with SHA-256 and reads the
header with EXIF orientation from the same bytes, checks animation where it can happen, assigns the split
and writes the JSONL, with `--workers` worker processes reading the images. Both read files from the page
cache (the folder was just written). The loops run interleaved, `--repeats` times each, so that load from
other processes falls on both; the best and the median of each are printed, with the ratio of the bests,
the ratio of the medians and the range of the per-round ratios, and the load average before and after.
No T5 is cached here, so caption lengths are estimated and transformers is never imported. More loops
show where ingest's time goes: ingest in one process (`--workers 1`), `imgprep.images.image_size` alone
(the header with EXIF orientation, read with PIL from the path, as Stage 2 reads it), SHA-256 alone, and the walk alone
(`sources.folder_candidates`: every name listed, every caption read, no image opened).
"""
import argparse, hashlib, io, multiprocessing, os, shutil, statistics, struct, sys, tempfile, time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import matplotlib, skimage
from PIL import Image

from imgprep.images import image_size
from imgprep.core import file_sha256
from imgprep.ingest import ingest
from imgprep.sources import folder_candidates

PHOTOS = [Path(matplotlib.get_data_path())/'sample_data'/'grace_hopper.jpg'] + \
         [Path(skimage.__file__).parent/'data'/n for n in ('astronaut.png', 'coffee.png', 'rocket.jpg', 'motorcycle_left.png', 'chelsea.png')]

def jpeg_bytes(p:Path, orientation:int=1, megapixels:float=0)->bytes:
    "The photograph at `p` as a JPEG, scaled to `megapixels` (0: its own size), with an EXIF orientation when it is not 1."
    b = io.BytesIO()
    kw = {}
    if orientation != 1:
        exif = Image.Exif(); exif[0x0112] = orientation; kw['exif'] = exif
    im = Image.open(p).convert('RGB')
    if megapixels:
        k = (megapixels*1e6/(im.width*im.height))**0.5
        im = im.resize((round(im.width*k), round(im.height*k)), Image.LANCZOS)
    im.save(b, 'JPEG', quality=90, **kw)
    return b.getvalue()

def unique(jpeg:bytes, i:int)->bytes:
    "`jpeg` with a comment segment naming `i` right after the start marker: other bytes, the same image."
    com = f'imgprep bench image {i}'.encode()
    return jpeg[:2] + b'\xff\xfe' + struct.pack('>H', len(com)+2) + com + jpeg[2:]

def make_folder(d:Path, n:int, megapixels:float=0)->list:
    "`n` unique JPEGs of `megapixels` (0: the photographs' own sizes) with captions in 100 subfolders; returns their paths."
    bases = [jpeg_bytes(p, o, megapixels) for p in PHOTOS for o in (1, 6)]
    paths = []
    for i in range(n):
        p = d/f'dir{i % 100:03d}'/f'IMG_{i:05d}.jpg'
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(unique(bases[i % len(bases)], i))
        p.with_suffix('.txt').write_text(f'photograph number {i} of the benchmark folder')
        paths.append(p)
    return paths

def bare(paths:list)->float:
    "Seconds to open each file with PIL and read its size."
    t = time.perf_counter()
    for p in paths:
        with Image.open(p) as im: im.size
    return time.perf_counter() - t

def loop(fn, paths:list)->float:
    "Seconds to call `fn` on each path."
    t = time.perf_counter()
    for p in paths: fn(p)
    return time.perf_counter() - t

def _sha_files(paths:list)->list:
    out = []
    for p in paths:
        with open(p, 'rb') as f: out.append(hashlib.file_digest(f, 'sha256').hexdigest())
    return out

def sha_all_cores(paths:list)->float:
    "Seconds to read and hash every byte of `paths` with SHA-256 in `os.cpu_count()` processes (started inside the clock)."
    t = time.perf_counter()
    with ProcessPoolExecutor(os.cpu_count(), mp_context=multiprocessing.get_context('fork')) as ex:
        for _ in ex.map(_sha_files, [paths[i:i+64] for i in range(0, len(paths), 64)]): pass
    return time.perf_counter() - t

def timed_ingest(d:Path, out:Path, workers:int)->tuple:
    t = time.perf_counter()
    c = ingest(d, out, val_fraction=0.05, progress_every=0, workers=workers)
    return time.perf_counter() - t, c

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--images', type=int, default=1_000)
    p.add_argument('--repeats', type=int, default=5, help='rounds; each round times every loop once')
    p.add_argument('--workers', type=int, default=2, help="ingest's worker processes")
    p.add_argument('--megapixels', type=float, default=12,
                   help="scale the photographs to this many megapixels (12: a phone's photo); 0 keeps their own sizes (0.2-0.4 MP)")
    a = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix='bench_ingest.'))
    try:
        t = time.perf_counter()
        paths = make_folder(tmp/'photos', a.images, a.megapixels)
        mb = sum(p.stat().st_size for p in paths)/1e6
        print(f'folder: {a.images} JPEGs ({mb:.0f} MB) with captions, made in {time.perf_counter()-t:.1f} s')
        load0 = os.getloadavg()
        bare_s,ingest_s,one_s,size_s,sha_s,base_s,walk_s = [],[],[],[],[],[],[]
        for r in range(a.repeats):
            base_s.append(sha_all_cores(paths))
            bare_s.append(bare(paths))
            s,c = timed_ingest(tmp/'photos', tmp/f'out{r}.jsonl', a.workers)
            ingest_s.append(s)
            assert c['written'] == a.images, c
            one_s.append(timed_ingest(tmp/'photos', tmp/f'one{r}.jsonl', 1)[0])
            size_s.append(loop(image_size, paths))
            sha_s.append(loop(file_sha256, paths))
            walk_s.append(loop(lambda d: folder_candidates(d, d), [tmp/'photos']))
        assert (tmp/'out0.jsonl').read_bytes() == (tmp/'one0.jsonl').read_bytes()
        n = a.images
        def rate(ts): return f'best {n/min(ts):6.0f}  median {n/statistics.median(ts):6.0f}  worst {n/max(ts):6.0f} images/s'
        print(f'machine: {os.cpu_count()} CPUs; load average (1, 5, 15 min) {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} before, '
              f'{" ".join(f"{x:.2f}" for x in os.getloadavg())} after')
        print(f'read + SHA-256, {os.cpu_count()} processes:            {rate(base_s)}  ({mb/min(base_s):.0f} MB/s)')
        print(f'bare loop (PIL open + size):                {rate(bare_s)}')
        print(f'ingest, {a.workers} worker processes:               {rate(ingest_s)}  ({mb/min(ingest_s):.0f} MB/s hashed)')
        print(f'  for reference, ingest in one process:     {rate(one_s)}')
        print(f'  image_size alone (PIL, from the path):    {rate(size_s)}')
        print(f'  SHA-256 alone:                            {rate(sha_s)}')
        print(f'  the walk alone (captions read, no image): {rate(walk_s)}  (ingest walks before its workers start)')
        per = sorted(b/i for b,i in zip(base_s, ingest_s))
        goal = statistics.median(base_s)/statistics.median(ingest_s)
        print(f'ratio ingest/(read + SHA-256, all cores): {goal:.2f}x of the medians, {min(base_s)/min(ingest_s):.2f}x of the bests, '
              f'{per[0]:.2f}-{per[-1]:.2f}x per round (goal >= 0.8x: {"met" if goal >= 0.8 else "MISSED"})')
        rounds = sorted(b/i for b,i in zip(bare_s, ingest_s))
        print(f'ratio ingest/bare: {min(bare_s)/min(ingest_s):.2f}x of the bests, {statistics.median(bare_s)/statistics.median(ingest_s):.2f}x '
              f'of the medians, {rounds[0]:.2f}-{rounds[-1]:.2f}x per round (no hash in the bare loop); in one process '
              f'{min(bare_s)/min(one_s):.2f}x of the bests')
        print(f'counters: written={c["written"]} val={c["val"]} caption_tokens={c["caption_tokens"]}')
    finally: shutil.rmtree(tmp, ignore_errors=True)

if __name__ == '__main__': main()

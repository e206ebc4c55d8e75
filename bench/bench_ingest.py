"""Benchmark imgprep_ingest: images/s over a folder of real photographs, against a bare loop in the same run.

    python bench/bench_ingest.py [--images 10000] [--repeats 2]

The folder holds `--images` JPEGs made from the photographs matplotlib and scikit-image ship (at their own
sizes, 300x451 to 512x741 pixels; the total size is printed), each made unique by a JPEG comment so that
none is a duplicate, with a `.txt` caption beside each, half of them EXIF-rotated. The bare loop only opens each file with PIL
and reads its size (`Image.open(p).size`: a header read, what a hand-written converter does); ingest walks
the folder, reads every caption, reads each header with EXIF orientation, hashes every byte with SHA-256,
checks animation where it can happen, assigns the split and writes the JSONL. Both read files from the
page cache (the folder was just written, and each timing is the best of `--repeats`). No T5 is cached
here, so caption lengths are estimated and transformers is never imported. Two more loops show where
ingest's time goes: `imgprep.images.image_size` alone (the header with EXIF orientation, as Stage 2 reads
it) and SHA-256 alone.
"""
import argparse, io, os, shutil, struct, sys, tempfile, time
from pathlib import Path

import matplotlib, skimage
from PIL import Image

from imgprep.images import image_size
from imgprep.ingest import file_sha256, ingest

PHOTOS = [Path(matplotlib.get_data_path())/'sample_data'/'grace_hopper.jpg'] + \
         [Path(skimage.__file__).parent/'data'/n for n in ('astronaut.png', 'coffee.png', 'rocket.jpg', 'motorcycle_left.png', 'chelsea.png')]

def jpeg_bytes(p:Path, orientation:int=1)->bytes:
    "The photograph at `p` as a JPEG, with an EXIF orientation when it is not 1."
    b = io.BytesIO()
    kw = {}
    if orientation != 1:
        exif = Image.Exif(); exif[0x0112] = orientation; kw['exif'] = exif
    Image.open(p).convert('RGB').save(b, 'JPEG', quality=90, **kw)
    return b.getvalue()

def unique(jpeg:bytes, i:int)->bytes:
    "`jpeg` with a comment segment naming `i` right after the start marker: other bytes, the same image."
    com = f'imgprep bench image {i}'.encode()
    return jpeg[:2] + b'\xff\xfe' + struct.pack('>H', len(com)+2) + com + jpeg[2:]

def make_folder(d:Path, n:int)->list:
    "`n` unique JPEGs with captions in 100 subfolders; returns their paths."
    bases = [jpeg_bytes(p, o) for p in PHOTOS for o in (1, 6)]
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

def timed_ingest(d:Path, out:Path, workers:int)->tuple:
    t = time.perf_counter()
    c = ingest(d, out, val_fraction=0.05, progress_every=0, workers=workers)
    return time.perf_counter() - t, c

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--images', type=int, default=10_000)
    p.add_argument('--repeats', type=int, default=2, help='timings per side; the best is reported')
    p.add_argument('--workers', type=int, default=2, help="ingest's reader threads")
    a = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix='bench_ingest.'))
    try:
        t = time.perf_counter()
        paths = make_folder(tmp/'photos', a.images)
        mb = sum(p.stat().st_size for p in paths)/1e6
        print(f'folder: {a.images} JPEGs ({mb:.0f} MB) with captions, made in {time.perf_counter()-t:.1f} s')
        bare_s,ingest_s,size_s,sha_s = [],[],[],[]
        for r in range(a.repeats):
            bare_s.append(bare(paths))
            size_s.append(loop(image_size, paths))
            sha_s.append(loop(file_sha256, paths))
            s,c = timed_ingest(tmp/'photos', tmp/f'out{r}.jsonl', a.workers)
            ingest_s.append(s)
        assert c['written'] == a.images, c
        b,i = min(bare_s), min(ingest_s)
        print(f'bare loop (PIL open + size): {a.images/b:8.0f} images/s  ({b:.2f} s)')
        print(f'ingest, {a.workers} threads (+EXIF, SHA-256, captions, split, JSONL): {a.images/i:8.0f} images/s  ({i:.2f} s)  '
              f'{mb/i:.0f} MB/s hashed')
        print(f'  for reference, image_size alone: {a.images/min(size_s):8.0f} images/s; SHA-256 alone: {a.images/min(sha_s):8.0f} images/s')
        print(f'ratio ingest/bare: {b/i:.2f}x  (goal >= 0.5x)')
        print(f'counters: written={c["written"]} val={c["val"]} caption_tokens={c["caption_tokens"]}')
    finally: shutil.rmtree(tmp, ignore_errors=True)

if __name__ == '__main__': main()

#!/usr/bin/env python
"""Host memory of VAE encoding at real photo sizes: peak RSS of the main process and of the DataLoader workers while
12 MP JPEGs are decoded, batched and encoded, next to what the float32, sample-counted window of the previous design
would have held. The images are photo-like (matplotlib's Grace Hopper photograph upscaled, with gradients, shapes and
mild noise, different for each image), not noise, so JPEG decoding costs what it costs on photos.

    python bench/bench_memory.py --images 200               # full-size random FLUX VAE (needs a fast machine)
    python bench/bench_memory.py --images 8 --model tiny    # the same pipeline with the tiny VAE (minutes on 2 cores)

The random VAE is saved and loaded through `FluxVaeEncoder.load`, as Stage 2 loads a real one. The full-size VAE on
the CPU takes about a minute per 1024-pixel tile on 2 cores (some 20 minutes per 12 MP photo), so on a small machine
run it on a few images; `--tile-probe` instead encodes just one 1024x1024 tile (the largest piece a tiled 12 MP
encode holds at once on the CPU) and reports the process's peak, in a minute.
"""
import argparse, os, resource, sys, tempfile, threading, time
from pathlib import Path

import numpy as np
import psutil
import torch
from PIL import Image, ImageDraw

from imgprep.batches import MAX_BATCH_PIXELS, encode_image_files
from imgprep.encoders import FluxVaeEncoder
from imgprep.tiny_models import full_size_configs, random_model, tiny_configs

def photo_like(path:Path, width:int, height:int, seed:int)->Path:
    "A JPEG of `width`x`height` made from a real photograph upscaled, plus a gradient, shapes and mild noise."
    import matplotlib
    rng = np.random.default_rng(seed)
    src = Image.open(Path(matplotlib.get_data_path())/'sample_data'/'grace_hopper.jpg').convert('RGB')
    if seed % 2: src = src.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    img = np.asarray(src.resize((width, height), Image.Resampling.BICUBIC), dtype=np.float32)
    ramp = np.linspace(0, 1, width, dtype=np.float32)[None, :, None]*rng.uniform(-40, 40, 3).astype(np.float32)
    img = img + ramp
    pic = Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(pic)
    for _ in range(12):
        x,y = rng.integers(0, width), rng.integers(0, height)
        r = int(rng.integers(width//40, width//8))
        draw.ellipse((x-r, y-r, x+r, y+r), fill=tuple(int(c) for c in rng.integers(0, 256, 3)))
    arr = np.asarray(pic, dtype=np.int16) + rng.normal(0, 3, (height, width, 1)).astype(np.int16)
    Image.fromarray(np.clip(arr, 0, 255).astype(np.uint8)).save(path, quality=90)
    return path

class Sampler:
    "Polls the memory of this process and its children: peak RSS of each, and peaks of the sums of RSS and of PSS."
    def __init__(self, every:float=1.0):
        self.every,self.main,self.workers,self.total,self.pss,self.stop = every,0,{},0,0,threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
    def run(self):
        me = psutil.Process()
        while not self.stop.is_set():
            try:
                kids = me.children(recursive=True)
                rss = {k.pid: k.memory_info().rss for k in kids}
                pss = me.memory_full_info().pss + sum(k.memory_full_info().pss for k in kids)
            except psutil.Error: continue
            main = me.memory_info().rss
            self.pss = max(self.pss, pss)
            self.main = max(self.main, main)
            for pid,r in rss.items(): self.workers[pid] = max(self.workers.get(pid, 0), r)
            self.total = max(self.total, main + sum(rss.values()))
            time.sleep(self.every)
    def __enter__(self): self.thread.start(); return self
    def __exit__(self, *exc): self.stop.set(); self.thread.join()

def gb(n): return f'{n/2**30:.2f} GB'

def vae_encoder(size:str, d:Path)->FluxVaeEncoder:
    "A random VAE of `size` ('full' or 'tiny'), saved in `d` and loaded as Stage 2 loads one, in float32 on the CPU."
    random_model('vae', (full_size_configs() if size == 'full' else tiny_configs())['vae']).save_pretrained(d/'vae')
    return FluxVaeEncoder.load(d/'vae', device='cpu', dtype='float32')

def tile_probe():
    "Peak RSS of the full-size VAE encoding one 1024x1024 tile in float32 on the CPU."
    with tempfile.TemporaryDirectory() as d: enc = vae_encoder('full', Path(d))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss*1024
    t = time.perf_counter()
    enc.encode(torch.zeros(1, 3, 1024, 1024, dtype=torch.uint8))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss*1024
    print(f'tile probe: full-size VAE, one 1024x1024 tile: {time.perf_counter()-t:.0f} s, process peak {gb(after)} '
          f'(model loaded: {gb(before)})', flush=True)

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--images', type=int, default=200)
    p.add_argument('--width', type=int, default=4000); p.add_argument('--height', type=int, default=3000)
    p.add_argument('--workers', type=int, default=2)
    p.add_argument('--batch-size', type=int, default=4)
    p.add_argument('--max-batch-pixels', type=int, default=MAX_BATCH_PIXELS)
    p.add_argument('--model', choices=('full', 'tiny'), default='full')
    p.add_argument('--tile-probe', action='store_true', help='only measure the full-size VAE on one 1024x1024 tile')
    p.add_argument('--limit-gb', type=float, default=4.0)
    p.add_argument('--threads', type=int, default=os.cpu_count(), help='torch threads (the workers only decode JPEGs)')
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    if a.tile_probe: return tile_probe()
    with tempfile.TemporaryDirectory() as d: enc = vae_encoder(a.model, Path(d))
    if a.model == 'tiny':  # the tiny VAE's 64-pixel tiles would make thousands of tiles per photo: tile as FLUX does
        m,full = enc.model,full_size_configs()['vae']
        m.tile_sample_min_size,m.tile_latent_min_size = full['sample_size'],full['sample_size']//8
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        files = [photo_like(Path(d)/f'photo{i}.jpg', a.width, a.height, i) for i in range(a.images)]
        mb = sum(f.stat().st_size for f in files)/len(files)/1e6
        print(f'{a.images} photo-like JPEGs of {a.width}x{a.height} ({a.width*a.height/1e6:.0f} MP, {mb:.1f} MB each) '
              f'in {time.perf_counter()-t:.0f} s', flush=True)
        t,done,tiled = time.perf_counter(),0,0
        with Sampler() as s:
            for i,arr,info in encode_image_files(enc, files, batch_size=a.batch_size, num_workers=a.workers,
                                                 max_batch_pixels=a.max_batch_pixels):
                if arr is None: sys.exit(f'failed: {info}')
                done,tiled = done+1,tiled+info['tiled']
                print(f'  {done}/{a.images} encoded at {time.perf_counter()-t:.0f} s; peaks so far: main {gb(s.main)}, '
                      f'all processes {gb(s.pss)} PSS', flush=True)
        took = time.perf_counter()-t
    workers = sorted(s.workers.values(), reverse=True)[:a.workers]
    px = a.width*a.height
    old_window = 8*a.batch_size*3*px*4  # 8*batch_size samples waiting, float32, per worker
    print(f'encoded {done} images ({tiled} tiled) with the {a.model} VAE in {took:.0f} s ({done/took:.2f} images/s)')
    high_water = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss*1024  # the kernel's, between two samples too
    print(f'peak RSS: main {gb(s.main)} (high-water mark, model loading included: {gb(high_water)}), workers {", ".join(gb(w) for w in workers)}, '
          f'all processes together {gb(s.total)} RSS (pages shared by the forked workers counted in each), '
          f'{gb(s.pss)} PSS (shared pages split) (limit {a.limit_gb:.0f} GB)')
    print(f'previous design: a window of 8 x batch size {a.batch_size} float32 images of {px/1e6:.0f} MP = '
          f'{gb(old_window)} per worker, {gb(old_window*a.workers)} with {a.workers} workers, '
          f'{gb(old_window*8)} with the default 8')
    print(f'this design: at most {gb(2*a.max_batch_pixels*3)} of waiting uint8 pixels per worker '
          f'(window of {2*a.max_batch_pixels/2**20:.0f} MP), plus the batches the DataLoader queues')
    # Host memory is the PSS sum: an RSS sum counts the pages the forked workers share with the main process once per process
    if s.pss > a.limit_gb*2**30: sys.exit(f'peak host memory {gb(s.pss)} PSS is above {a.limit_gb} GB')
    print(f'peak host memory {gb(s.pss)} PSS is within {a.limit_gb:.0f} GB')

if __name__ == '__main__': main()

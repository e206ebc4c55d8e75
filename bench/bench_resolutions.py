"""Several resolutions from one decode: one `imgprep_stage2 --resolutions 512,768,1024` run against three
single-resolution runs (`--resolutions 512`, `768`, `1024`, each into its own tree) on the same real photographs,
with the tiny models on the CPU, in the same run of this script.

    python bench/bench_resolutions.py [--images 6] [--rounds 2] [--threads 2]

The photographs are the colour photographs scikit-image ships (astronaut, cat, coffee, rocket, motorcycle, Hubble,
retina...), each enlarged with Lanczos to a phone photo's 4032x3024 (3024x4032 for a portrait one) and saved as a
JPEG of quality 90: files of a real 12 MP photo's size and decoding cost, though the enlargement adds no detail.
Every figure comes from a child process (`imgprep_stage2`, as a user runs it), so nothing of this script's memory is
counted in it. Printed:

- breakdown: where one photograph's time goes, in this process: its decode, and at each resolution its cover-crop
  and resize to its bucket and the tiny VAE's encode (one run decodes once, but resizes and encodes once per
  resolution, so the decode's share bounds what one run can save).
- time: `--kinds vae` (only the latents, so the decode is what is shared), the multi-resolution run against the
  three single runs together, rounds interleaved, best round of each, in wall seconds and in CPU seconds (user +
  system of the run and its workers: on a shared, oversubscribed machine the wall clock measures the other users
  too, the CPU time much less so); the same with each run's fixed cost taken out (interpreter, imports,
  planning: a rerun over the finished tree, which loads no model and decodes nothing). Goal: the three-resolution run at least 2x
  faster than the three runs.
- bytes per image: the default kinds (DINOv3, computed from the same decode, VAE, T5-Large), so the text states count: the one tree with three
  resolutions against three trees of one resolution each, per directory, and the shards `imgprep_shard` makes of
  them. The text states and the DINOv3 vector are stored once instead of three times.
- memory: the peak of the multi-resolution run (`--kinds vae`, and the default kinds), as the largest RSS of any of
  its processes (`ru_maxrss` from `os.wait4`) and the largest sum of PSS over its process tree, sampled every 0.2 s
  (shared pages counted once). Goal: under 4 GB.
"""
import argparse, contextlib, io, os, random, shutil, statistics, subprocess, sys, tempfile, threading, time
from pathlib import Path

import numpy as np
import psutil
import skimage
from PIL import Image

from imgprep.core import JSONL_NAME, dumps_record
from imgprep.testing import mask_for, random_caption
from imgprep.tiny_models import tiny_models

RESOLUTIONS = (512, 768, 1024)
PHOTOS = ('astronaut.png', 'chelsea.png', 'coffee.png', 'rocket.jpg', 'motorcycle_left.png', 'hubble_deep_field.jpg',
          'retina.jpg', 'motorcycle_right.png')
STAGE2 = 'from imgprep.stage2 import main; main()'
SHARD = 'from imgprep.shards import main; main()'

def photographs(d:Path, n:int, size:tuple=(4032, 3024))->list:
    "`n` distinct photographs from scikit-image, enlarged to 12 MP (portrait ones turned to `size[::-1]`), as JPEG q90."
    src = [Path(skimage.__file__).parent/'data'/p for p in PHOTOS]
    src = [p for p in src if p.exists()][:n]
    if len(src) < n: sys.exit(f'only {len(src)} photographs in scikit-image here; ask for --images {len(src)} or fewer')
    d.mkdir(parents=True)
    out = []
    for p in src:
        im = Image.open(p).convert('RGB')
        w,h = size if im.width >= im.height else size[::-1]
        f = d/f'{p.stem}.jpg'
        im.resize((w, h), Image.Resampling.LANCZOS).save(f, 'JPEG', quality=90)
        out.append(f)
    return out

def stage1(root:Path, photos:list, seed:int=0)->Path:
    "A Stage 1 JSONL of `photos` (paths relative to `root`): a caption and its mask, the size (no inline DINOv3 vector: Stage 2 computes it from the same decode)."
    rng = random.Random(seed)
    lines = []
    for p in photos:
        w,h = Image.open(p).size
        cap = random_caption(rng)
        lines.append(dumps_record(dict(image_path=str(p.relative_to(root)), caption=cap, t5_attention_mask=mask_for(cap), width=w, height=h)))
    j = root/'stage1'/JSONL_NAME
    j.parent.mkdir()
    j.write_bytes(b''.join(lines))
    return j

class PeakPss:
    "Samples the summed PSS of a process and its descendants until stopped; `.peak` in bytes."
    def __init__(self, pid:int, every:float=0.2):
        self.pid,self.every,self.peak,self.stop = pid,every,0,threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
    def run(self):
        try: p = psutil.Process(self.pid)
        except psutil.Error: return
        while not self.stop.is_set():
            try: self.peak = max(self.peak, sum(q.memory_full_info().pss for q in [p, *p.children(recursive=True)]))
            except psutil.Error: pass
            time.sleep(self.every)
    def __enter__(self): self.thread.start(); return self
    def __exit__(self, *exc): self.stop.set(); self.thread.join()

def child(code:str, *args)->dict:
    "Run `python -c code args`: wall and CPU seconds (its own and its waited-for children's), peak RSS of its largest process, peak summed PSS of its tree, its stdout."
    t = time.perf_counter()
    with tempfile.TemporaryFile() as o, tempfile.TemporaryFile() as e:
        p = subprocess.Popen([sys.executable, '-c', code, *map(str, args)], stdout=o, stderr=e)
        with PeakPss(p.pid) as pss: _,status,ru = os.wait4(p.pid, 0)  # the rusage of this child and the children it waited for
        p.returncode = os.waitstatus_to_exitcode(status)
        secs = time.perf_counter()-t
        o.seek(0); e.seek(0); out,err = o.read().decode(),e.read().decode()
    if p.returncode: sys.exit(f'failed ({p.returncode}): {code} {" ".join(map(str, args))}\n{err[-2000:]}')
    return dict(secs=secs, cpu=ru.ru_utime + ru.ru_stime, rss=ru.ru_maxrss*1024, pss=pss.peak, out=out.strip())

def stage2(jsonl:Path, tree:Path, images:Path, models:dict, kinds:str, resolutions, threads:int)->dict:
    "`imgprep_stage2` on a fresh copy of the Stage 1 JSONL in `tree`."
    if not (tree/JSONL_NAME).exists():
        tree.mkdir(parents=True, exist_ok=True)
        shutil.copy(jsonl, tree/JSONL_NAME)
    flags = [f'--model={k}={models[k]}' for k in ('dinov3', 'vae', 't5') if k in kinds.split(',') or kinds == 'default']
    return child(STAGE2, '--jsonl', tree/JSONL_NAME, '--images-root', images, *(['--kinds', kinds] if kinds != 'default' else []),
                 '--resolutions', ','.join(map(str, resolutions)), *flags, '--device', 'cpu', '--threads', threads,
                 '--min-free-gb', 0, '--progress-every', 0)

def tree_bytes(tree:Path)->dict:
    "Bytes of each kind's directory and of the metadata JSONL in a Stage 2 tree."
    out = {d.name + '/': sum(f.stat().st_size for f in d.iterdir()) for d in sorted(tree.iterdir()) if d.is_dir()}
    return out | {JSONL_NAME: (tree/JSONL_NAME).stat().st_size}

def gb(n:float)->str: return f'{n/2**30:.2f} GB'

def timing(jsonl, images, models, work:Path, rounds:int, threads:int)->None:
    "The time of one three-resolution run against three single runs, `--kinds vae`, interleaved rounds: wall and CPU seconds."
    runs = {k: [] for k in ('multi', 'singles', 'fixed multi', 'fixed singles')}
    peak = None
    for r in range(rounds):
        shutil.rmtree(work, ignore_errors=True)
        m = stage2(jsonl, work/'multi', images, models, 'vae', RESOLUTIONS, threads)
        assert all(f'new_{k}=' in m['out'] for k in ('vae', 'vae512', 'vae768')), m['out']
        ss = [stage2(jsonl, work/f'r{R}', images, models, 'vae', [R], threads) for R in RESOLUTIONS]
        fm = stage2(jsonl, work/'multi', images, models, 'vae', RESOLUTIONS, threads)   # a rerun: nothing to make, the fixed cost
        fs = [stage2(jsonl, work/f'r{R}', images, models, 'vae', [R], threads) for R in RESOLUTIONS]
        for k,v in (('multi', [m]), ('singles', ss), ('fixed multi', [fm]), ('fixed singles', fs)):
            runs[k].append({t: sum(x[t] for x in v) for t in ('secs', 'cpu')})
        peak = m if peak is None or m['pss'] > peak['pss'] else peak
        each = ', '.join(f"{x['cpu']:.1f}" for x in ss)
        print(f'  round {r+1}: one run {m["secs"]:.1f} s wall, {m["cpu"]:.1f} s CPU; three runs {runs["singles"][-1]["secs"]:.1f} s wall, '
              f'{runs["singles"][-1]["cpu"]:.1f} s CPU ({each}); reruns that make nothing {fm["cpu"]:.1f} and {runs["fixed singles"][-1]["cpu"]:.1f} s CPU; '
              f'load average {os.getloadavg()[0]:.1f}', flush=True)
    best = lambda k,t: min(x[t] for x in runs[k])
    for t,what in (('secs', 'wall'), ('cpu', 'CPU')):
        m,s3 = best('multi', t),best('singles', t)
        wm,ws = m - best('fixed multi', t),s3 - best('fixed singles', t)
        print(f'time ({what}), --kinds vae, best of {rounds}: one run with --resolutions {",".join(map(str, RESOLUTIONS))} {m:.1f} s, '
              f'three single-resolution runs {s3:.1f} s: {s3/m:.2f}x (goal >= 2x); without each run\'s fixed cost '
              f'(interpreter, imports, planning: a rerun that makes nothing) {wm:.1f} s against {ws:.1f} s: {ws/wm:.2f}x')
    print(f'memory of the three-resolution run, --kinds vae: largest process {gb(peak["rss"])} RSS, whole process tree {gb(peak["pss"])} PSS (goal < 4 GB)')

def breakdown(photos:list, models:dict, threads:int)->None:
    "Where an image's time goes, in this process: the decode, then at each resolution the cover-crop and resize to its bucket and the tiny VAE's encode."
    import torch
    from imgprep.encoders import FluxVaeEncoder, vae_pixels
    from imgprep.images import load_rgb
    torch.set_num_threads(threads)
    enc = FluxVaeEncoder.load(models['vae'], device='cpu', dtype='float32')
    dec,res,vae = [],{R: [] for R in RESOLUTIONS},{R: [] for R in RESOLUTIONS}
    for p in photos:
        t = time.process_time(); img = load_rgb(p); dec.append(time.process_time()-t)
        for R in RESOLUTIONS:
            t = time.process_time(); x,_ = vae_pixels(img, 'bucket', bucket_resolution=R); res[R].append(time.process_time()-t)
            t = time.process_time(); enc.encode(x[None]); vae[R].append(time.process_time()-t)
    ms = lambda v: f'{1000*statistics.median(v):.0f} ms'
    print(f'per 12 MP photograph, CPU seconds of this process, median of {len(photos)}: decode {ms(dec)} (shared by one run); at each resolution '
          '(not shared): ' + '; '.join(f'{R}: resize {ms(res[R])}, tiny VAE {ms(vae[R])}' for R in RESOLUTIONS))

def storage(jsonl, images, models, work:Path, n:int, threads:int)->None:
    "Bytes per image of one three-resolution tree against three single-resolution trees, default kinds; their shards too."
    shutil.rmtree(work, ignore_errors=True)
    m = stage2(jsonl, work/'multi', images, models, 'default', RESOLUTIONS, threads)
    for R in RESOLUTIONS: stage2(jsonl, work/f'r{R}', images, models, 'default', [R], threads)
    trees = {'one tree, three resolutions': [work/'multi'], 'three trees, one resolution each': [work/f'r{R}' for R in RESOLUTIONS]}
    print(f'stored bytes per image, default kinds (DINOv3, VAE, T5-Large), {n} photographs:')
    for name,ts in trees.items():
        per = {}
        for t in ts:
            for k,v in tree_bytes(t).items(): per[k] = per.get(k, 0) + v
        per = dict(sorted(per.items()))
        shards = 0
        for t in ts:
            child(SHARD, '--derived-dir', t, '--output-dir', t.parent/f'{t.name}_shards', '--shard-size', 1000, '--progress-every', 0)
            shards += sum(f.stat().st_size for f in (t.parent/f'{t.name}_shards').rglob('*.tar'))
        total = sum(per.values())
        print(f'  {name}: Stage 2 {total/n/1e3:,.0f} KB (' + ', '.join(f'{k} {v/n/1e3:,.0f}' for k,v in per.items()) +
              f'); shards {shards/n/1e3:,.0f} KB')
        trees[name] = (total, shards)
    (a,sa),(b,sb) = trees.values()
    print(f'  one tree stores {a/b:.2f} of the three trees\' bytes ({(b-a)/n/1e3:,.0f} KB less per image), its shards {sa/sb:.2f}')
    print(f'memory of the three-resolution run, default kinds: largest process {gb(m["rss"])} RSS, whole process tree {gb(m["pss"])} PSS (goal < 4 GB)')

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--images', type=int, default=6, help='distinct photographs (at most 8)')
    p.add_argument('--rounds', type=int, default=2)
    p.add_argument('--threads', type=int, default=os.cpu_count(), help='torch threads of each run')
    p.add_argument('--dir', default=None, help='work directory (default: a temporary one, removed after)')
    p.add_argument('--parts', default='breakdown,time,bytes', help='what to measure, comma-separated: breakdown, time, bytes')
    a = p.parse_args()
    base = Path(a.dir or tempfile.mkdtemp(prefix='imgprep-resolutions-'))
    try:
        t = time.perf_counter()
        photos = photographs(base/'images', a.images)
        jsonl = stage1(base, photos)
        with contextlib.redirect_stderr(io.StringIO()): models = tiny_models(base/'models')   # no progress bars
        mb = statistics.mean(f.stat().st_size for f in photos)/1e6
        print(f'{len(photos)} photographs of 12 MP ({", ".join(f.stem for f in photos)}), JPEG q90, {mb:.1f} MB each on average, '
              f'made in {time.perf_counter()-t:.0f} s; tiny models on the CPU, {a.threads} threads; load average {os.getloadavg()[0]:.1f}', flush=True)
        parts = a.parts.split(',')
        if 'breakdown' in parts: breakdown(photos, models, a.threads)
        if 'time' in parts: timing(jsonl, base, models, base/'time', a.rounds, a.threads)
        if 'bytes' in parts: storage(jsonl, base, models, base/'bytes', len(photos), a.threads)
        print(f'load average at the end {os.getloadavg()[0]:.1f} (the machine is shared: the rounds are interleaved so both sides see it alike)')
    finally:
        if a.dir is None: shutil.rmtree(base, ignore_errors=True)

if __name__ == '__main__': main()

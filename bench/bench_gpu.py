"""Every GPU measurement of one machine in one run (under 8 minutes on one H100-class GPU), printed as one markdown table.

    python bench/bench_gpu.py [--photos 300] [--budget 450] [--out figures.json]   # on a machine with a CUDA GPU
    python bench/bench_gpu.py --smoke                                                # anywhere: checks this script on the CPU

Without a GPU (and without --smoke) it says so in one line and exits 2.

What it builds first, in a scratch folder:
- photographs: `--photos` JPEGs of a phone photo's 4032x3024 (3024x4032 for a portrait source), quality 90, baseline, 4:2:0,
  each a different crop of one of the colour photographs matplotlib and scikit-image ship, enlarged with Lanczos (the
  enlargement adds no detail: the files have a real 12 MP photo's size and decoding cost, not its content). The records
  of the DINOv3 rows and of the caption kinds point to hard links of them, so there are more records than files; the
  files stay in the page cache, so the disk is not measured.
- models: the full-size architectures (DINOv3 ViT-L/16, the FLUX.1 VAE, T5-Large's encoder, FLUX.1's CLIP-L text model
  and T5-XXL encoder) from their real configurations (`tiny_models.full_size_configs`) with random weights (speed does
  not depend on their values), saved with `save_pretrained` and loaded by Stage 2's own loading code (`load_encoders`, and
  `imgprep_stage2 --model KIND=DIR` for the whole runs).

What it measures, per kind (DINOv3; the VAE at 1024, and at 512,768,1024 from one decode; T5-Large; CLIP-L; T5-XXL at
512 tokens), in items (photos or captions) per second:
- model alone: the encoder's `forward` on ready tensors in pinned memory (host-to-device copy and the copy back
  included), at each batch size of a short list, the best one kept;
- decode alone (image kinds): the Stage 2 decoding pipeline (`batches.ImageFiles` in as many DataLoader workers as a run
  uses, the kind's preprocessing included) with no model, the most the CPU can feed; with `--gpu-decode`, the photos
  decoded and preprocessed on the GPU (`batches.gpu_decoded`);
- whole run: `run_stage2` (what `imgprep_stage2` runs) over a fresh Stage 1 JSONL, model loading left out, everything
  else in: planning, decoding, batching, the model, checking, writing the .npy files, the journal and the commit;
- the ratio whole run / model alone, and what bounds the run: the model (ratio at least 0.9), the decoding (the run
  within 15% of decode alone), or the rest (batching, copies, writing).
Then the default kinds together and `--kinds flux` together (model alone: the sum of each model's time per photo);
`imgprep_dedup`'s search (`dedup.search`, exact products on the GPU) over 1,000,000 random unit vectors with 10,000
planted pairs at cosines 0.91-0.995, threshold 0.9, and its recall of the planted pairs (reading a million .npy files
from a tree is not included); and the training loader (`loader.bucket_dataset` in DataLoader workers) feeding
batches of 32 to the GPU, host-to-device copy included, over shards `imgprep_shard` made of the default kinds' tree.

Every measurement checks the time left of `--budget` seconds first, and one that would not fit says "skipped (time)".
`--smoke`: tiny models, a few 320x240 photos, small sizes, on the CPU: every step runs, no figure means anything.
"""
import argparse, json, os, platform, random, shutil, subprocess, sys, tempfile, time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import torch
from PIL import Image

HERE = Path(__file__).resolve().parent
SOURCE_KINDS = dict(dinov3='DINOv3 ViT-L/16', vae='FLUX VAE, bucket 1024', vae3='FLUX VAE, 512,768,1024 from one decode', t5='T5-Large, 77 tokens',
                    clip_l='CLIP-L, 77 tokens', t5xxl='T5-XXL, 512 tokens')

def args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--smoke', action='store_true', help='tiny models and sizes on the CPU: checks that every step of this script runs')
    p.add_argument('--photos', type=int, default=None, help='12 MP JPEGs made (default 300; --smoke 6)')
    p.add_argument('--budget', type=float, default=None, help='seconds for the whole script (default 450; --smoke: no limit); a measurement that would not fit is skipped')
    p.add_argument('--dir', default=None, help='scratch folder (default: a temporary one, removed at the end)')
    p.add_argument('--out', default=None, help='also write the figures as JSON here')
    return p.parse_args()

class Sizes:
    "How much of everything: the real run, or the smoke test's."
    def __init__(self, smoke:bool, photos:int|None):
        self.smoke,self.device = smoke,torch.device('cpu' if smoke else 'cuda')
        self.photos = photos or (3 if smoke else 300)
        self.side = (320, 240) if smoke else (4032, 3024)
        self.dino_records = 6 if smoke else 1200  # DINOv3 is fast: more records than photos (hard links), so the run lasts
        self.captions = 8 if smoke else 8192
        self.xxl_captions = 4 if smoke else 1024
        self.vectors,self.pairs = (5000, 50) if smoke else (1_000_000, 10_000)
        self.batches = dict(dinov3=[1, 2], vae=[1, 2], t5=[1, 2], clip_l=[1, 2], t5xxl=[1, 2]) if smoke else dict(
            dinov3=[64, 128, 256, 512], vae=[2, 4, 8, 16], t5=[64, 128, 256, 512], clip_l=[128, 256, 512, 1024], t5xxl=[8, 16, 32, 64])

# ---------------------------------------------------------------- the photographs and the records

def photographs()->list:
    sys.path.insert(0, str(HERE))
    from bench_reduced_decode import photographs as shipped  # the colour photographs matplotlib and scikit-image ship
    return shipped()

def _make_photo(job):
    i,src,out,side = job
    im = Image.open(src).convert('RGB')
    rng = random.Random(i)
    f = rng.uniform(0.85, 1.0)  # a different crop for each file: no two files are the same bytes
    w,h = int(im.width*f), int(im.height*f)
    x,y = rng.randint(0, im.width - w), rng.randint(0, im.height - h)
    size = side if w >= h else side[::-1]
    im.crop((x, y, x+w, y+h)).resize(size, Image.Resampling.LANCZOS).save(out, 'JPEG', quality=90)
    return size

def make_photos(d:Path, n:int, side:tuple)->list:
    "(path, (width, height)) of `n` photos made in parallel."
    d.mkdir(parents=True, exist_ok=True)
    src = photographs()
    jobs = [(i, src[i % len(src)], d/f'p{i:04d}.jpg', side) for i in range(n)]
    with Pool(min(16, os.cpu_count() or 1)) as pool: sizes = pool.map(_make_photo, jobs)
    return [(j[2], s) for j,s in zip(jobs, sizes)]

def stage1(root:Path, photos:list, n:int, name:str, seed:int=0)->Path:
    "A Stage 1 JSONL of `n` records under `root` (images root), each a hard link to one of `photos`, with a random caption."
    from imgprep.core import dumps_record
    from imgprep.testing import random_caption
    rng,lines = random.Random(seed),[]
    (root/name).mkdir(parents=True, exist_ok=True)
    for i in range(n):
        p,(w,h) = photos[i % len(photos)]
        link = root/name/f'{i:05d}.jpg'
        if not link.exists(): os.link(p, link)
        lines.append(dumps_record(dict(image_path=f'{name}/{i:05d}.jpg', caption=random_caption(rng), width=w, height=h)))
    jsonl = root/f'{name}.jsonl'
    jsonl.write_bytes(b''.join(lines))
    return jsonl

# ---------------------------------------------------------------- the models

def save_models(d:Path, s:Sizes)->dict:
    "kind -> directory of a random model of the real (or, for --smoke, the tiny) architecture, saved with `save_pretrained`."
    from imgprep.tiny_models import (DINOV3_PREPROCESSOR, clip_tokenizer, full_size_configs, random_model, t5_tokenizer, tiny_configs,
                                     save_tiny_dinov3)
    cfg,out = (tiny_configs() if s.smoke else full_size_configs()),{}
    for kind in ('dinov3', 'vae', 't5', 'clip_l', 't5xxl'):
        out[kind] = d/kind
        if (d/kind).exists(): continue
        (d/kind).mkdir(parents=True)
        if kind == 'dinov3' and s.smoke: save_tiny_dinov3(d/kind); continue  # its 32x32 input: a tiny model's
        t = time.perf_counter()
        with torch.device(s.device): m = random_model(kind, cfg[kind])  # built on the GPU: seconds for T5-XXL instead of minutes
        if not s.smoke: m = m.to(torch.bfloat16)  # as FLUX.1's checkpoints are: half the bytes to write and read
        for tok in {'t5': [t5_tokenizer], 't5xxl': [t5_tokenizer], 'clip_l': [clip_tokenizer]}.get(kind, []): tok().save_pretrained(d/kind)
        if kind == 'dinov3': (d/kind/'preprocessor_config.json').write_text(json.dumps(DINOV3_PREPROCESSOR))
        m.save_pretrained(d/kind)
        del m
        print(f'  {kind}: built and saved in {time.perf_counter()-t:.1f} s', flush=True)
    if s.device.type == 'cuda': torch.cuda.empty_cache()
    return out

# ---------------------------------------------------------------- timing

MAX_BATCH_PIXELS = 16*2**20 # Stage 2's default (`batches.MAX_BATCH_PIXELS`): the runs here allow the model alone's best batch

def input_pixels(kind:str, s)->int:
    "Pixels of one photo as `kind`'s model takes it: DINOv3's 224x224, or the VAE's bucket at 1024."
    from imgprep.buckets import assign_bucket
    from imgprep.kinds import scaled_sides
    if kind == 'dinov3': return 224*224
    w,h = scaled_sides(assign_bucket(*s.side), 1024)
    return w*h

def sync(device):
    if device.type == 'cuda': torch.cuda.synchronize()

def timed(fn, device)->float:
    sync(device); t = time.perf_counter(); fn(); sync(device)
    return time.perf_counter() - t

def oom(e)->bool: return isinstance(e, torch.cuda.OutOfMemoryError) or 'out of memory' in str(e)

def best_rate(make_batch, forward, sizes:list, device, seconds:float=1.5)->tuple:
    "(items/s, batch size) of `forward` on ready batches, the best of `sizes` (stops at out-of-memory or when larger is slower)."
    best = (0.0, None)
    for b in sizes:
        try:
            x = make_batch(b)
            one = timed(lambda: forward(x), device)  # warm-up, and how long a batch takes
            k = max(3, min(40, int(seconds/max(one, 1e-3))))
            r = k*b/timed(lambda: [forward(x) for _ in range(k)], device)
        except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
            if not oom(e): raise
            break
        finally:
            x = None
            if device.type == 'cuda': torch.cuda.empty_cache()
        if r > best[0]: best = (r, b)
        elif r < 0.97*best[0]: break
    return best

def model_alone(kind:str, models:dict, s:Sizes, captions:list, resolution:int=1024)->tuple:
    "(items/s, best batch size) of one model on ready tensors."
    from imgprep.encoders import load_encoders
    from imgprep.kinds import scaled_sides, vae_at
    from imgprep.buckets import assign_bucket
    name = kind if kind != 'vae' else vae_at(resolution).name
    enc = load_encoders([name], {name: models[kind]}, str(s.device))[name]
    try:
        pin = (lambda x: x.pin_memory()) if s.device.type == 'cuda' else (lambda x: x)
        if kind == 'dinov3':
            h,w = enc.preprocess_config['size']
            make = lambda b: pin(torch.randn(b, 3, h, w))
        elif kind == 'vae':
            w,h = scaled_sides(assign_bucket(*s.side), resolution)  # the bucket the photos go to
            make = lambda b: pin(torch.randint(0, 256, (b, 3, h, w), dtype=torch.uint8))
        else:
            make = lambda b: enc.tokens((captions*(b//len(captions) + 1))[:b])
        return best_rate(make, enc.forward, s.batches[kind], s.device)
    finally: enc.close()

def decode_alone(photos:list, kind:str, models:dict, s:Sizes, n:int, gpu:bool=False, resolutions=(1024,))->float:
    "Photos/s of Stage 2's decoding and preprocessing for `kind` with no model: CPU workers, or the GPU's decoder."
    from imgprep.batches import ImageFiles, _identity, default_workers, gpu_decoded, start_workers
    from imgprep.encoders import load_encoders
    from imgprep.images import gpu_jpeg
    from imgprep.kinds import vae_at
    names = [kind] if kind == 'dinov3' else [vae_at(r).name for r in resolutions]
    encs = load_encoders(names, {k: models[kind] for k in names}, 'cpu')
    try:
        paths = [photos[i % len(photos)][0] for i in range(n)]
        if gpu:
            prep = encs['dinov3'].tensor_preparer()
            datas = [(i, torch.frombuffer(bytearray(p.read_bytes()), dtype=torch.uint8), gpu_jpeg(p.read_bytes())) for i,p in enumerate(paths)]
            def run():
                for c in range(0, len(datas), 64):
                    for _,x in gpu_decoded(datas[c:c+64], s.device): prep(x)
            return n/timed(run, s.device)
        files = ImageFiles(paths, {k: e.preparer() for k,e in encs.items()}, batch_size=8)
        loader = torch.utils.data.DataLoader(files, batch_size=None, num_workers=default_workers(), collate_fn=_identity)
        return n/timed(lambda: sum(1 for _ in start_workers(loader)), s.device)
    finally:
        for e in encs.values(): e.close()

LOADING = []
def whole_run(jsonl:Path, root:Path, out:Path, models:dict, s:Sizes, kinds:str, batch_size:int, text_batch_size:int, **kw)->tuple:
    "(seconds, counters) of `run_stage2` over a fresh copy of `jsonl`, the models' loading left out."
    import imgprep.encoders as E, imgprep.stage2 as S
    if not getattr(E.load_encoders, 'timed', False):
        def timed_load(*a, _load=E.load_encoders, **k):
            t = time.perf_counter()
            try: return _load(*a, **k)
            finally: LOADING.append(time.perf_counter() - t)
        timed_load.timed = True
        E.load_encoders = timed_load  # the encode step looks it up when it loads (one worker: in this process)
    if out.exists(): shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copy(jsonl, out/'approved_image_dataset.jsonl')
    LOADING.clear()
    t = time.perf_counter()
    from imgprep.kinds import parse_kinds
    c = S.run_stage2(out/'approved_image_dataset.jsonl', images_root=root, kinds=kinds, models=[f'{k}={models[k]}' for k in parse_kinds(kinds)],
                     device=str(s.device), batch_size=batch_size, t5_batch_size=text_batch_size, min_free_gb=0, progress_every=0, check_inline=0, **kw)
    return time.perf_counter() - t - sum(LOADING), c

# ---------------------------------------------------------------- dedup and the loader

def planted(n:int, pairs:int, device)->tuple:
    "(n, 1024) float32 unit vectors with `pairs` disjoint pairs at cosines 0.91-0.995, made on `device`; the planted pairs as a set."
    g = torch.Generator(device).manual_seed(0)
    X = torch.randn(n, 1024, device=device, generator=g)
    X /= X.norm(dim=1, keepdim=True)
    idx = torch.randperm(n, device=device, generator=g)[:2*pairs]
    a,b = idx[:pairs],idx[pairs:]
    c = torch.empty(pairs, device=device).uniform_(0.91, 0.995, generator=g)[:, None]
    u = X[b] - (X[b]*X[a]).sum(1, keepdim=True)*X[a]
    X[b] = c*X[a] + (1 - c*c).sqrt()*u/u.norm(dim=1, keepdim=True)
    a,b = a.cpu().numpy(),b.cpu().numpy()
    return X.cpu().numpy(), set(zip(np.minimum(a, b).tolist(), np.maximum(a, b).tolist()))

class Vectors:
    "What `dedup.search` reads: the rows, and which are unusable (none)."
    def __init__(self, X): self.X,self.unusable = X,np.zeros(len(X), bool)
    def __len__(self): return len(self.X)
    def read(self, rows): return self.X[rows]

def dedup(s:Sizes)->tuple:
    "(seconds, recall of the planted pairs, method) of `dedup.search` at threshold 0.9."
    from imgprep.dedup import search
    X,truth = planted(s.vectors, s.pairs, s.device)
    t = time.perf_counter()
    method,_,P,_ = search(Vectors(X), 0.9, 'auto', str(s.device))
    secs = time.perf_counter() - t
    found = set(map(tuple, P.tolist()))
    return secs, len(found & truth)/len(truth), method

def loader(tree:Path, shards:Path, s:Sizes, batch:int=32, seconds:float=4)->tuple:
    "(samples, samples/s, MB/s) of the training loader's batches moved to the device, over the shards of `tree` (epochs repeated for `seconds`)."
    from imgprep.loader import bucket_dataset
    from imgprep.shards import write_shards
    write_shards(shards, derived_dir=tree, shard_size=50, progress_every=0)
    n,nbytes,t0 = 0,0,time.perf_counter()
    while time.perf_counter() - t0 < seconds or n == 0:
        ds = bucket_dataset(shards, batch_size=batch, as_torch=True)
        dl = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=min(4, os.cpu_count() or 1), pin_memory=s.device.type == 'cuda')
        for b in dl:
            for v in b.values():
                if isinstance(v, torch.Tensor):
                    v.to(s.device, non_blocking=True)
                    nbytes += v.nbytes
            n += len(b['__key__'])
        sync(s.device)
    secs = time.perf_counter() - t0
    return n, n/secs, nbytes/secs/1e6

# ---------------------------------------------------------------- the table

def bound(model:float|None, decoding:float|None, run:float|None)->str:
    if not model or not run: return ''
    if run >= 0.9*model: return 'compute (the model)'
    if decoding and run >= 0.85*decoding: return 'decode'
    return 'the rest: batching, copies, writing'

def fmt(x, spec='.1f'): return '' if x is None else x if isinstance(x, str) else format(x, spec)

def hardware(s:Sizes)->str:
    gpu = f'{torch.cuda.get_device_name(0)} ({torch.cuda.get_device_properties(0).total_memory/2**30:.0f} GiB)' if s.device.type == 'cuda' else 'no GPU (--smoke, on the CPU)'
    try: tv = __import__('torchvision').__version__
    except Exception: tv = 'not installed'
    try: rev = subprocess.run(['git', '-C', str(HERE), 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True).stdout.strip()
    except OSError: rev = '?'
    return (f'{time.strftime("%Y-%m-%d")}, {gpu}, {os.cpu_count()} CPU cores ({platform.processor() or platform.machine()}), '
            f'torch {torch.__version__}, torchvision {tv}, imgprep {rev}')

def main():
    a = args()
    if not a.smoke and not torch.cuda.is_available():
        print('bench_gpu.py: no CUDA GPU here; run it on a GPU machine, or check this script on the CPU with --smoke', file=sys.stderr)
        sys.exit(2)
    s = Sizes(a.smoke, a.photos)
    start,rows,notes = time.perf_counter(),[],[]
    budget = a.budget or (float('inf') if a.smoke else 450)
    left = lambda: budget - (time.perf_counter() - start)
    d = Path(a.dir or tempfile.mkdtemp(prefix='imgprep_bench_gpu_'))
    os.environ.setdefault('HF_HUB_OFFLINE', '1')
    try:
        t = time.perf_counter()
        photos = make_photos(d/'photos', s.photos, s.side)
        print(f'{len(photos)} photos of {s.side[0]}x{s.side[1]} made in {time.perf_counter()-t:.1f} s', flush=True)
        models = save_models(d/'models', s)
        caps_rng = random.Random(1)
        from imgprep.testing import random_caption
        captions = [random_caption(caps_rng) for _ in range(64)]
        images = stage1(d/'root', photos, s.photos, 'photos')
        dino_records = stage1(d/'root', photos, s.dino_records, 'dino')
        caption_records = stage1(d/'root', photos, s.captions, 'captions')
        xxl_records = stage1(d/'root', photos, s.xxl_captions, 'xxl')
        root = d/'root'

        def row(name, items, unit, model, batch, decoding, secs, note=''):
            run = items/secs if secs else None
            rows.append(dict(measurement=name, items=items, unit=unit, batch=batch, model_alone=model, decode_alone=decoding, whole_run=run,
                             ratio=run/model if run and model else None, bound=bound(model, decoding, run), note=note))
            r = rows[-1]
            print(f"  {name}: model alone {fmt(model)} {unit}/s (batch {batch}), decode alone {fmt(decoding)}, whole run {fmt(run)}, "
                  f"ratio {fmt(r['ratio'], '.2f')} {note}", flush=True)

        def measured(name, est, fn):
            "Run `fn` when `est` seconds fit in the budget; else a row that says it was skipped."
            if left() < est:
                rows.append(dict(measurement=name, note=f'skipped (time: {left():.0f} s left of {budget:.0f})')); print(f'  {name}: skipped (time)')
                return None
            return fn()

        alone = {}
        def image_kind(kind, label, jsonl, n, res=(1024,), **kw):
            rates = [model_alone('vae' if kind.startswith('vae') else kind, models, s, captions, r) for r in res]
            b = rates[-1][1]
            rate = 1/sum(1/r for r,_ in rates)  # one photo takes each resolution's model time
            alone[kind] = rate
            dec = decode_alone(photos, 'dinov3' if kind == 'dinov3' else 'vae', models, s, min(n, 200 if not s.smoke else n), resolutions=res)
            secs,c = whole_run(jsonl, root, d/'out'/kind, models, s, kind if kind != 'vae3' else 'vae', b, 64,
                               max_batch_pixels=max(MAX_BATCH_PIXELS, b*input_pixels(kind, s)), **kw)  # the run batches as the model alone did
            row(label, n, 'photos', rate, b, dec, secs)
            return b
        print('per kind:', flush=True)
        b_dino = measured(SOURCE_KINDS['dinov3'], 30, lambda: image_kind('dinov3', SOURCE_KINDS['dinov3'] + ', CPU decode', dino_records, s.dino_records)) or 4
        def gpu_dino():
            try:
                secs,c = whole_run(dino_records, root, d/'out'/'dinov3-gpu', models, s, 'dinov3', b_dino, 64, gpu_decode=True,
                                   max_batch_pixels=max(MAX_BATCH_PIXELS, b_dino*input_pixels('dinov3', s)))
            except Exception as e:
                rows.append(dict(measurement=SOURCE_KINDS['dinov3'] + ', --gpu-decode', note=f'refused: {e}')); print(f'  --gpu-decode: refused: {e}')
                return
            dec = decode_alone(photos, 'dinov3', models, s, min(s.dino_records, 300), gpu=True)
            row(SOURCE_KINDS['dinov3'] + ', --gpu-decode', s.dino_records, 'photos', alone.get('dinov3'), b_dino, dec, secs)
        measured('DINOv3, --gpu-decode', 10, gpu_dino)
        b_vae = measured(SOURCE_KINDS['vae'], 35, lambda: image_kind('vae', SOURCE_KINDS['vae'], images, s.photos)) or 4
        measured(SOURCE_KINDS['vae3'], 50, lambda: image_kind('vae3', SOURCE_KINDS['vae3'], images, s.photos, (512, 768, 1024), resolutions='512,768,1024'))
        b_text = {}
        for kind,jsonl,n in (('t5', caption_records, s.captions), ('clip_l', caption_records, s.captions), ('t5xxl', xxl_records, s.xxl_captions)):
            def text_kind(kind=kind, jsonl=jsonl, n=n):
                rate,b = model_alone(kind, models, s, captions)
                alone[kind],b_text[kind] = rate,b
                secs,c = whole_run(jsonl, root, d/'out'/kind, models, s, kind, 4, b)
                row(SOURCE_KINDS[kind], n, 'captions', rate, b, None, secs)
            measured(SOURCE_KINDS[kind], 20 if kind != 't5xxl' else 40, text_kind)
        print('together:', flush=True)
        def together(kinds, label, parts):
            if any(k not in alone for k in parts): rows.append(dict(measurement=label, note='a kind of it was not measured')); return
            rate = 1/sum(1/alone[k] for k in parts)
            tb = min(b_text.get(k, 64) for k in parts if k in b_text)
            secs,c = whole_run(images, root, d/'out'/kinds, models, s, kinds, max(b_dino if 'dinov3' in parts else 0, b_vae), tb,
                               max_batch_pixels=max(MAX_BATCH_PIXELS, b_dino*input_pixels('dinov3', s), b_vae*input_pixels('vae', s)))
            slowest = max(parts, key=lambda k: 1/alone[k])
            row(label, s.photos, 'photos', rate, f'{max(b_dino if "dinov3" in parts else 0, b_vae)}/{tb}', None, secs,
                note=f'{slowest} takes {100*(1/alone[slowest])/sum(1/alone[k] for k in parts):.0f}% of the model time')
        measured('default kinds together', 30, lambda: together('dinov3,vae,t5', 'default kinds (dinov3, vae, t5) together', ('dinov3', 'vae', 't5')))
        measured('--kinds flux together', 40, lambda: together('flux', '--kinds flux (vae, clip_l, t5xxl) together', ('vae', 'clip_l', 't5xxl')))
        print('dedup and loader:', flush=True)
        def dedup_row():
            secs,recall,method = dedup(s)
            rows.append(dict(measurement=f'imgprep_dedup search, {s.vectors:,} x 1024, {s.pairs:,} planted pairs', items=s.vectors, unit='vectors',
                             whole_run=s.vectors/secs, note=f'{secs:.1f} s ({method}), recall {recall:.4f}'))
            print(f'  dedup: {secs:.1f} s ({method}), recall {recall:.4f}', flush=True)
        measured('dedup', 45, dedup_row)
        def loader_row():
            tree = d/'out'/'dinov3,vae,t5'
            if not tree.exists(): rows.append(dict(measurement='loader', note='the default kinds tree was not made')); return
            n,rate,mb = loader(tree, d/'shards', s)
            rows.append(dict(measurement='training loader to the GPU, batches of 32', items=n, unit='samples', whole_run=rate, note=f'{mb:.0f} MB/s host to device'))
            print(f'  loader: {rate:.0f} samples/s, {mb:.0f} MB/s', flush=True)
        measured('loader', 15, loader_row)
        notes.append('The quality scores have no kind yet: nothing to measure for them.')
    finally:
        if not a.dir: shutil.rmtree(d, ignore_errors=True)
    print(f'\n{hardware(s)}; {time.perf_counter()-start:.0f} s in all{"; --smoke: tiny models on the CPU, the figures mean nothing" if s.smoke else ""}\n')
    print('| measurement | items | batch | model alone /s | decode alone /s | whole run /s | run / model | bound | note |')
    print('|---|---|---|---|---|---|---|---|---|')
    for r in rows:
        print(f"| {r['measurement']} | {fmt(r.get('items'), ',')} {r.get('unit', '')} | {r.get('batch') or ''} | {fmt(r.get('model_alone'))} | "
              f"{fmt(r.get('decode_alone'))} | {fmt(r.get('whole_run'))} | {fmt(r.get('ratio'), '.2f')} | {r.get('bound', '')} | {r.get('note', '')} |")
    for n in notes: print(f'\n{n}')
    if a.out: Path(a.out).write_text(json.dumps(dict(hardware=hardware(s), rows=rows), indent=1, default=str))

if __name__ == '__main__': main()

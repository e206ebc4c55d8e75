#!/usr/bin/env python
"""Encoder throughput: samples/s of each model alone on ready tensors, and of the whole path from files on disk
(decode, preprocess, encode, write .npy), at several batch sizes, with the full-size architectures (random weights:
speed does not depend on weight values). The ratio whole-path / model-alone is the overhead figure: on a GPU it should
be >= 0.9 (decoding hidden behind the model in DataLoader workers).

    python bench/bench_encoders.py --device cpu --resolution 256 --samples 8
    python bench/bench_encoders.py --device cuda --resolution 1024 --samples 256
"""
import argparse, json, os, sys, tempfile, time
from pathlib import Path

import numpy as np
import torch

from imgprep.core import atomic_save_npy, iter_jsonl
from imgprep.batches import default_workers, encode_captions, encode_image_files
from imgprep.encoders import DinoV3Encoder, FluxVaeEncoder
from imgprep.text_encoders import T5Encoder
from imgprep.models import pick_device
from imgprep.testing import make_image, random_caption
from imgprep.tiny_models import DINOV3_PREPROCESSOR, full_size_configs, random_model, t5_tokenizer, tiny_configs

def build(kind, device, dtype, tiny=False):
    "An encoder of `kind` around a random-weight model of the full-size (or tiny) architecture."
    cfg = (tiny_configs() if tiny else full_size_configs())[kind]
    model = random_model(kind, cfg)
    name = f'random {"tiny" if tiny else "full-size"} {kind}'
    if kind == 'dinov3': return DinoV3Encoder(model, DINOV3_PREPROCESSOR, name, device, dtype)
    if kind == 'vae': return FluxVaeEncoder(model, name, device, dtype)
    return T5Encoder(model, t5_tokenizer(), name, device, dtype)

def sync(device):
    if device.type == 'cuda': torch.cuda.synchronize()

REPEATS = 1

def rate(n, fn, device):
    "Samples per second of `fn()`, which processes `n` samples: the best of `REPEATS` runs (shared machines are noisy)."
    best = float('inf')
    for _ in range(REPEATS):
        sync(device); t = time.perf_counter()
        fn()
        sync(device)
        best = min(best, time.perf_counter()-t)
    return n/best

def batches(n, bs): return [min(bs, n-i) for i in range(0, n, bs)]

def model_alone(enc, kind, n, bs, res, captions):
    "Samples/s of the model on ready CPU tensors (host-to-device copy included, as in the real path)."
    if kind == 't5':
        toks = [enc.tokens(captions[:b]) for b in batches(n, bs)]
        return rate(n, lambda: [enc.forward(t) for t in toks], enc.device)
    size = enc.preprocess_config['size'] if kind == 'dinov3' else (res, res)
    xs = [torch.randn(b, 3, *size) for b in batches(n, bs)]
    if enc.device.type == 'cuda': xs = [x.pin_memory() for x in xs]
    return rate(n, lambda: [enc.forward(x) for x in xs], enc.device)

def whole_path(enc, kind, n, bs, files, jsonl, out, workers):
    "Samples/s from files on disk to .npy files written."
    out.mkdir(parents=True, exist_ok=True)
    def images():
        for i,a,info in encode_image_files(enc, files[:n], batch_size=bs, num_workers=workers):
            if a is None: raise RuntimeError(info)
            atomic_save_npy(out/f'{i}.npy', a)
    def captions():
        recs = [r for _,r in iter_jsonl(jsonl)][:n]
        for i,h,_ in encode_captions(enc, [r['caption'] for r in recs], batch_size=bs):
            if h is None: raise RuntimeError(f'caption {i} refused')
            atomic_save_npy(out/f'{i}.npy', h)
    return rate(n, captions if kind == 't5' else images, enc.device)

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--device', default='auto'); p.add_argument('--dtype', default='auto')
    p.add_argument('--kinds', nargs='+', default=['dinov3', 'vae', 't5'])
    p.add_argument('--batch-sizes', nargs='+', type=int, default=[1, 4, 16])
    p.add_argument('--resolution', type=int, default=None, help='side of the square test images (default: 1024 on CUDA, 256 elsewhere)')
    p.add_argument('--samples', type=int, default=None, help='samples per measurement (default: 256 on CUDA, 16 elsewhere): enough that filling the pipeline is a small part')
    p.add_argument('--workers', type=int, default=None, help='DataLoader workers (default: imgprep.batches.default_workers())')
    p.add_argument('--repeats', type=int, default=None, help='time each measurement this many times, keep the best (default: 2)')
    p.add_argument('--tiny', action='store_true', help='tiny models instead of full size (a smoke test of this script)')
    a = p.parse_args()
    device = pick_device(a.device)
    res = a.resolution or (1024 if device.type == 'cuda' else 256)
    n = a.samples or (256 if device.type == 'cuda' else 16)
    workers = default_workers() if a.workers is None else a.workers
    global REPEATS
    REPEATS = a.repeats or 2
    print(f'device={device} dtype={a.dtype} resolution={res}x{res} samples={n} repeats={REPEATS} workers={workers} cpus={os.cpu_count()} '
          f'torch_threads={torch.get_num_threads()} models={"tiny" if a.tiny else "full-size"} (random weights)', flush=True)
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        files = [make_image(d/'img'/f'{i:05d}.jpg', res, res, seed=i, quality=95) for i in range(n)]
        rng = __import__('random').Random(0)
        caps = [' '.join(random_caption(rng) for _ in range(4)) for _ in range(n)]
        jsonl = d/'captions.jsonl'
        jsonl.write_text(''.join(json.dumps({'image_id': f'{i:05d}', 'caption': c})+'\n' for i,c in enumerate(caps)))
        print(f'{"encoder":8} {"batch":>5} {"model samples/s":>16} {"path samples/s":>15} {"path/model":>10}', flush=True)
        for kind in a.kinds:
            enc = build(kind, device, a.dtype, a.tiny)
            model_alone(enc, kind, 1, 1, res, caps)  # warm-up: first call pays for lazy init and kernel selection
            for bs in a.batch_sizes:
                m = model_alone(enc, kind, n, bs, res, caps)
                w = whole_path(enc, kind, n, bs, files, jsonl, d/'out'/f'{kind}{bs}', workers)
                print(f'{kind:8} {bs:5d} {m:16.3f} {w:15.3f} {w/m:10.2f}', flush=True)
            enc.close()

if __name__ == '__main__': main()

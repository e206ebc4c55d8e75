"""DINOv3 without a full decode: what decoding a JPEG at reduced scale (libjpeg's DCT scaling, PIL's `draft`) changes in
DINOv3's input and embedding, and what it saves, on real photographs.

    python bench/bench_reduced_decode.py [--megapixels 12] [--rounds 3]

The photographs are every colour picture matplotlib and scikit-image ship, each saved as a JPEG (quality 90) at its own
size and enlarged with Lanczos to `--megapixels` (a phone photo's size; the enlargement adds no detail, so this is a
stand-in for a real 12 MP photo, not one). For each file:

- pixel difference: the largest absolute difference, in 0-255 steps, between DINOv3's 224x224 input made from the full
  decode and from the reduced one (`imgprep.images.load_rgb(path, draft=(224, 224))`), after the same resize;
- cosine: between the embeddings of the two inputs, by the full-size DINOv3 ViT-L/16 architecture (random weights: the
  weights are not on this machine; the figure says how far the inputs move the network, not the trained one);
- decode+resize rate: images/s on one core (torch and PIL on one thread) of load_rgb + `dinov3_pixels`, with and without
  the reduced decode, the two interleaved over `--rounds` rounds; this is the ceiling of one decoding core on the GPU path.

Stage 2 makes the reduced decode its default only if the lowest cosine is at least 0.999 (`--reduced-decode`).
"""
import argparse, io, shutil, statistics, tempfile, time
from pathlib import Path

import matplotlib, numpy as np, skimage, torch
from PIL import Image

from imgprep.encoders import dinov3_pixels, dinov3_preprocess_config
from imgprep.images import load_rgb
from imgprep.tiny_models import DINOV3_PREPROCESSOR, full_size_configs, random_model

def photographs()->list:
    "The colour photographs (and photo-like pictures) matplotlib and scikit-image ship."
    sk = Path(skimage.__file__).parent/'data'
    names = ('astronaut.png', 'chelsea.png', 'coffee.png', 'rocket.jpg', 'motorcycle_left.png', 'motorcycle_right.png',
             'hubble_deep_field.jpg', 'immunohistochemistry.png', 'retina.jpg', 'color.png', 'ihc.png')
    found = [sk/n for n in names if (sk/n).exists()]
    return [Path(matplotlib.get_data_path())/'sample_data'/'grace_hopper.jpg'] + found

def write_jpegs(d:Path, megapixels:float)->list:
    "Each photograph as a JPEG at its own size and enlarged to `megapixels`."
    out = []
    for p in photographs():
        im = Image.open(p).convert('RGB')
        scale = (megapixels*1e6/(im.width*im.height))**0.5
        for tag,img in (('own', im), (f'{megapixels:g}MP', im.resize((round(im.width*scale), round(im.height*scale)), Image.LANCZOS))):
            f = d/f'{p.stem}-{tag}.jpg'
            img.save(f, 'JPEG', quality=90)
            out.append(f)
    return out

def rate(files:list, cfg:dict, draft)->float:
    "Images/s of decode + DINOv3 preprocessing over `files`."
    t = time.perf_counter()
    for f in files: dinov3_pixels(load_rgb(f, draft=draft), cfg)
    return len(files)/(time.perf_counter() - t)

def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--megapixels', type=float, default=12)
    p.add_argument('--rounds', type=int, default=3)
    a = p.parse_args()
    torch.set_num_threads(1)
    cfg = dinov3_preprocess_config(DINOV3_PREPROCESSOR)
    need = cfg['size'][::-1]
    model = random_model('dinov3', full_size_configs()['dinov3']).eval()
    d = Path(tempfile.mkdtemp(prefix='imgprep-reduced-'))
    try:
        files = write_jpegs(d, a.megapixels)
        print(f"{len(files)} JPEGs from {len(files)//2} photographs, at their own sizes and at {a.megapixels:g} MP; DINOv3 input {need[0]}x{need[1]}")
        print(f"{'file':34} {'size':>11} {'decoded at':>11} {'max px diff':>11} {'cosine':>9}")
        cosines = []
        for f in files:
            full,reduced = load_rgb(f),load_rgb(f, draft=need)
            x = torch.stack([dinov3_pixels(full, cfg), dinov3_pixels(reduced, cfg)])
            px = (x*torch.tensor(cfg['image_std'])[:, None, None] + torch.tensor(cfg['image_mean'])[:, None, None])*255  # back to 0-255 steps
            with torch.inference_mode(): e = model(pixel_values=x).pooler_output
            cos = torch.nn.functional.cosine_similarity(e[0:1], e[1:2]).item()
            cosines.append(cos)
            print(f'{f.name:34} {full.width:>5}x{full.height:<5} {reduced.width:>5}x{reduced.height:<5} {(px[0]-px[1]).abs().max().item():11.1f} {cos:9.5f}')
        big = [f for f in files if 'MP' in f.name]
        full_r,red_r = [],[]
        for _ in range(a.rounds):
            full_r.append(rate(big, cfg, None)); red_r.append(rate(big, cfg, need))
        print(f'lowest cosine {min(cosines):.5f}, median {statistics.median(cosines):.5f}: '
              f'{"at least" if min(cosines) >= 0.999 else "below"} 0.999, so the reduced decode is '
              f'{"fit to be the default" if min(cosines) >= 0.999 else "not the default (--reduced-decode turns it on)"}')
        print(f'decode + DINOv3 preprocessing on one core, {a.megapixels:g} MP JPEGs, best of {a.rounds} interleaved rounds: '
              f'full decode {max(full_r):.1f} img/s, reduced decode {max(red_r):.1f} img/s ({max(red_r)/max(full_r):.1f}x)')
    finally: shutil.rmtree(d)

if __name__ == '__main__': main()

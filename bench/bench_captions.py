"""Several captions per image: bytes per image and the Stage 2 text pass, for one and three captions per image and for a
class-prompt tree, against storing every caption's states per image, in the same run of this script.

    python bench/bench_captions.py [--images 200] [--full] [--rounds 3]

Three Stage 2 trees of `--images` records each (no photo is read: `--kinds t5`, the text pass alone), made by
`imgprep_stage2` in a child process, as a user runs it:

- one: one caption per image (what every tree held before captions could be several);
- three: three distinct captions per image (a description, a sentence, a few words), one per line of a sidecar;
- class: a first caption of its own per image, and one class prompt ("a photo of sks dog") as the second caption of
  every image;
- prompt: the class prompt as the one caption of every image, the way DreamBooth-style sets are captioned (a first
  caption that several records share is stored under its text, once).

Printed per tree:

- bytes per image: every file under `t5_hidden/` (the first captions under the image ids, the further captions, a
  shared first caption and the empty caption once per text, with their masks), against storing each caption's states per image (its states
  and its mask for every caption of every image);
- the text pass: the child's wall and CPU seconds for a fresh tree, minus those of a rerun over the finished tree
  (interpreter, imports and planning), median of `--rounds`; and the captions it encoded (`new_t5` + `new_t5_captions`)
  against the captions a per-image store encodes (every caption of every image).

Every T5 state is stored as (77, 1024) float16, whatever the model, so the bytes are a real tree's. By default the
encoder is the tiny random test model (fast: the times then measure imgprep's own work, not the model's); `--full`
builds T5-Large's real architecture with random weights (speed does not depend on the weights).
"""
import argparse, json, os, resource, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

from imgprep.core import JSONL_NAME, dumps_record
from imgprep.format import CAPTIONS, caption_fields
from imgprep.testing import random_caption
import random

def records(kind:str, n:int, seed:int=0)->list:
    "Stage 1 records without photos (`--kinds t5` reads none): `kind` is one, three, class or prompt."
    rng = random.Random(seed)
    out = []
    for i in range(n):
        first = f'photo {i}: ' + random_caption(rng)
        caps = {'one': [first], 'three': [first, f'a short caption of photo {i}', f'photo {i}'],
                'class': [first, 'a photo of sks dog'], 'prompt': ['a photo of sks dog']}[kind]
        out.append(dict(image_id=f'img{i:05d}', image_path=f'img{i:05d}.jpg', **caption_fields([('caption', c) for c in caps]), height=512, width=512))
    return out

def t5_dir(d:Path, full:bool)->Path:
    "A T5 encoder directory: the tiny test model, or T5-Large's architecture with random weights."
    from imgprep.tiny_models import full_size_configs, random_model, t5_tokenizer, tiny_models
    if not full: return tiny_models(d/'tiny', ('t5',))['t5']
    random_model('t5', full_size_configs()['t5']).save_pretrained(d/'t5-large'); t5_tokenizer().save_pretrained(d/'t5-large')
    return d/'t5-large'

def stage2(jsonl:Path, t5:Path)->tuple:
    "(wall seconds, CPU seconds of the child and its workers, counters) of one `imgprep_stage2 --kinds t5` run."
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, '-m', 'imgprep.stage2', '--jsonl', str(jsonl), '--kinds', 't5', '--t5-model', str(t5), '--device', 'cpu',
                        '--min-free-gb', '0', '--progress-every', '0', '--images-root', str(jsonl.parent)], capture_output=True, text=True,
                       env=os.environ | {'HF_HUB_OFFLINE': '1'})
    wall,after = time.perf_counter() - t0,resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode: sys.exit(f'imgprep_stage2 failed: {r.stderr[-2000:]}')
    counters = dict(t.split('=', 1) for t in r.stdout.split() if '=' in t)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), counters

def state_bytes(d:Path)->tuple:
    "(bytes of one caption's states and mask, every byte under the T5 directory)."
    first = next(p for p in (d/'t5_hidden').rglob('*.npy') if not p.name.endswith('.mask.npy'))
    return first.stat().st_size + 77 + 128, sum(p.stat().st_size for p in (d/'t5_hidden').rglob('*.npy'))

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--images', type=int, default=200)
    p.add_argument('--full', action='store_true', help="T5-Large's architecture with random weights (default: the tiny test T5)")
    p.add_argument('--rounds', type=int, default=3)
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t5 = t5_dir(tmp, a.full)
        print(f"load average {os.getloadavg()[0]:.2f}; {a.images} images; T5: {'T5-Large architecture, random weights' if a.full else 'tiny test model'}")
        for kind in ('one', 'three', 'class', 'prompt'):
            recs = records(kind, a.images)
            captions = sum(len(r.get(CAPTIONS, [0])) for r in recs)
            walls,cpus = [],[]
            for rnd in range(a.rounds):
                d = tmp/f'{kind}{rnd}'; d.mkdir()
                (d/JSONL_NAME).write_bytes(b''.join(dumps_record(r) for r in recs))
                wall,cpu,c = stage2(d/JSONL_NAME, t5)
                rwall,rcpu,_ = stage2(d/JSONL_NAME, t5)  # the fixed cost: a rerun that loads no model
                walls.append(wall - rwall); cpus.append(cpu - rcpu)
                per_state,ours = state_bytes(d)
                if rnd < a.rounds - 1: shutil.rmtree(d)
            encoded = int(c.get('new_t5', 0)) + int(c.get('new_t5_captions', 0))
            per_image = captions*per_state
            print(f"{kind:>6}: {captions/a.images:.0f} captions/image; bytes/image {ours/a.images:,.0f} (per-image store {per_image/a.images:,.0f}, "
                  f"{ours/per_image:.2f}x); captions encoded {encoded} (per-image store {captions}); text pass median "
                  f"{statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} s CPU (best {min(walls):.2f} s)")

if __name__ == '__main__': main()

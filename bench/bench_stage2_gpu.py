"""Stage 2 model passes end to end: records/s of `imgprep_stage2 --pass vae` and `--pass t5` with full-size random models
(saved with `save_pretrained` and loaded by Stage 2's own code), against the same model alone on ready tensors.

    python bench/bench_stage2_gpu.py [--n 512] [--device cuda] [--chunks 64,512]

The Stage 1 images are bucket-sized (about one megapixel, the seven shapes in turn), so in original mode every batch
holds one of seven shapes. Model-alone figures use batches of `--batch-size` 1024x1024 images (the VAE) or captions (T5):
the ratio stage2/model is the share of GPU time the whole pass keeps (decoding, batching, writing and journaling included).
`--chunks` runs the VAE pass with several values of `imgprep.stage2.CHUNK` (records per journal chunk, each with its own
DataLoader) to show what the chunk size costs."""
import argparse, random, shutil, tempfile, time
from pathlib import Path

import torch

import imgprep.stage2 as S
import imgprep.encoders as E
from imgprep.encoders import FluxVaeEncoder
from imgprep.text_encoders import T5Encoder
from imgprep.models import pick_device
from imgprep.testing import make_stage1, random_caption
from imgprep.tiny_models import full_size_configs, random_model, t5_tokenizer, tiny_configs

def timed(fn)->float:
    t = time.perf_counter(); fn(); return time.perf_counter()-t

def model_alone(enc, batches, device)->float:
    "Seconds for `enc.forward` over `batches` (after one warm-up batch)."
    enc.forward(batches[0])
    if device.type == 'cuda': torch.cuda.synchronize()
    return timed(lambda: [enc.forward(b) for b in batches])

LOADING = []
def _timed_load(kinds, *a, _load=E.load_encoders, **kw):
    "Stage 2's own model loading, timed so that the pass figures leave it out."
    t = time.perf_counter()
    out = _load(kinds, *a, **kw)
    LOADING.append(time.perf_counter()-t)
    return out
E.load_encoders = _timed_load  # the encode step looks it up when it loads (one worker: in this process)

def stage2_pass(data, out:Path, passes:str, models:Path, bs:int, device:str)->tuple:
    "(seconds, counters) of one `run_stage2` pass over a fresh copy of the Stage 1 JSONL, model loading left out."
    if out.exists(): shutil.rmtree(out)
    out.mkdir(parents=True)
    jsonl = out/'approved_image_dataset.jsonl'
    shutil.copy(data.jsonl, jsonl)
    LOADING.clear()
    t = time.perf_counter()
    c = S.run_stage2(jsonl, images_root=data.images_root, passes=passes, batch_size=bs, vae_model=models/'vae',
                     t5_model=models/'t5', device=device, min_free_gb=0, progress_every=0)
    return time.perf_counter()-t-sum(LOADING), c

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--n', type=int, default=512); p.add_argument('--device', default='cuda')
    p.add_argument('--batch-size', type=int, default=4); p.add_argument('--chunks', default='64,512')
    p.add_argument('--dir', default=None)
    p.add_argument('--tiny', action='store_true', help='tiny models (a smoke test of this script)')
    a = p.parse_args()
    device = pick_device(a.device)
    d = Path(a.dir or tempfile.mkdtemp(prefix='imgprep_bench_s2gpu_'))
    t = time.perf_counter()
    data = make_stage1(d/'stage1', n=a.n, scale=1.0)
    print(f'{a.n} records with bucket-sized images written in {time.perf_counter()-t:.1f}s; device={device}', flush=True)
    models = d/'models'
    cfg = tiny_configs() if a.tiny else full_size_configs()
    random_model('vae', cfg['vae']).save_pretrained(models/'vae')
    random_model('t5', cfg['t5']).save_pretrained(models/'t5'); t5_tokenizer().save_pretrained(models/'t5')
    vae = FluxVaeEncoder(random_model('vae', cfg['vae']), 'random', device)
    vae_s = model_alone(vae, [torch.rand(a.batch_size, 3, 1024, 1024)*2-1 for _ in range(a.n//a.batch_size)], device)
    vae.close()
    t5 = T5Encoder(random_model('t5', cfg['t5']), t5_tokenizer(), 'random', device)
    rng = random.Random(0)
    caps = [random_caption(rng) for _ in range(a.n)]
    t5_s = model_alone(t5, [t5.tokens(caps[i:i+a.batch_size]) for i in range(0, a.n, a.batch_size)], device)
    t5.close()
    print(f'{"pass":12} {"chunk":>6} {"stage2 rec/s":>13} {"model rec/s":>12} {"stage2/model":>12}')
    for chunk in map(int, a.chunks.split(',')):
        S.CHUNK = chunk
        secs,c = stage2_pass(data, d/'out', 'vae', models, a.batch_size, a.device)
        assert c['new_vae'] == a.n, c
        print(f'{"vae":12} {chunk:6d} {a.n/secs:13.2f} {a.n/vae_s:12.2f} {vae_s/secs:12.2f}', flush=True)
        secs,c = stage2_pass(data, d/'out', 't5', models, a.batch_size, a.device)
        assert c['new_t5'] == a.n, c
        print(f'{"t5":12} {chunk:6d} {a.n/secs:13.2f} {a.n/t5_s:12.2f} {t5_s/secs:12.2f}', flush=True)
    if not a.dir: shutil.rmtree(d)

if __name__ == '__main__': main()

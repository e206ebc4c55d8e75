"""imgprep_caption end to end: captions/s of the whole command against the captioning model's `generate` alone on ready
tensors, same model, device, dtype, batch size and number of new tokens.

    python bench/bench_caption.py [--model DIR | --full-size] [--n 32] [--batch-size 8] [--max-new-tokens 32]
                                  [--rounds 3] [--device auto] [--dtype auto] [--big]

Photos: the colour photographs that scikit-image and matplotlib ship (astronaut, coffee, chelsea, rocket,
motorcycle_left, hubble_deep_field, retina, grace_hopper), in turn, saved as JPEG (quality 90) at their own size (about
0.1 to 1 MP), or with `--big` scaled up to 12 MP (4000x3000 for a 4:3 photo), as a phone or a camera writes them. Half
the records carry a user's caption, half an empty one; every record is captioned.

Each round, in turn (the order swapped every round, so that a drift of the machine's load falls on both):

- command: `run_caption` on a fresh copy of the JSONL in a temporary directory, exactly as `imgprep_caption` runs it
  (the model's config checked, its weights hashed for the record, the model loaded, every photo decoded and prepared,
  the journal written and fsynced, the JSONL replaced). Printed with and without its model loading;
- model alone: `model.generate` over the same batches of processor outputs made beforehand and already on the device
  (the model loaded once, by the captioner's own `load_captioner`, one warm-up batch before the first round).

Fair by construction: both generate exactly `--max-new-tokens` tokens per caption. The model's generation config
(`generation_config.json`, which the command's `generate` reads as well) gets `min_new_tokens = max_new_tokens`, so
no caption ends early in either; checked: the command counts every caption as `hit_limit`, and every output of the
model alone is as long. Tokens/s are printed beside captions/s.

`--model DIR`: a Florence-2 directory (its files are linked, its generation config rewritten, in the temporary
directory). Default: the tiny random Florence-2 of `imgprep.tiny_models` (its figures are those of imgprep's own
work: the model is nearly free). `--full-size`: Florence-2-large's architecture (DaViT vision encoder with widths
256-2048 and depths 1,1,9,1; a BART-large language model, d_model 1024, 12+12 layers, 51289 tokens; 768x768 input,
577 image tokens) with random weights, saved in float16 as the released checkpoint is: speed does not depend on the
weights. Goal on a GPU: command/model >= 0.9 (by the medians, model loading left out)."""
import argparse, os, shutil, statistics, tempfile, time
from pathlib import Path

import matplotlib, skimage
from PIL import Image

import imgprep.captioning as C
from imgprep.core import JSONL_NAME, dumps_record, logger
from imgprep.images import load_rgb
from imgprep.models import pick_device, pick_dtype, quiet_libraries
from imgprep.testing import hub_offline
from imgprep.tiny_models import RANDOM_MARK, byte_bpe, tiny_models

SK = Path(skimage.__file__).parent/'data'
PHOTOS = [SK/f for f in ('astronaut.png', 'coffee.png', 'chelsea.png', 'rocket.jpg', 'motorcycle_left.png', 'hubble_deep_field.jpg',
                         'retina.jpg')] + [Path(matplotlib.get_data_path())/'sample_data'/'grace_hopper.jpg']
BIG = 12_000_000 # pixels of a photo with --big

def scaled(im:Image.Image, pixels:int)->Image.Image:
    "`im` resized, its aspect kept, to about `pixels` pixels."
    k = (pixels/(im.width*im.height))**.5
    return im.resize((round(im.width*k), round(im.height*k)), Image.LANCZOS)

def write_photos(d:Path, n:int, big:bool)->tuple: # (the JSONL, the photos' paths)
    "`n` JPEGs under `d/photos` and their Stage 1 JSONL at `d/approved_image_dataset.jsonl`."
    (d/'photos').mkdir(parents=True)
    srcs = [Image.open(p).convert('RGB') for p in PHOTOS]
    if big: srcs = [scaled(im, BIG) for im in srcs]
    recs = []
    for i in range(n):
        im,name = srcs[i % len(srcs)],PHOTOS[i % len(PHOTOS)].stem
        im.save(d/'photos'/f'{i:05d}_{name}.jpg', quality=90)
        recs.append(dict(image_id=f'{i:05d}_{name}', image_path=f'photos/{i:05d}_{name}.jpg', caption=f'a photo of {name}' if i % 2 else '',
                         height=im.height, width=im.width))
    (d/JSONL_NAME).write_bytes(b''.join(dumps_record(r) for r in recs))
    return d/JSONL_NAME, [d/r['image_path'] for r in recs]

def full_florence2(out:Path):
    "Florence-2-large's architecture with random weights and a processor at its sizes (768x768, a 51289-token BART-like vocabulary), in `out`."
    import torch
    from transformers import (BartConfig, CLIPImageProcessorPil, Florence2Config, Florence2ForConditionalGeneration,
                              Florence2Processor, RobertaTokenizer)
    specials = ['<s>', '<pad>', '</s>', '<unk>', '<mask>', '<image>']
    vocab,merges = byte_bpe([])
    vocab = list(vocab) + [f'<x{i}>' for i in range(51289 - len(vocab) - len(specials))] + specials  # the real vocabulary's size: the LM head's cost
    vocab = {t: i for i,t in enumerate(vocab)}
    tok = RobertaTokenizer(vocab=vocab, merges=merges, extra_special_tokens={'image_token': '<image>'})
    ip = CLIPImageProcessorPil(size={'height': 768, 'width': 768}, do_center_crop=False, resample=3, image_seq_length=577,
                               image_mean=[0.485, 0.456, 0.406], image_std=[0.229, 0.224, 0.225])
    ids = {t: vocab[t] for t in ('<s>', '<pad>', '</s>', '<image>')}
    text = BartConfig(vocab_size=len(vocab), d_model=1024, encoder_layers=12, decoder_layers=12, encoder_attention_heads=16,
                      decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096, max_position_embeddings=1024,
                      bos_token_id=ids['<s>'], pad_token_id=ids['<pad>'], eos_token_id=ids['</s>'], decoder_start_token_id=ids['</s>'],
                      forced_bos_token_id=ids['<s>'])
    vision = dict(depths=[1, 1, 9, 1], embed_dim=[256, 512, 1024, 2048], num_heads=[8, 16, 32, 64], num_groups=[8, 16, 32, 64],
                  window_size=12, projection_dim=1024, drop_path_rate=0.0)
    cfg = Florence2Config(vision_config=vision, text_config=text.to_dict(), image_token_id=ids['<image>'])
    setattr(cfg, RANDOM_MARK, True)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Florence2ForConditionalGeneration(cfg).eval().half()
    Florence2Processor(image_processor=ip, tokenizer=tok).save_pretrained(out)
    model.save_pretrained(out)
    return sum(p.numel() for p in model.parameters())

def forced(src:Path, out:Path, tokens:int)->Path:
    "A copy of the model directory `src` (files linked) whose generation config makes every caption exactly `tokens` long."
    from transformers import AutoConfig, GenerationConfig
    out.mkdir()
    for f in src.iterdir():
        if f.name != 'generation_config.json': (out/f.name).symlink_to(f.resolve())
    try: g = GenerationConfig.from_pretrained(src)
    except OSError: g = GenerationConfig.from_model_config(AutoConfig.from_pretrained(src))
    g.min_new_tokens = g.max_new_tokens = tokens
    g.save_pretrained(out)
    return out

FIXED = dict(loading=[], hashing=[]) # the command's costs paid once per run, whatever its size: the model loaded, its weights hashed for the record

def _timed(what:str, f):
    "`f`, its time added to `FIXED[what]`."
    def timed(*a, **kw):
        t = time.perf_counter()
        try: return f(*a, **kw)
        finally: FIXED[what].append(time.perf_counter() - t)
    return timed
C.load_captioner = _timed('loading', C.load_captioner)  # run_caption looks both up when it calls them (in this process)
C.caption_settings = _timed('hashing', C.caption_settings)

def command(jsonl:Path, work:Path, model:Path, a)->tuple:
    "(seconds, {loading: s, hashing: s}, counters) of one `run_caption` on a fresh copy of the JSONL."
    if work.exists(): shutil.rmtree(work)
    work.mkdir()
    shutil.copy(jsonl, work/JSONL_NAME)
    for v in FIXED.values(): v.clear()
    t = time.perf_counter()
    c = C.run_caption(work/JSONL_NAME, 'florence2', model=str(model), max_new_tokens=a.max_new_tokens, batch_size=a.batch_size,
                      images_root=jsonl.parent, device=a.device, dtype=a.dtype)
    return time.perf_counter() - t, {k: sum(v) for k,v in FIXED.items()}, c

def ready_batches(model, proc, paths:list, bs:int)->list:
    "The processor's outputs for `paths`, batch by batch, on the model's device in its dtype, as `caption_images` makes them."
    images = [load_rgb(p) for p in paths]
    return [{k: v.to(model.device, model.dtype if v.is_floating_point() else v.dtype) for k,v in C.florence2_inputs(proc, images[i:i+bs], C.FLORENCE2.default_prompt).items()}
            for i in range(0, len(images), bs)]

def model_alone(model, batches:list, tokens:int)->float:
    "Seconds of greedy `generate` over `batches`, as `caption_images` calls it; every output checked to be `tokens` long."
    import torch
    t = time.perf_counter()
    with torch.inference_mode():
        for x in batches:
            out = model.generate(**x, max_new_tokens=tokens, do_sample=False, num_beams=1)
            assert out.shape[1] - 1 == tokens, out.shape  # the decoder's start token, then the caption
    if model.device.type == 'cuda': torch.cuda.synchronize()
    return time.perf_counter() - t

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--model', default=None, help='a Florence-2 directory (default: the tiny random one)')
    p.add_argument('--full-size', action='store_true', help="Florence-2-large's architecture with random weights")
    p.add_argument('--n', type=int, default=32, help='photos')
    p.add_argument('--batch-size', type=int, default=8)
    p.add_argument('--max-new-tokens', type=int, default=32, help='tokens of every caption, in both')
    p.add_argument('--rounds', type=int, default=3)
    p.add_argument('--device', default='auto'); p.add_argument('--dtype', default='auto')
    p.add_argument('--big', action='store_true', help='photos scaled to 12 MP')
    a = p.parse_args()
    import torch
    logger.setLevel('ERROR')  # every caption hits the limit on purpose: its warning would be printed n times
    quiet_libraries()
    dev = pick_device(a.device)
    with tempfile.TemporaryDirectory(prefix='imgprep_bench_caption_') as tmp, hub_offline():
        tmp = Path(tmp)
        t = time.perf_counter()
        if a.model: src,what = Path(a.model),f'{a.model}'
        elif a.full_size: n = full_florence2(tmp/'florence2-large'); src,what = tmp/'florence2-large',f'Florence-2-large architecture, random weights ({n/1e6:.0f} M parameters, float16 file)'
        else: src,what = tiny_models(tmp/'tiny', ('florence2',))['florence2'],'tiny random Florence-2 (imgprep.tiny_models)'
        model_dir = forced(src, tmp/'model', a.max_new_tokens)
        jsonl,paths = write_photos(tmp/'data', a.n, a.big)
        mp = statistics.mean(Image.open(q).width*Image.open(q).height for q in paths)/1e6
        print(f'model: {what}; device {dev}, dtype {str(pick_dtype(a.dtype, dev)).removeprefix("torch.")}; torch threads {torch.get_num_threads()}')
        print(f'{a.n} photos (mean {mp:.1f} MP, JPEG), batch {a.batch_size}, {a.max_new_tokens} new tokens per caption in both '
              f'(min_new_tokens = max_new_tokens); set up in {time.perf_counter()-t:.1f} s', flush=True)
        model,proc = C.load_captioner(C.FLORENCE2, str(model_dir), a.device, a.dtype)
        t = time.perf_counter(); batches = ready_batches(model, proc, paths, a.batch_size); prep = time.perf_counter() - t
        model_alone(model, batches[:1], a.max_new_tokens)  # warm-up: allocator, kernels, threads
        load0 = os.getloadavg()
        runs = dict(command=[], fixed=[], alone=[])
        for r in range(a.rounds):
            for step in (('command', 'alone') if r % 2 == 0 else ('alone', 'command')):
                if step == 'alone': runs['alone'].append(model_alone(model, batches, a.max_new_tokens)); continue
                secs,fixed,c = command(jsonl, tmp/'work', model_dir, a)
                assert c['captioned'] == c['hit_limit'] == a.n, c  # every caption made, every one exactly max_new_tokens long
                runs['command'].append(secs); runs['fixed'].append(fixed)
            f = runs['fixed'][-1]
            print(f"round {r+1}: command {runs['command'][-1]:.2f} s (model loading {f['loading']:.2f} s, settings with the weights hashed "
                  f"{f['hashing']:.2f} s), model alone {runs['alone'][-1]:.2f} s", flush=True)
        less = [s - sum(f.values()) for s,f in zip(runs['command'], runs['fixed'])]
        tok = a.n*a.max_new_tokens
        def rate(ts): return (f'best {a.n/min(ts):8.3g}  median {a.n/statistics.median(ts):8.3g} captions/s  '
                              f'(median {tok/statistics.median(ts):8.3g} tokens/s)')
        print(f'command               {rate(runs["command"])}')
        print(f'command less fixed    {rate(less)}  (less model loading and weights hashing)')
        print(f'model alone           {rate(runs["alone"])}')
        print(f'decoding and preparing the photos alone (once, outside the rounds): {prep:.2f} s, {a.n/prep:.2f} photos/s')
        def ratio(ts): return (f'{statistics.median(runs["alone"])/statistics.median(ts):.2f}x of the medians, '
                               f'{min(runs["alone"])/min(ts):.2f}x of the bests, '
                               f'{min(x/y for x,y in zip(runs["alone"], ts)):.2f}-{max(x/y for x,y in zip(runs["alone"], ts)):.2f}x per round')
        print(f'ratio command/model alone: {ratio(runs["command"])}')
        print(f'ratio command less fixed/model alone: {ratio(less)}  (goal on a GPU: >= 0.9)')
        print(f'load average {" ".join(f"{x:.2f}" for x in load0)} before, {" ".join(f"{x:.2f}" for x in os.getloadavg())} after')

if __name__ == '__main__': main()

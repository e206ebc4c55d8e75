"""Check `imgprep.encoders.dinov3_pixels` against transformers' own DINOv3 image processor, which needs torchvision (no
CPU build on our machines, so this is a script to run where torchvision is installed, such as a GPU machine):

    python bench/check_dinov3_processor.py

Prints the largest absolute difference per image size (float32 rounding, ~1e-6, expected) and exits 1 above 1e-4."""
import sys
import numpy as np
from PIL import Image
from transformers import DINOv3ViTImageProcessorFast

from imgprep.encoders import dinov3_pixels, dinov3_preprocess_config
from imgprep.tiny_models import DINOV3_PREPROCESSOR

def photo_like(w:int, h:int, rng)->Image.Image:
    "Smooth gradients plus noise, like a photograph."
    yy,xx = np.mgrid[0:h, 0:w]
    base = np.stack([np.sin(xx/37), np.cos(yy/23), np.sin((xx+yy)/51)], -1)*100 + 128
    return Image.fromarray(np.clip(base + rng.normal(0, 20, base.shape), 0, 255).astype(np.uint8))

def main():
    cfg = dinov3_preprocess_config(DINOV3_PREPROCESSOR)
    proc = DINOv3ViTImageProcessorFast(**{k: v for k,v in DINOV3_PREPROCESSOR.items() if k != 'image_processor_type'})
    rng,worst = np.random.default_rng(0),0.0
    for w,h in [(1024, 1024), (1216, 832), (640, 480), (224, 224), (100, 300)]:
        img = photo_like(w, h, rng)
        ref = proc(images=img, return_tensors='pt')['pixel_values'][0]
        diff = float((dinov3_pixels(img, cfg) - ref).abs().max())
        worst = max(worst, diff)
        print(f'{w}x{h}: max |imgprep - transformers| = {diff:.2e}')
    sys.exit(worst > 1e-4)

if __name__ == '__main__': main()

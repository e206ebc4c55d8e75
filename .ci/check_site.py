"""Check the site nbdev_docs rendered into _docs/: every notebook in nbs/ and every page in nbs/sidebar.yml has its
page, and every exploration page shows at least one figure (an <img> whose file is a real PNG, JPEG or SVG, or an
inline data image). `python .ci/check_site.py` prints one line and exits 1 on the first kind of problem found."""
import base64, re, sys
from html.parser import HTMLParser
from pathlib import Path

root = Path(__file__).resolve().parent.parent
nbs,docs = root/'nbs',root/'_docs'

def page(src:str)->str:
    "The page nbdev makes for a source file relative to nbs/: `06_stage2.ipynb` -> `stage2.html`, numeric prefix dropped."
    p = Path(src)
    return str(p.with_name(re.sub(r'^\d+[a-zA-Z0-9]*_', '', p.name.lower())).with_suffix('.html'))

sources = {str(p.relative_to(nbs)) for p in nbs.rglob('*.ipynb') if not any(s.startswith(('_', '.')) for s in p.relative_to(nbs).parts)}
sources |= set(re.findall(r'^\s*-\s+([\w./-]+\.(?:ipynb|qmd|md))\s*$', (nbs/'sidebar.yml').read_text(), re.M))
missing = sorted(f'{s} -> _docs/{page(s)}' for s in sources if not (docs/page(s)).is_file())

class Imgs(HTMLParser):
    def __init__(self): super().__init__(); self.srcs = []
    def handle_starttag(self, tag, attrs):
        if tag == 'img': self.srcs.append(dict(attrs).get('src') or '')

MAGIC = (b'\x89PNG\r\n\x1a\n', b'\xff\xd8\xff', b'<svg', b'<?xml')
def real_image(html:Path, src:str)->bool:
    "Is `src` (as written in `html`) an image with content: a file or data URI of at least 1 KB that starts like one?"
    if src.startswith('data:image/'):
        try: data = base64.b64decode(src.split(',', 1)[1])
        except Exception: return False
    else:
        f = (html.parent/src.split('#')[0].split('?')[0])
        if src.startswith(('http:', 'https:', '//')) or not f.is_file(): return False
        data = f.read_bytes()
    return len(data) >= 1024 and data.lstrip().startswith(MAGIC)

no_figure = []
for s in sorted(sources):
    if not re.match(r'\d+[a-zA-Z0-9]*_explore_', Path(s).name) or not (docs/page(s)).is_file(): continue
    p = Imgs(); p.feed((docs/page(s)).read_text())
    if not any(real_image(docs/page(s), src) for src in p.srcs): no_figure.append(page(s))

if missing: sys.exit(f'site: {len(missing)} pages missing from _docs (run nbdev_docs): {", ".join(missing)}')
if no_figure: sys.exit(f'site: exploration pages without a figure (commit the notebooks with their outputs): {", ".join(no_figure)}')
n = sum(1 for s in sources if re.match(r'\d+[a-zA-Z0-9]*_explore_', Path(s).name))
print(f'site: {len(sources)} pages present in _docs, {n} exploration pages with figures')

"""Fail when a chapter imports a module that a later chapter defines, so the book reads (and runs) in order.
Chapters are nbs/*.ipynb in file-name order; a module is defined by the chapter whose `#| default_exp` names it.
The companion test notebooks in nbs/tests/ may import anything. Usage: python .ci/check_order.py"""
import json, re, sys
from pathlib import Path

nbs = sorted(Path(__file__).resolve().parent.parent.glob('nbs/*.ipynb'))
src = {p: '\n'.join(''.join(c['source']) for c in json.loads(p.read_text())['cells'] if c['cell_type'] == 'code') for p in nbs}
defined = {m: i for i,p in enumerate(nbs) for m in re.findall(r'^#\| default_exp (\w+)', src[p], re.M)}
bad = [(p.name, m, nbs[defined[m]].name) for i,p in enumerate(nbs)
       for m in sorted(set(re.findall(r'(?:from|import) imgprep\.(\w+)', src[p]))) if defined.get(m, -1) > i]
for name, m, later in bad: print(f'{name} imports imgprep.{m}, which the later {later} defines')
sys.exit(1 if bad else 0)

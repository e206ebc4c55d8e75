"""Run chapters as `nbdev_test` does (the `slow` and `cuda` cells and `#| eval: false` ones skipped) and store every code
cell's outputs in the notebook, sources untouched, then nbdev_clean it. `python .ci/store_outputs.py nbs/06c_commit.ipynb ...`
A chapter's outputs must not depend on the run (no temporary paths, timings or progress bars): rerunning this
leaves no diff. The exploration notebooks run on demo data instead: `.ci/explore_outputs.py`."""
import json, os, re, subprocess, sys
from pathlib import Path
from execnb.nbio import read_nb
from execnb.shell import CaptureShell

root = Path(__file__).resolve().parent.parent
SKIP = re.compile(r'^#\|\s*(?:eval:\s*false|slow\b|cuda\b)', re.M)

def skipped(cell)->bool:
    "Cells `nbdev_test` leaves out by default, and the export call."
    return cell.cell_type != 'code' or bool(SKIP.search(cell.source)) or 'nbdev_export(' in cell.source

def plain(o):
    "An execnb output as plain JSON."
    return json.loads(json.dumps(o, default=lambda x: dict(x)))

def store(p:Path):
    "Run `p` in its folder and write its outputs into it."
    nb = read_nb(p)
    for c in nb.cells:  # execnb only replaces the outputs of a cell that shows something now
        if c.cell_type == 'code': c.outputs = []
    k = CaptureShell(p)
    cwd = os.getcwd()
    os.chdir(p.parent)
    try: k.run_all(nb, exc_stop=True, preproc=skipped)
    finally: os.chdir(cwd)
    raw = json.loads(p.read_text())
    for c,ran in zip(raw['cells'], nb.cells):
        if c['cell_type'] == 'code': c['outputs'] = [] if skipped(ran) else plain(ran.get('outputs', []))
    p.write_text(json.dumps(raw, indent=1, ensure_ascii=False, sort_keys=True) + '\n')
    subprocess.run(['nbdev_clean', '--fname', str(p)], check=True, cwd=root)
    print(f'{p.relative_to(root)}: outputs stored')

if __name__ == '__main__':
    if len(sys.argv) == 2: store(Path(sys.argv[1]).resolve())
    else:  # one process per chapter: chapters must not share a process's logging, working directory or imports
        for a in sys.argv[1:]: subprocess.run([sys.executable, __file__, a], check=True)

"""Refresh the committed outputs of the exploration notebooks: run each on the demo data with papermill and store
its outputs in the notebook, sources untouched, then nbdev_clean it. `python .ci/explore_outputs.py [NOTEBOOK ...]`
(default: nbs/1[0-9]_explore_*.ipynb). The outputs must not depend on the run: rerunning this leaves no diff."""
import json, subprocess, sys, tempfile
from pathlib import Path
import papermill

root = Path(__file__).resolve().parent.parent
nbs = [Path(p).resolve() for p in sys.argv[1:]] or sorted((root/'nbs').glob('1[0-9]_explore_*.ipynb'))
for p in nbs:
    with tempfile.TemporaryDirectory() as d:
        papermill.execute_notebook(str(p), f'{d}/out.ipynb', cwd=str(p.parent), kernel_name='python3', progress_bar=False)
        ran = {c['id']: c for c in json.loads(Path(f'{d}/out.ipynb').read_text())['cells']}
    nb = json.loads(p.read_text())
    for c in nb['cells']:
        if c['cell_type'] == 'code': c['outputs'] = ran[c['id']].get('outputs', [])
    p.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + '\n')
    subprocess.run(['nbdev_clean', '--fname', str(p)], check=True, cwd=root)
    print(f'{p.relative_to(root)}: outputs stored')

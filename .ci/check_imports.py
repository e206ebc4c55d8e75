"""Fail when a notebook code cell mixes imports with other code: nbdev's docs processor runs every cell
that imports, out of context, so such a cell breaks (or slows) the docs build. Usage: python .ci/check_imports.py nbs/*.ipynb"""
import ast, json, sys
bad = 0
for fn in sys.argv[1:]:
    nb = json.load(open(fn))
    for i, c in enumerate(nb['cells']):
        if c['cell_type'] != 'code': continue
        src = ''.join(c['source']) if isinstance(c['source'], list) else c['source']
        lines = [l for l in src.split('\n') if not l.lstrip().startswith(('#|', '%', '!'))]
        try: tree = ast.parse('\n'.join(lines))
        except SyntaxError: continue
        has_imp = any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in ast.walk(tree))
        other = [n for n in tree.body if not isinstance(n, (ast.Import, ast.ImportFrom))]
        if has_imp and other and 'nbdev_export()' not in src and '#| export' not in src:
            bad += 1; print(f'{fn}: cell {i} mixes imports with code:\n  ' + src.split(chr(10))[0][:100])
sys.exit(1 if bad else 0)

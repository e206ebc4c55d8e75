"""Fail when a chapter stops teaching: an export cell over 60 lines, a chapter cell that ends in a value but keeps no
output (run it with .ci/store_outputs.py), or a link to a notebook or page that does not exist; and when a link in
README.md would not work from a clone: one to a file the clone does not have, or to the site's address (settings.ini's
doc_host and doc_baseurl), which nothing publishes.
Usage: python .ci/check_cells.py [NOTEBOOK ...]  (default: every chapter nbs/*.ipynb and test notebook nbs/tests/*.ipynb,
and README.md; the output rule applies to chapters only)."""
import ast, configparser, json, re, sys
from pathlib import Path

MAX_EXPORT = 60
NO_VALUE = {'print', 'display', 'show_doc', 'test_eq', 'test_ne', 'test_close', 'test_fail', 'test_is', 'test_warns',
            'test_stdout', 'test_eq_type', 'test_shuffled', 'test_fig_exists', 'test', 'nbdev_export', 'show', 'filterwarnings',
            'simplefilter', 'seed', 'manual_seed', 'set_num_threads', 'mkdir', 'unlink', 'rmtree', 'close', 'append', 'extend',
            'update', 'sleep', 'setLevel', 'chmod', 'chdir', 'touch', 'register_kind', 'savefig', 'tight_layout'}  # calls that return None
SKIPPED = re.compile(r'^#\|\s*(?:hide|export\w*|eval:\s*false|slow\b|cuda\b)', re.M)
LINK = re.compile(r'\]\(([^)\s#]+\.(?:ipynb|qmd))(?:#[^)]*)?\)|\]\(([^)\s#]+\.html)(?:#[^)]*)?\)')

def source(c)->str: return ''.join(c['source']) if isinstance(c['source'], list) else c['source']

def ends_in_value(src:str)->bool:
    "True when the cell's last statement is an expression Jupyter would show (not a None-returning call, not `;`-silenced)."
    lines = [l for l in src.split('\n') if not l.lstrip().startswith(('#|', '%', '!'))]
    code = '\n'.join(lines).rstrip()
    if not code or code.endswith(';'): return False
    try: body = ast.parse(code).body
    except SyntaxError: return False
    if not body or not isinstance(last := body[-1], ast.Expr): return False
    v = last.value
    if isinstance(v, ast.Constant) and isinstance(v.value, str): return False  # a bare string is a comment
    if isinstance(v, ast.Call):
        f = v.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ''
        if name in NO_VALUE or name.startswith('test_') or (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == 'plt'): return False
    return True

def page(p:Path)->str:
    "The site's name for a notebook's page: nbdev drops the number, `05a_pool.ipynb` is `pool.html`."
    return re.sub(r'^\d+[a-z]?_', '', p.stem)

def dangling(p:Path, target:str)->bool:
    "True when a link inside the book names a notebook (or its page) that does not exist."
    if '://' in target or target.startswith('mailto:'): return False
    t = (p.parent/target).resolve()
    if t.suffix in ('.ipynb', '.qmd'): return not t.exists()
    return not any(page(q) == t.stem for q in t.parent.glob('*.*') if q.suffix in ('.ipynb', '.qmd', '.md'))

def problems(p:Path, chapter:bool)->list:
    out = []
    for i,c in enumerate(json.loads(p.read_text())['cells']):
        src = source(c)
        if c['cell_type'] == 'markdown':
            for m in LINK.finditer(src):
                if dangling(p, target := m.group(1) or m.group(2)): out.append(f'{p}: cell {i} links to {target}, which does not exist')
            continue
        if c['cell_type'] != 'code': continue
        n = len(src.split('\n'))
        if re.match(r'#\|\s*export', src) and n > MAX_EXPORT:
            out.append(f'{p}: cell {i} exports {n} lines (at most {MAX_EXPORT}); split it into functions a reader meets one at a time')
        if chapter and not SKIPPED.search(src) and ends_in_value(src) and not c.get('outputs'):
            out.append(f'{p}: cell {i} ends in a value but keeps no output; run python .ci/store_outputs.py {p}')
    return out

def export_sizes(paths:list)->list:
    "Lines of every export cell of the chapters among `paths`."
    return [len(source(c).split('\n')) for p in paths if p.parent.name != 'tests' for c in json.loads(p.read_text())['cells']
            if c['cell_type'] == 'code' and re.match(r'#\|\s*export', source(c))]

def size_report(sizes:list)->str:
    "The median export cell, and how many sit near the cap: a cell is one idea, and most ideas are short."
    if not sizes: return 'no export cells'
    s = sorted(sizes)
    median = s[len(s)//2] if len(s) % 2 else (s[len(s)//2 - 1] + s[len(s)//2])/2
    return f'{len(s)} export cells: median {median:g} lines, {sum(n > 30 for n in s)} over 30, {sum(n >= 50 for n in s)} at 50-{MAX_EXPORT}'

MD_LINK = re.compile(r'\]\(<?([^)\s>]+)>?(?:\s+"[^"]*")?\)')

def readme_problems(
    readme:Path, # README.md at the top of the clone
    site:str, # The site's address, which no link may use until the site is published
)->list:
    "Links in README.md that do not work from a clone: to a file it does not have, or to the unpublished site."
    text = re.sub(r'^```.*?^```', '', readme.read_text(), flags=re.M|re.S)  # code blocks hold no links
    out = []
    for target in MD_LINK.findall(text):
        path = target.split('#')[0]
        if target.startswith(site): out.append(f'{readme}: links to {target}, on a site nothing publishes; link the page\'s source under nbs/ (nbs/links.lua does it for the links of nbs/index.ipynb)')
        elif path and not re.match(r'[a-z][a-z0-9+.-]*:', path) and not (readme.parent/path).exists():
            out.append(f'{readme}: links to {target}, which a clone does not have')
    return out

if __name__ == '__main__':
    root = Path(__file__).resolve().parent.parent
    paths = [Path(a) for a in sys.argv[1:]] or sorted(root.glob('nbs/*.ipynb')) + sorted(root.glob('nbs/tests/*.ipynb'))
    bad = [msg for p in paths for msg in problems(p.resolve(), p.resolve().parent.name != 'tests')]
    if not sys.argv[1:]:
        cfg = configparser.ConfigParser(); cfg.read(root/'settings.ini')
        bad += readme_problems(root/'README.md', cfg['DEFAULT']['doc_host'].rstrip('/') + cfg['DEFAULT']['doc_baseurl'])
    print('\n'.join(bad) or f'check_cells: {len(paths)} notebooks teach: short export cells, results kept, links that resolve; README.md links work from a clone')
    if not sys.argv[1:]: print(f'check_cells: {size_report(export_sizes([p.resolve() for p in paths]))}')
    sys.exit(1 if bad else 0)

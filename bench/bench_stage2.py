"""Stage 2 benchmark: the dinov3 extraction pass against a bare loop that only parses the same JSONL, and the peak
memory of the run.

    python bench/bench_stage2.py [--n 10000] [--rounds 3] [--dir /tmp/imgprep_bench_stage2]

One synthetic Stage 1 JSONL of N records with inline 1024-float DINOv3 embeddings is written (`testing.make_stage1`,
no images: the dinov3 pass needs none when every embedding is inline). Every figure comes from a child process,
timed by the wall clock from start to exit (interpreter start included), its peak RSS read from the rusage that
`os.wait4` returns for that child (ru_maxrss). Rounds are interleaved, so a busy machine slows all alike; best and
median are reported. The children:

- bare json, bare orjson: `for line in open(jsonl, 'rb'): json.loads(line)` (the stdlib), and the same with orjson
- iter_jsonl: `core.iter_jsonl` (orjson plus bad-line accounting), which Stage 2 reads with
- extract: `imgprep_stage2 --pass dinov3` on a fresh copy: one fsynced .npy per record, the JSONL left as it is
- extract+migrate: `--pass dinov3,migrate` on a fresh copy: the same plus v2 records, the Stage 1 backup and the merge
- rerun: `--pass dinov3` again over the finished tree: nothing to write

Extraction writes one fsynced .npy per record (`core.atomic_save_npy`), so the fsync latency of the disk bounds it;
the median time of a fsynced 4 KB write and rename is measured in every round and reported beside the figures.

Peak memory is measured at N/4 records as well, to show that it does not grow with the number of records."""
import argparse, os, shutil, statistics, subprocess, sys, time
from pathlib import Path

# This process imports nothing heavy and holds no data: on Linux a child's ru_maxrss starts from the RSS of the
# process that forked it, so a large parent would inflate every child's figure. The data is made by a child too.
MAKE = "import sys\nfrom imgprep.testing import make_stage1\nprint(make_stage1(sys.argv[1], n=int(sys.argv[2]), with_images=False).jsonl)"
BARE = "import json, sys\nfor line in open(sys.argv[1], 'rb'): json.loads(line)"
BARE_ORJSON = "import orjson, sys\nfor line in open(sys.argv[1], 'rb'): orjson.loads(line)"
ITER = "import sys\nfrom imgprep.core import iter_jsonl\nfor _ in iter_jsonl(sys.argv[1]): pass"
STAGE2 = "from imgprep.stage2 import main; main()"

def child(code:str, *args)->tuple:
    "(wall seconds, peak RSS in MiB, stdout) of `python -c code args`."
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, '-c', code, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read().decode()
    _,status,ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode: raise SystemExit(f'child failed ({p.returncode}): {code} {args}')
    return time.perf_counter()-t, ru.ru_maxrss/1024, out

def stage2_args(jsonl:Path, passes:str)->list: return ['--jsonl', jsonl, '--pass', passes, '--min-free-gb', 0]

def fresh_copy(src:Path, d:Path)->Path:
    "A copy of the Stage 1 JSONL alone in a new directory `d`."
    if d.exists(): shutil.rmtree(d)
    d.mkdir(parents=True)
    return Path(shutil.copy(src, d/src.name))

def measure(src:Path, work:Path, rounds:int)->dict:
    "Interleaved rounds of every child; name -> list of (seconds, MiB)."
    res = {k: [] for k in ('bare json', 'bare orjson', 'iter_jsonl', 'extract', 'extract+migrate', 'rerun', 'fsync ms')}
    for r in range(rounds):
        res['fsync ms'].append((fsync_ms(work/'fsync'), 0))
        res['bare json'].append(child(BARE, src)[:2])
        res['bare orjson'].append(child(BARE_ORJSON, src)[:2])
        res['iter_jsonl'].append(child(ITER, src)[:2])
        j = fresh_copy(src, work/'extract')
        s,m,out = child(STAGE2, *stage2_args(j, 'dinov3'))
        assert 'new_dinov3=' in out, out
        res['extract'].append((s, m))
        res['rerun'].append(child(STAGE2, *stage2_args(j, 'dinov3'))[:2])
        res['extract+migrate'].append(child(STAGE2, *stage2_args(fresh_copy(src, work/'migrate'), 'dinov3,migrate'))[:2])
    return res

def fsync_ms(d:Path, n:int=200)->float:
    "Median milliseconds to write, fsync and rename a 4 KB file in `d`, as `core.atomic_save_npy` does per record."
    d.mkdir(parents=True, exist_ok=True)
    times = []
    for i in range(n):
        t = time.perf_counter()
        with open(d/f'.{i}.tmp', 'wb') as f: f.write(b'x'*4224); f.flush(); os.fsync(f.fileno())
        os.replace(d/f'.{i}.tmp', d/f'{i}.npy')
        times.append(time.perf_counter()-t)
    shutil.rmtree(d)
    return 1000*statistics.median(times)

def report(n:int, res:dict, size_mb:float):
    print(f'{n:,} records, Stage 1 JSONL {size_mb:,.0f} MB')
    print(f"{'':17} {'best s':>8} {'median s':>9} {'records/s':>10} {'MB/s':>7} {'peak RSS MiB':>13}")
    for k,v in res.items():
        if k == 'fsync ms': continue
        secs = [s for s,_ in v]
        best,med = min(secs), statistics.median(secs)
        print(f'{k:17} {best:8.2f} {med:9.2f} {n/best:10,.0f} {size_mb/best:7,.0f} {max(m for _,m in v):13,.0f}')
    ms = statistics.median(s for s,_ in res['fsync ms'])
    print(f'one fsynced 4 KB write+rename (core.atomic_save_npy, once per extracted record): {ms:.2f} ms median over the rounds, '
          f'{n*ms/1000:.1f} s of the extract run, a ceiling of {1000/ms:,.0f} records/s')
    for b in ('bare json', 'bare orjson'):
        bare = min(s for s,_ in res[b])
        print(f'against the {b} loop: ' + ', '.join(f'{k} {bare/min(s for s,_ in res[k]):.2f}x' for k in ('extract', 'extract+migrate', 'rerun')))

def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--n', type=int, default=10_000)
    p.add_argument('--rounds', type=int, default=3)
    p.add_argument('--dir', default='/tmp/imgprep_bench_stage2')
    a = p.parse_args()
    base = Path(a.dir)
    if base.exists(): shutil.rmtree(base)
    peaks = {}
    for n in (a.n//4, a.n):
        secs,_,out = child(MAKE, base/f'src{n}', n)
        jsonl = Path(out.strip())
        print(f'made {n:,} Stage 1 records in {secs:.1f}s')
        size_mb = jsonl.stat().st_size/1e6
        res = measure(jsonl, base/f'work{n}', a.rounds if n == a.n else 1)
        peaks[n] = {k: max(m for _,m in v) for k,v in res.items()}
        if n == a.n: report(n, res, size_mb)
    small,big = a.n//4, a.n
    print(f'peak RSS of the stage 2 runs at {small:,} and {big:,} records (MiB): ' +
          ', '.join(f'{k} {peaks[small][k]:.0f} -> {peaks[big][k]:.0f}' for k in ('extract', 'extract+migrate', 'rerun')))
    shutil.rmtree(base)

if __name__ == '__main__': main()

"""Grid kernels forked from one warm process (`checkeval.reproduction.kernels`) against kernels started as fresh processes, the
baseline (what the grid did before: each kernel imports the library, torch and transformers and loads smollm2's weights).

Both ways run the same grid points (`--blocks` of `configs/grid.yaml`, forced, with the grid's own runner and two workers)
from an empty judge cache and empty run folders of their own (the converted model is shared), one after the other, best of
`--repeats`. Reported: the grid's wall seconds each way, the ratio, the points' own seconds added up, and how many of the
answers the two ways wrote are the same (every field but the measured `latency_s`: all of them should be). The last line
is one JSON object.

    python bench/kernel_fork.py [--blocks methods-summeval,methods-hanna,checkeval-qags,seal-three-runs] [--repeats 1]
"""
from __future__ import annotations
import argparse, contextlib, io, json, math, os, platform, sys, tempfile, time, unittest.mock
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def answers(runs:Path) -> dict:
    "Every answer under `runs`: (file, line) -> the record less its measured latency."
    out = {}
    for f in sorted(runs.rglob('answers.jsonl')):
        for k, line in enumerate(f.read_text().splitlines()):
            rec = json.loads(line); rec.pop('latency_s', None)
            out[(str(f.relative_to(runs)).split('--')[0], k)] = rec
    return out


def run(points, mode:str, root:Path, models:Path) -> tuple[float, float, dict]:
    "Run `points` in `mode` ('fresh' or 'fork') under `root`: (grid seconds, the points' seconds added up, answers)."
    from checkeval.reproduction.execution import run_grid
    (root/'cache').mkdir(parents=True)
    (root/'cache'/'models').symlink_to(models)
    env = {'CHECKEVAL_CACHE': str(root), 'CHECKEVAL_RUNS': str(root/'runs'), 'CHECKEVAL_KERNEL_FORK': '1' if mode == 'fork' else '0'}
    t0 = time.perf_counter()
    with unittest.mock.patch.dict(os.environ, env), contextlib.redirect_stdout(io.StringIO()):
        res = run_grid(points, yes=True, force=True, jobs=2, progress=False)
    dt = time.perf_counter() - t0
    bad = [r for r in res if r['status'] != 'ok']
    if bad: raise SystemExit(f'{mode}: {len(bad)} point(s) failed, first: {bad[0]["point"]}: {bad[0].get("error", "")[:300]}')
    return dt, sum(r['seconds'] for r in res), answers(root/'runs')


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--blocks', default='methods-summeval,methods-hanna,checkeval-qags,seal-three-runs')
    ap.add_argument('--repeats', type=int, default=1)
    args = ap.parse_args(argv)
    from checkeval.reproduction.grid import load_grid
    from checkeval.judges import get_judge
    from checkeval.judges.builtin import ModelFileError
    from checkeval.settings import models_dir
    blocks = args.blocks.split(',')
    points = [p for p in load_grid() if p.block in blocks]
    if not points: raise SystemExit(f'no grid points in blocks {blocks}')
    try: get_judge('smollm2', cache=False)._loaded()            # converted once, shared by both ways
    except ModelFileError as e: raise SystemExit(f'smollm2 is not installed: {e}')
    best, points_s, out = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix='kernel-fork-bench-') as tmp:
        for rep in range(max(1, args.repeats)):
            for mode in ('fresh', 'fork'):
                dt, total, out[mode] = run(points, mode, Path(tmp)/f'{mode}-{rep}', models_dir())
                if dt < best.get(mode, math.inf): best[mode], points_s[mode] = dt, total
    a, b = out['fresh'], out['fork']
    same = sum(a[k] == b.get(k) for k in a) if a.keys() == b.keys() else 0
    res = dict(bench='kernel_fork', model='smollm2 (SmolLM2-135M-Instruct, fp32, CPU)', blocks=blocks, points=len(points),
               workers=2, answers=len(b), same_answers=same, repeats=max(1, args.repeats),
               seconds_fresh=round(best['fresh'], 1), seconds_fork=round(best['fork'], 1),
               ratio=round(best['fresh']/best['fork'], 3),
               point_seconds_fresh=round(points_s['fresh'], 1), point_seconds_fork=round(points_s['fork'], 1),
               cpu=platform.processor() or platform.machine(), cores=os.cpu_count(), python=platform.python_version(),
               goal='quicker than fresh kernels, every answer the same (all but its measured latency)')
    res['goal_met'] = bool(res['ratio'] > 1 and res['same_answers'] == res['answers'] > 0)
    print(json.dumps(res))


if __name__ == '__main__':
    main()

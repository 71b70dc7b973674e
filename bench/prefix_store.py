"""Two grid points that ask about the same summaries, each in a process of its own (here: a judge object of its own), with and
without the store of shared prefixes (`checkeval.judges.prefixstore`), the built-in `smollm2` judge on a CPU.

The points are CheckEval's two forms on the `--items` first summaries of SummEval (sample: whole documents, seed 0),
coherence: its grouped questions with replies held to a JSON schema (the yes-ratio run), then one question per request held
to yes/no (the P(yes) run). CheckEval's template puts the material first, so both points' prompts about one summary begin
with the same few hundred tokens. Modes: `off` (no store: the baseline, what the engine did before: each point computes
every prefix), `store` (an empty store: the first point computes and stores the prefixes' whole blocks, the second reads
them), and `alone` (the second point alone on an empty store: what it computes itself must be what it read, bit for bit).
Each mode has a judge cache and a store of its own; best of `--repeats`. Reported: seconds of both points per mode, the
ratio, how many of the second point's answers are the same bit for bit with and without reading (all must be), and how
many answers the store changes against the baseline (blocks are computed one after another instead of the whole prefix
at once: the last bits move, so a near tie may turn). The last line is one JSON object.

    python bench/prefix_store.py [--items 8] [--repeats 1]
"""
from __future__ import annotations
import argparse, json, math, os, platform, sys, tempfile
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FORMS = [('grouped', {}), ('p_yes', {'granularity': 'question', 'answer': 'choices'})]


def point(form, options, items, root, store:bool, cache):
    "Answers (form, item, question, reply, value, P(yes)) of one CheckEval form from a fresh judge, and the seconds it took."
    from checkeval.judges import get_judge
    from _smollm2 import checkeval_forms
    return checkeval_forms(get_judge('smollm2', cache=cache, progress=False, prefix_store=store), items, root, forms=[(form, options)])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--items', type=int, default=8)
    ap.add_argument('--repeats', type=int, default=1)
    args = ap.parse_args(argv)
    import torch
    import checkeval.judges.hf as hf
    from _smollm2 import summeval_sample
    items = summeval_sample(args.items)
    best, out, stores = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix='prefix-store-bench-') as tmp:
        for rep in range(max(1, args.repeats)):
            for mode in ('off', 'store', 'alone'):
                d = Path(tmp)/f'{mode}-{rep}'
                hf.prefix_store_dir = lambda d=d: d/'prefixes'          # an empty store per mode and repeat
                forms = FORMS[1:] if mode == 'alone' else FORMS
                ans, dt = [], 0.0
                for form, options in forms:
                    a, t = point(form, options, items, d, mode != 'off', d/f'{form}.sqlite')
                    ans += a; dt += t
                out[mode], best[mode] = ans, min(best.get(mode, math.inf), dt)
                stores[mode] = sum(f.stat().st_size for f in (d/'prefixes').glob('**/*.kv'))
    second = lambda xs: [x for x in xs if x[0] == 'p_yes']
    same_bits = sum(x == y for x, y in zip(second(out['store']), out['alone']))
    changed = sum(x[3] != y[3] or x[4] != y[4] for x, y in zip(out['off'], out['store']))
    dp = max((abs(x[5] - y[5]) for x, y in zip(out['off'], out['store']) if x[5] is not None and y[5] is not None), default=0.0)
    res = dict(bench='prefix_store', backend='hf', model='smollm2 (SmolLM2-135M-Instruct, fp32, CPU)', items=len(items),
               answers=len(out['store']), second_point_answers=len(out['alone']), second_point_same_bits=same_bits,
               answers_changed_vs_off=changed, max_p_yes_diff_vs_off=float(f'{dp:.3g}'), store_mb=round(stores['store']/2**20, 1),
               repeats=max(1, args.repeats), seconds_off=round(best['off'], 2), seconds_store=round(best['store'], 2),
               ratio=round(best['off']/best['store'], 3), cpu=platform.processor() or platform.machine(), torch=torch.__version__,
               threads=torch.get_num_threads(), python=platform.python_version(),
               goal='the two points quicker with the store; the second point reads what it would compute, bit for bit')
    res['goal_met'] = bool(res['ratio'] > 1 and same_bits == len(out['alone']) == len(second(out['store'])))
    print(json.dumps(res))


if __name__ == '__main__':
    main()

"""The copies of the KV cache on the `hf` backend's way from a shared prefix to a decoding batch, the built-in `smollm2`
judge on a CPU: each row's keys written once into a buffer with room (`checkeval.judges.attention.select_rows` and
`merge_caches`, what `checkeval.judges.hf` does) against transformers' cache methods, the baseline (what it did before:
`batch_select_indices`, the forward's concatenation, padding, concatenating the groups' rows, then `preallocate`; while
the baseline runs, the two functions are replaced by those steps in this process). Both run in the same process on the
same requests and must give the same numbers: the values and their layout in memory are the same.

The requests are CheckEval's on the `--items` first summaries of SummEval (sample: whole documents, seed 0), coherence, in
its two forms (one question per request held to yes/no: prefills after a shared prefix; the grouped questions with replies
held to a JSON schema: prefills and decoding of several groups in one batch), and SEEval's explanations of the same
summaries (requests that share nothing, decoded together). Each mode has a cache of its own; the modes alternate, best of
`--repeats`. Reported: seconds per mode, the ratio, and how many answers are the same bit for bit (reply text, value and
P(yes) equal: every answer should be). The last line is one JSON object.

    python bench/kv_copies.py [--items 4] [--repeats 2]
"""
from __future__ import annotations
import argparse, json, math, os, platform, sys, tempfile, time, warnings
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gqa_attention import run as checkeval_forms   # CheckEval's two forms on the same items, answers and seconds


def old_select(cache, rows, room):
    "The baseline's selection: transformers' `batch_select_indices` (the forward then concatenates the new keys)."
    import torch
    cache.batch_select_indices(torch.tensor(rows))
    return cache


def old_merge(caches, room):
    "The baseline's merge: each cache's layers padded, the rows concatenated into a new `DynamicCache` (`preallocate` follows)."
    import torch
    import torch.nn.functional as F
    from transformers import DynamicCache
    T = max(c.get_seq_length() for c in caches)
    pad = lambda x, n: F.pad(x, (0, 0, n, 0)) if n else x
    layers = [(torch.cat([pad(c.layers[l].keys, T - c.get_seq_length()) for c in caches]),
               torch.cat([pad(c.layers[l].values, T - c.get_seq_length()) for c in caches])) for l in range(len(caches[0].layers))]
    return DynamicCache(layers)


def run(judge, items, root):
    "Answers of CheckEval's two forms (`gqa_attention.run`), then of SEEval (method, item, reply, value), and the seconds they took."
    from checkeval.runs import evaluate
    answers, dt = checkeval_forms(judge, items, root)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        _, res = evaluate('seeval', 'summeval', judge, items=items, dimensions=['coherence'], seed=0, root=root/'seeval')
    answers += [('seeval', a.item_id, a.raw_text, a.value) for a in res.answers]
    return answers, dt + time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--items', type=int, default=4)
    ap.add_argument('--repeats', type=int, default=2)
    args = ap.parse_args(argv)
    import torch
    import checkeval.judges.hf as hf
    from checkeval.data import load_benchmark
    from checkeval.judges import get_judge
    from checkeval.judges.builtin import ModelFileError
    from checkeval.runs import select_items
    torch.set_num_threads(1)
    items = select_items(load_benchmark('summeval'), args.items, 'groups', 0)
    modes = {'copies': (old_select, old_merge), 'buffers': (hf.select_rows, hf.merge_caches)}
    best, out = {}, {}
    with tempfile.TemporaryDirectory(prefix='kv-copies-bench-') as tmp:
        for rep in range(max(1, args.repeats)):
            for mode, (sel, merge) in modes.items():
                try: judge = get_judge('smollm2', cache=Path(tmp)/f'{mode}-{rep}.sqlite', progress=False)
                except ModelFileError as e: raise SystemExit(f'smollm2 is not installed: {e}')
                hf.select_rows, hf.merge_caches = sel, merge       # what the engine calls, for this mode
                out[mode], dt = run(judge, items, Path(tmp)/f'{mode}-{rep}')
                best[mode] = min(best.get(mode, math.inf), dt)
        hf.select_rows, hf.merge_caches = modes['buffers']
    a, b = out['copies'], out['buffers']
    same = sum(x == y for x, y in zip(a, b)) if len(a) == len(b) else 0
    res = dict(bench='kv_copies', backend='hf', model='smollm2 (SmolLM2-135M-Instruct, fp32, CPU)', items=len(items),
               answers=len(b), same_answers=same, repeats=max(1, args.repeats),
               seconds_copies=round(best['copies'], 2), seconds_buffers=round(best['buffers'], 2),
               ratio=round(best['copies']/best['buffers'], 3), cpu=platform.processor() or platform.machine(),
               torch=torch.__version__, threads=torch.get_num_threads(), python=platform.python_version(),
               goal='quicker than the copies of transformers\' cache methods, every answer the same bit for bit')
    res['goal_met'] = bool(res['ratio'] > 1 and res['same_answers'] == res['answers'])
    print(json.dumps(res))


if __name__ == '__main__':
    main()

"""Greedy replies of several hundred tokens on the `hf` backend with the built-in `smollm2` judge: a row with no forced text
sends what followed its last tokens earlier in its prompt or reply as a draft (`checkeval.judges.forced.lookup_draft`,
`HFJudge._drafts`) and keeps what greedy decoding takes, against no such draft (`lookup_tokens=0`, the baseline: the
schema drafts only), run in the same process on the same requests.

The requests are the grid's longest replies: SEEval's explanations (free text, up to 500 tokens), SEAL's replies held to
its JSON schema (up to 200 tokens) and CheckEval's grouped answers, on the `--items` first summaries of SummEval (sample:
whole documents, seed 0), coherence; each mode with a judge and a cache of its own, alternating, best of `--repeats`.
Reported: seconds and decoding forward passes of both modes, their ratios, and how many replies are the same. A drafted
token is kept only where greedy decoding takes it, but its logits come from a pass of several tokens, whose float
rounding differs from a pass of one: where two tokens are nearly tied a reply may go another way, so the count of
replies that differ is reported, not required to be zero. The last line is one JSON object.

    python bench/lookup_drafts.py [--items 2] [--repeats 1]
"""
from __future__ import annotations
import json, math, os, sys, tempfile, time, warnings
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

METHODS = [('seeval', {}), ('seal', {'max_tokens': 200}), ('checkeval', {})]


def run(judge, items, root):
    "Replies (method, item, question, reply, value) of the methods, the seconds they took, and the decoding forward passes."
    from checkeval.runs import evaluate
    model, calls = judge._loaded()[0], [0]
    step = judge._step
    def counted(*a, **kw):
        calls[0] += 1
        return step(*a, **kw)
    judge._step, answers, t0 = counted, [], time.perf_counter()
    for method, options in METHODS:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            _, res = evaluate(method, 'summeval', judge, items=items, dimensions=['coherence'], seed=0, root=root/method, options=options)
        answers += [(method, a.item_id, a.question_id, a.raw_text, a.value) for a in res.answers]
    return answers, time.perf_counter() - t0, calls[0]


def main(argv=None):
    from _smollm2 import bench_args, smollm2_facts, summeval_sample
    args = bench_args(__doc__, argv, items=2)
    import checkeval.judges.hf as hf
    from checkeval.judges import get_judge
    items = summeval_sample(args.items)
    modes = {'schema_drafts_only': 0, 'lookup_drafts': None}      # None: the judge's default
    best, out, calls = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix='lookup-bench-') as tmp:
        hf.prefix_store_dir = lambda: Path(tmp)/'prefixes'
        for rep in range(max(1, args.repeats)):
            for mode, k in modes.items():
                kw = {} if k is None else {'lookup_tokens': k}
                judge = get_judge('smollm2', cache=Path(tmp)/f'{mode}-{rep}.sqlite', progress=False, prefix_store=False, **kw)
                out[mode], dt, calls[mode] = run(judge, items, Path(tmp)/f'{mode}-{rep}')
                best[mode] = min(best.get(mode, math.inf), dt)
    a, b = out['schema_drafts_only'], out['lookup_drafts']
    same = sum(x == y for x, y in zip(a, b)) if len(a) == len(b) else 0
    res = dict(bench='lookup_drafts', **smollm2_facts(), items=len(items),
               replies=len(b), same_replies=same, replies_differ=len(b) - same,
               seconds_baseline=round(best['schema_drafts_only'], 2), seconds_lookup=round(best['lookup_drafts'], 2),
               ratio=round(best['schema_drafts_only']/best['lookup_drafts'], 3),
               decode_passes_baseline=calls['schema_drafts_only'], decode_passes_lookup=calls['lookup_drafts'],
               goal='fewer decoding passes and less time with lookup drafts')
    res['goal_met'] = bool(res['ratio'] > 1 and res['decode_passes_lookup'] < res['decode_passes_baseline'])
    print(json.dumps(res))


if __name__ == '__main__':
    main()

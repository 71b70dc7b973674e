"""Attention with grouped key heads on the `hf` backend, the built-in `smollm2` judge on a CPU: `sdpa_gqa`
(`checkeval.judges.attention`: PyTorch's SDPA kernel handed each of the 3 key/value heads once) against transformers' own
SDPA attention, the baseline, which copies each key/value head for the 3 query heads that read it (`repeat_kv`) on every
layer of every forward that reads more than one new token per row. Both run in the same process on the same requests.

The requests are CheckEval's on the `--items` first summaries of SummEval (sample: whole documents, seed 0), coherence, in
its two forms: one question per request with the reply held to yes/no (P(yes): prefills only) and the grouped questions with
replies held to a JSON schema (prefills and decoding). Each mode has a cache of its own; the modes alternate, best of
`--repeats`. Reported: seconds per mode, their ratio, and how many answers are the same (the kernel reads the same keys:
every answer should be). The last line is one JSON object.

    python bench/gqa_attention.py [--items 2] [--repeats 1]
"""
from __future__ import annotations
import json, math, os, platform, sys, tempfile
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None):
    from _smollm2 import bench_args, checkeval_forms, smollm2_facts, summeval_sample
    args = bench_args(__doc__, argv, items=2)
    from checkeval.judges import get_judge
    items = summeval_sample(args.items)
    best, out = {}, {}
    with tempfile.TemporaryDirectory(prefix='gqa-bench-') as tmp:
        for rep in range(max(1, args.repeats)):
            for mode in ('sdpa', 'sdpa_gqa'):
                judge = get_judge('smollm2', cache=Path(tmp)/f'{mode}-{rep}.sqlite', progress=False)
                judge._loaded()[0].set_attn_implementation(mode)     # the one model of the process: set before each mode
                out[mode], dt = checkeval_forms(judge, items, Path(tmp)/f'{mode}-{rep}')
                best[mode] = min(best.get(mode, math.inf), dt)
    a, b = out['sdpa'], out['sdpa_gqa']
    same = sum(x[:5] == y[:5] and (x[5] is None) == (y[5] is None) and (x[5] is None or abs(x[5] - y[5]) < 1e-5) for x, y in zip(a, b))
    res = dict(bench='gqa_attention', **smollm2_facts(), items=len(items),
               answers=len(b), same_answers=same if len(a) == len(b) else 0,
               seconds_sdpa=round(best['sdpa'], 2), seconds_sdpa_gqa=round(best['sdpa_gqa'], 2),
               ratio=round(best['sdpa']/best['sdpa_gqa'], 2), cpu=platform.processor() or platform.machine(),
               goal='faster than transformers\' SDPA attention, every answer the same')
    res['goal_met'] = bool(res['ratio'] > 1 and res['same_answers'] == res['answers'])
    print(json.dumps(res))


if __name__ == '__main__':
    main()

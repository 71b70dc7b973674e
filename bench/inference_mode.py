"""The `hf` backend's grad mode, the built-in `smollm2` judge on a CPU: the model's passes under torch's inference mode
(what `checkeval.judges.hf` does) against `torch.no_grad`, the baseline (what it did before; while the baseline runs,
`torch.inference_mode` is replaced by `torch.no_grad` in this process). Both switch off autograd; inference mode also
keeps no version counts on the tensors, work around every one of the hundreds of small operations of a decoding step.
Both run in the same process on the same requests and must give the same numbers.

The requests are CheckEval's on the `--items` first summaries of SummEval (sample: whole documents, seed 0), coherence, in
its two forms: one question per request with the reply held to yes/no (P(yes): prefills only) and the grouped questions with
replies held to a JSON schema (prefills and decoding). Each mode has a cache of its own; the modes alternate, best of
`--repeats`. Reported: seconds per mode, the ratio, and how many answers are the same bit for bit (reply text,
value and P(yes) equal: every answer should be). The last line is one JSON object.

    python bench/inference_mode.py [--items 2] [--repeats 2]
"""
from __future__ import annotations
import argparse, json, math, os, platform, sys, tempfile
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
os.environ.setdefault('CHECKEVAL_PROGRESS', '0')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from gqa_attention import run        # the same workload: CheckEval's two forms, answers and seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--items', type=int, default=2)
    ap.add_argument('--repeats', type=int, default=2)
    args = ap.parse_args(argv)
    import torch
    from checkeval.data import load_benchmark
    from checkeval.judges import get_judge
    from checkeval.judges.builtin import ModelFileError
    from checkeval.runs import select_items
    torch.set_num_threads(1)
    items = select_items(load_benchmark('summeval'), args.items, 'groups', 0)
    modes = {'no_grad': torch.no_grad, 'inference_mode': torch.inference_mode}
    best, out = {}, {}
    with tempfile.TemporaryDirectory(prefix='inference-mode-bench-') as tmp:
        for rep in range(max(1, args.repeats)):
            for mode, ctx in modes.items():
                try: judge = get_judge('smollm2', cache=Path(tmp)/f'{mode}-{rep}.sqlite', progress=False)
                except ModelFileError as e: raise SystemExit(f'smollm2 is not installed: {e}')
                torch.inference_mode = ctx            # the context the engine's forward passes run in, for this mode
                out[mode], dt = run(judge, items, Path(tmp)/f'{mode}-{rep}')
                best[mode] = min(best.get(mode, math.inf), dt)
        torch.inference_mode = modes['inference_mode']
    a, b = out['no_grad'], out['inference_mode']
    same = sum(x == y for x, y in zip(a, b)) if len(a) == len(b) else 0
    res = dict(bench='inference_mode', backend='hf', model='smollm2 (SmolLM2-135M-Instruct, fp32, CPU)', items=len(items),
               answers=len(b), same_answers=same, repeats=max(1, args.repeats),
               seconds_no_grad=round(best['no_grad'], 2), seconds_inference_mode=round(best['inference_mode'], 2),
               ratio=round(best['no_grad']/best['inference_mode'], 3), cpu=platform.processor() or platform.machine(),
               torch=torch.__version__, threads=torch.get_num_threads(), python=platform.python_version(),
               goal='quicker than torch.no_grad, every answer the same bit for bit')
    res['goal_met'] = bool(res['ratio'] > 1 and res['same_answers'] == res['answers'])
    print(json.dumps(res))


if __name__ == '__main__':
    main()

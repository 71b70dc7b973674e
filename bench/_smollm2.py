"""What the benchmarks that run the built-in `smollm2` judge on SummEval share: the model checked installed, torch on one core,
and the sample of summaries they read."""
from __future__ import annotations


def summeval_sample(n:int):
    "SummEval's first `n` summaries (sample: whole documents, seed 0), once `smollm2` is known to be installed; torch on one thread."
    import torch
    from checkeval.data import load_benchmark
    from checkeval.judges.builtin import ModelFileError, smollm2_path
    from checkeval.runs import select_items
    try: smollm2_path()
    except ModelFileError as e: raise SystemExit(f'smollm2 is not installed: {e}')
    torch.set_num_threads(1)
    return select_items(load_benchmark('summeval'), n, 'groups', 0)
